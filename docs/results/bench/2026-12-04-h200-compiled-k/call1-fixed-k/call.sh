# Call 1: last session's prepared call, as it was committed (97b7a3b).
bash docs/results/bench/2026-12-04-h200-chain-costs/next-call.sh
