# Prepared for the next session (carry [".device", ".tp"]), from the repository root:
#
#   bash docs/results/bench/2026-12-04-h200-idle-streams/next-call.sh server
#       through the server, one hardware queue (the default) against the driver's 8,
#       alternating, two rounds, with the openai step's warm-up; then the GPU suite
#   bash docs/results/bench/2026-12-04-h200-idle-streams/next-call.sh dup
#       where N=1's layer time is now: next-experiments.diff launches one of a layer's five
#       kernels twice in every layer (TANDEM_EXPERIMENT=dup-qkv|attn|out|fc|fc2, the copy's
#       output unused); the step's growth is that kernel's cost on the chain (as
#       ../2026-12-03-h200-n1-chain/ measured at 227 us a step)
set -u
here=docs/results/bench/2026-12-04-h200-idle-streams
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
case "${1:-}" in
  server)
    for round in 1 2; do
      for q in default 8; do
        if [ $q = 8 ]; then export CUDA_DEVICE_MAX_CONNECTIONS=8; else unset CUDA_DEVICE_MAX_CONNECTIONS; fi
        BUILD_TARGET= timeout 200 bash scripts/gpu-session.sh openai | grep -E "^##|^requests|^TTFT|^gpt2" \
          | sed "s/^/queues $q round $round: /"
        mv $OUT/openai.txt $OUT/openai-queues$q-round$round.txt
        mv $OUT/openai-server.log $OUT/openai-server-queues$q-round$round.log
        echo "== t=$(( $(date +%s) - t0 ))"
      done
    done
    unset CUDA_DEVICE_MAX_CONNECTIONS
    TEST_TIMEOUT=120 timeout 200 bash scripts/gpu-session.sh test
    echo "== t=$(( $(date +%s) - t0 ))" ;;
  dup)
    git apply "$here/next-experiments.diff" || exit 1
    BUILD_TARGET=tandem-bench AB_VARIANTS="none dup-qkv dup-attn dup-out dup-fc dup-fc2" \
      AB_ARCHES=gpt2 AB_BATCHES=1 AB_ROUNDS=2 timeout 450 bash scripts/gpu-session.sh ab \
      | grep -v "build ok"
    echo "== t=$(( $(date +%s) - t0 ))" ;;
  *) echo "usage: next-call.sh server|dup"; exit 2 ;;
esac
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
