# Call 6, with the session's last ~270 device seconds: a first look at next-call.sh's A/B
# (next-experiments.diff), tandem-bench only: no tests, no SASS, two rounds. next-call.sh
# stays the full version for the next session.
set -u
tar -xJf .tp/third_party.tar.xz
git apply docs/results/bench/2026-12-04-h200-compiled-k/call6-next-preview/experiments.diff || exit 1
t0=$(date +%s)
{
BUILD_TARGET=tandem-bench AB_VARIANTS="none earlynew head4" AB_ARCHES=gpt2 AB_BATCHES=1 \
  AB_ROUNDS=2 timeout 230 bash scripts/gpu-session.sh ab 2>&1 | grep -v "build ok"
echo "== t=$(( $(date +%s) - t0 ))"
} | tee "$OUT/output.txt"
