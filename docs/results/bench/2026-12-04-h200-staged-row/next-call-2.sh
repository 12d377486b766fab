# Prepared for the next session (not run), after next-call.sh: the decode graphs publish their
# own rows (prepared-publish-in-graph.diff). With one-forward mixed steps a decode-only step's
# rows start at offset 0, so each (bucket, greedy) gets one graph per parity whose last node is
# PublishRows into that parity's pinned buffers; the separate launch after the graph goes.
# Bound: call 5's `nopub` saved ~4 us at N=1 (one round). EngineModesTest checks every mode's
# tokens against synchronous eager, so a wrong parity or offset fails it.
# carry [".device", ".tp", ".prev"], .prev = the committed tree (before the diff):
#   rm -rf .prev && mkdir .prev && git archive HEAD | tar -x -C .prev && rm -rf .prev/docs
set -u
tar -xJf .tp/third_party.tar.xz
git apply docs/results/bench/2026-12-04-h200-staged-row/prepared-publish-in-graph.diff || exit 1
t0=$(date +%s)
TEST_TIMEOUT=120 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 240 bash scripts/gpu-session.sh bench prevbench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
