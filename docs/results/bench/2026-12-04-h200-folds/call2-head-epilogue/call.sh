# Call 2: the one-row head does the step's end (the slot-state advance and the publish to
# mapped host memory) in its last block (uncommitted tree on 7f78bfa): the whole GPU suite,
# then the bench at N = 1, 64, 256 against 7f78bfa (.prev: its graphs publish with a kernel).
# carry [".device", ".tp", ".prev"], .prev = git archive 7f78bfa without docs/.
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=120 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 240 bash scripts/gpu-session.sh bench prevbench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
