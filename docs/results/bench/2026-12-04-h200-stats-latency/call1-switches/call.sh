# Call 1 (carry [".device", ".tp"]), from the repository root, with experiments.diff applied:
# the build, the attention and engine tests under earlynew, the earlynew attention's SASS,
# the one-row kernels' tests under every other switch (only their bit-equality to the
# two-row batch may fail), then the N=1 A/B of each switch, two rounds.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
{
timeout 330 bash scripts/gpu-session.sh 2>&1 | grep -v "build ok"
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
( source .device/prelude.sh
  TANDEM_EXPERIMENT=earlynew ctest --test-dir build-gpu -L gpu --output-on-failure \
      -R "DecodeAttention|DecodeKernel|EngineModes" --timeout 120 > "$OUT/gpu-tests-earlynew.log" 2>&1
  echo "earlynew:"; grep -E "tests passed|Failed|\*\*\*" "$OUT/gpu-tests-earlynew.log" | tail -12
  TANDEM_EXPERIMENT=earlynew,onepass,fastgelu,headpf ctest --test-dir build-gpu -L gpu \
      --output-on-failure -R "FusedLinear|DecodeKernel|EngineModes" --timeout 120 \
      > "$OUT/gpu-tests-all.log" 2>&1
  echo "all:"; grep -E "tests passed|Failed|\*\*\*" "$OUT/gpu-tests-all.log" | tail -12
  grep -E "Failure|Expected|Which is|vs a two-row|RelativeError|tolerance" "$OUT/gpu-tests-all.log" \
      | sort | uniq -c | sort -rn | head -20
  lib=$(find build-gpu -name "libtandem_model*" | head -1)
  cuobjdump -sass "$lib" > "$OUT/model.sass" 2>&1
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
BUILD_TARGET=tandem-bench AB_VARIANTS="none earlynew tree onepass fastgelu headpf earlynew,onepass,fastgelu,headpf" \
  AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 timeout 200 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
