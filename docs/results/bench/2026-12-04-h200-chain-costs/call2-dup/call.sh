# Device call (carry [".device", ".tp"]), from the repository root: the script last session
# prepared, run as it is, with the argument dup.
bash docs/results/bench/2026-12-04-h200-idle-streams/next-call.sh dup
