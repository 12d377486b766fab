# Call 3: the row head's first M MiB persisting in L2 (TANDEM_EXPERIMENT=l2wM: M MiB set
# aside and an access policy window on the head's launch; experiments.diff), N=1 A/B; and
# whether Nsight Systems is on the machine (a per-kernel timeline of one step, if so).
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
BUILD_TARGET=tandem-bench AB_VARIANTS="none l2w8 l2w16 l2w24 l2w32" AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 \
  timeout 400 bash scripts/gpu-session.sh ab | grep -v "build ok"
grep -h "l2w:" $OUT/ab.log
echo "== t=$(( $(date +%s) - t0 ))"
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${NSYS:-none}; ncu: $(command -v ncu)"
ls /usr/local/cuda/ | head -30
if [ -n "$NSYS" ]; then
  TANDEM_PROFILE_DECODE_STEP=100 timeout 120 $NSYS profile --capture-range=cudaProfilerApi \
      --cuda-graph-trace=node -o $OUT/n1 -f true build-gpu/bin/tandem-bench --arch=gpt2 --size=gpt2 \
      --batch=1 --modes=double_buffered_graphs --new_tokens=128 > $OUT/nsys.log 2>&1
  timeout 60 $NSYS stats --report cuda_gpu_trace --format csv --output $OUT/n1 $OUT/n1.nsys-rep >> $OUT/nsys.log 2>&1
  tail -5 $OUT/nsys.log; ls $OUT
fi
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz --exclude='*.ncu-rep' --exclude='*.nsys-rep' --exclude='*.sqlite' . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
