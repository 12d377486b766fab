# Prepared for the next session (not run: this session's device time was spent).
#
#   bash next-call.sh          the whole GPU suite on this tree and its bench at N = 1, 64, 256
#                              against fdd9cf3 (expected: N=1 ~167.5, N=64 ~441, N=256 ~926 us;
#                              the speculative kernels' PTX equals fdd9cf3's)
#   bash next-call.sh publish  the same with prepared-publish-in-graph.diff applied, against
#                              this tree: the decode graphs publish their own rows (one graph
#                              per parity, PublishRows their last node) instead of a launch
#                              after the graph. Bound: call 5's `nopub`, ~4 us at N=1.
#                              EngineModesTest checks every mode's tokens against synchronous
#                              eager, so a wrong parity or offset fails it.
#
# carry [".device", ".tp", ".prev"]; .prev = fdd9cf3 (first form) or this tree (publish):
#   rm -rf .prev && mkdir .prev && git archive <rev> | tar -x -C .prev && rm -rf .prev/docs
# Run from the repository root.
set -u
here=docs/results/bench/2026-12-04-h200-staged-row
tar -xJf .tp/third_party.tar.xz
if [ "${1:-}" = publish ]; then git apply "$here/prepared-publish-in-graph.diff" || exit 1; fi
t0=$(date +%s)
TEST_TIMEOUT=120 timeout 330 bash scripts/gpu-session.sh test
echo "== t=$(( $(date +%s) - t0 ))"
BUILD_TARGET=tandem-bench BENCH_BATCHES=1,64,256 timeout 240 bash scripts/gpu-session.sh bench prevbench | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz . ; ls
