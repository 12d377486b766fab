# Call 3: the tree with one hardware queue (UseOneCudaHardwareQueue) and no middle event in
# decode-only steps: the GPU suite, the bench at N = 1, 64, 256, mixed steps with one queue
# and with the driver's 8 (what the side stream's overlap does), then 306864c (.prev) in the
# same call. carry [".device", ".tp", ".prev"].
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=120 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BENCH_BATCHES=1,64,256 timeout 60 bash scripts/gpu-session.sh bench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
MIXED_FORWARDS=true MIXED_SPECS=8x256,64x256,64x1000 timeout 50 bash scripts/gpu-session.sh mixed \
  | grep -v "build ok" | sed 's/^/queues 1: /'
mv $OUT/mixed.txt $OUT/mixed-queues1.txt
CUDA_DEVICE_MAX_CONNECTIONS=8 MIXED_FORWARDS=true MIXED_SPECS=8x256,64x256,64x1000 timeout 50 \
  bash scripts/gpu-session.sh mixed | grep -v "build ok" | sed 's/^/queues 8: /'
mv $OUT/mixed.txt $OUT/mixed-queues8.txt
echo "== t=$(( $(date +%s) - t0 ))"
BENCH_BATCHES=1,64,256 timeout 170 bash scripts/gpu-session.sh prevbench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
