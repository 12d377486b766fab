# Prepared for the next session (carry [".device", ".tp"]), from the repository root:
#
#   bash docs/results/bench/2026-12-04-h200-compiled-k/next-call.sh
#
# next-experiments.diff (temporary switch TANDEM_EXPERIMENT=earlynew): the one-row decode
# attention (the preloaded kernels, no rotation: GPT-2 at N=1) loads the new position's key
# and value from qkv right after the wait, beside the query. Now the block whose slice holds
# the new position reads them in its masked pass, after the query has been used, which can
# be a second L2 round trip after the wait on the critical path. Locally ptxas gives the
# kernel 90 registers against 89. A first look in this session's call 6 (no tests): N=1
# 157.0 / 157.4 us against 158.5 / 158.4 without it. The call: the build, the attention
# and engine tests with the switch on, the attention kernel's SASS with and without it (its
# loads before and after the wait, ACQBULK), then the N=1 A/B, 3 rounds.
set -u
here=docs/results/bench/2026-12-04-h200-compiled-k
tar -xJf .tp/third_party.tar.xz
git apply "$here/next-experiments.diff" || exit 1
t0=$(date +%s)
{
timeout 330 bash scripts/gpu-session.sh 2>&1 | grep -v "build ok"
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
( source .device/prelude.sh
  TANDEM_EXPERIMENT=earlynew ctest --test-dir build-gpu -L gpu --output-on-failure \
      -R "DecodeAttention|DecodeKernel|EngineModes" --timeout 120 > "$OUT/gpu-tests-switches.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*" "$OUT/gpu-tests-switches.log" | tail -12
  lib=$(find build-gpu -name "libtandem_model*" | head -1)
  cuobjdump -sass "$lib" > "$OUT/model.sass" 2>&1
  # SplitDecodeAttentionKernel<bf16, 64, 256, preload, no rotation, 4, 1, no speculation,
  # early>: its global loads before and after the wait (ACQBULK), and the SASS itself.
  python3 - "$OUT/model.sass" "$OUT" <<'PY'
import sys
sys.path.insert(0, "tests/gpu")
from wait_placement_test import functions
sass, out = open(sys.argv[1]).read(), sys.argv[2]
for name, arch, body in functions(sass):
    for early in ("0", "1"):
        if "SplitDecodeAttentionKernelI13__nv_bfloat16Li64ELi256ELb1ELb0ELi4ELi1ELb0ELb" + early + "E" in name:
            wait = next(i for i, line in enumerate(body) if "ACQBULK" in line)
            loads = [i for i, line in enumerate(body) if "LDG" in line]
            print(f"early={early}: {len(body)} instructions, wait at {wait}, LDG before "
                  f"{sum(i < wait for i in loads)}, the first 6 after at "
                  f"{[i for i in loads if i > wait][:6]}")
            open(f"{out}/attention-sass-early{early}.txt", "w").write("\n".join(body) + "\n")
PY
  rm -f "$OUT/model.sass" )
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench AB_VARIANTS="none earlynew" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=3 \
  timeout 150 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
