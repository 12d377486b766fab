# Prepared for the next session (not run: this session's device time was spent): the whole
# GPU suite on 582cb02 and later, and its bench at N = 1, 64, 256 against fdd9cf3. Expected:
# N=1 ~167.5, N=64 ~441, N=256 ~926 us (the speculative kernels' PTX equals fdd9cf3's).
# carry [".device", ".tp", ".prev"], .prev = git archive fdd9cf3 without docs/:
#   rm -rf .prev && mkdir .prev && git archive fdd9cf3 | tar -x -C .prev && rm -rf .prev/docs
set -u
tar -xJf .tp/third_party.tar.xz
t0=$(date +%s)
TEST_TIMEOUT=300 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 240 bash scripts/gpu-session.sh bench prevbench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
