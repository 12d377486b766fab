# Call 5: the committed code (7f78bfa's, comments aside): the whole GPU suite, then its bench at
# N = 1, 64, 256 (sync + graphs and double-buffered + graphs). carry [".device", ".tp"].
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=120 timeout 200 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 60 bash scripts/gpu-session.sh bench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
