# Call B: the attention kernel using as many of its cluster's splits as the context asks
# (split_positions) and the final LayerNorm folded into the LM head at one row: their tests,
# a mutant, and the A/B (threshold at prompts 64 and 700; nolmfold: the two kernels).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
( source .device/prelude.sh > /dev/null 2>&1
  cmake -S . -B build-gpu $DEVICE_CMAKE_ARGS > $OUT/cmake.log 2>&1
  cmake --build build-gpu -j16 --target tandem-bench decode_attention_test fused_linear_test decode_kernel_test > $OUT/build.log 2>&1 || grep -A8 -m5 error $OUT/build.log
  echo "== built t=$(( $(date +%s) - t0 ))"
  ctest --test-dir build-gpu -R "DecodeAttentionTest|FusedLinearTest|DecodeKernelTest|WaitPlacement" --output-on-failure --timeout 250 > $OUT/tests.log 2>&1; echo "tests rc=$?"
  grep -E "Test +#|tests passed|tests failed" $OUT/tests.log | cut -c1-160 | head -40 )
echo "== t=$(( $(date +%s) - t0 ))"
for p in 64 700; do
  echo "== prompt $p"
  v="none attn-s1 attn-p64 attn-p128 attn-p256"; [ $p = 64 ] && v="$v nolmfold"
  AB_FLAGS=--prompt_tokens=$p BUILD_TARGET=tandem-bench AB_VARIANTS="$v" AB_ARCHES=gpt2 AB_BATCHES=1,2 AB_ROUNDS=2 \
    timeout 150 bash scripts/gpu-session.sh ab | grep -v "build ok"
  cp $OUT/ab.log $OUT/ab-last-$p.log
done
echo "== t=$(( $(date +%s) - t0 ))"
# Mutant: each slice sized by the grid's splits, not the ones in use (DecodeAttentionTest must fail).
f=core/model/cuda/decode_attention_kernel.cu
python3 - "$f" <<'PY'
import sys
f = sys.argv[1]; s = open(f).read()
old = "const int slice = (length + splits - 1) >> (__ffs(splits) - 1);"
assert old in s
open(f, "w").write(s.replace(old, "const int slice = (length + gridDim.z - 1) >> (__ffs(gridDim.z) - 1);"))
PY
( source .device/prelude.sh > /dev/null 2>&1
  cmake --build build-gpu -j16 --target decode_attention_test > $OUT/mutant-build.log 2>&1 || tail -5 $OUT/mutant-build.log
  timeout 150 build-gpu/bin/decode_attention_test --gtest_filter='*MatchesFloat64*' > $OUT/mutant.log 2>&1; echo "mutant rc=$? (must be non-zero)"
  grep -c "Failure" $OUT/mutant.log; grep -m3 "within" $OUT/mutant.log | cut -c1-200 )
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
