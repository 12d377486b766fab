# Call 5: call 4's gRPC figure (82 % of in-process) against its 92.6 % of 2026-12-03: the
# openai step twice more, with one hardware queue (the tree's default) and with the driver's 8
# (CUDA_DEVICE_MAX_CONNECTIONS=8 in the environment wins), alternating. carry [".device", ".tp"].
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
for round in 1 2; do
  for q in default 8; do
    if [ $q = 8 ]; then export CUDA_DEVICE_MAX_CONNECTIONS=8; else unset CUDA_DEVICE_MAX_CONNECTIONS; fi
    BUILD_TARGET= timeout 200 bash scripts/gpu-session.sh openai | grep -E "^##|^requests|^gpt2" \
      | grep -v "1 at a time" | sed "s/^/queues $q round $round: /"
    mv $OUT/openai.txt $OUT/openai-queues$q-round$round.txt
    mv $OUT/openai-server.log $OUT/openai-server-queues$q-round$round.log
    echo "== t=$(( $(date +%s) - t0 ))"
  done
done
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
