#!/usr/bin/env bash
# The long soak: tests/e2e/soak.test.js with more requests (default 10000)
# against a tiny model on this machine's CPU. Prints the outcome counts,
# the time, RSS and open descriptors before and after.
#   scripts/soak.sh [REQUESTS] [CONCURRENCY]    (after make test, which installs the
#                                               test clients into tests/e2e/node_modules)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ -d "$root/tests/e2e/node_modules" ] ||
  { echo "tests/e2e/node_modules is missing: run scripts/install-deps.sh --tests (or make test)" >&2; exit 1; }
cd "$root/tests/e2e"
TANDEM_BIN_DIR="${TANDEM_BIN_DIR:-$root/build/bin}" SOAK_REQUESTS="${1:-10000}" \
  SOAK_CONCURRENCY="${2:-32}" node --test soak.test.js 2>&1 | grep -E 'soak:|^(not )?ok|expected|actual'
