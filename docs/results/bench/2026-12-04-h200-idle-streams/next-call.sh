# Prepared for the next session: through the server, one hardware queue (the default) against
# the driver's 8, alternating, two rounds, with the openai step's warm-up; then the GPU suite
# on the tree. carry [".device", ".tp"]. From the repository root:
#
#   bash docs/results/bench/2026-12-04-h200-idle-streams/next-call.sh
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
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
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
