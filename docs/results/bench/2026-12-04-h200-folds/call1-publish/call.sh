# Call 1: the decode graphs publish their own rows (prepared-publish-in-graph.diff from
# ../2026-12-04-h200-staged-row/, applied here, not committed yet) against the committed
# tree ede7646 (.prev), bench at N = 1, 64, 256 in one call.
# carry [".device", ".tp", ".prev"], .prev = git archive ede7646 without docs/.
set -u
tar -xJf .tp/third_party.tar.xz
git apply docs/results/bench/2026-12-04-h200-staged-row/prepared-publish-in-graph.diff || exit 1
t0=$(date +%s)
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 400 bash scripts/gpu-session.sh bench prevbench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
