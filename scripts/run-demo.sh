#!/usr/bin/env bash
# Starts tandem-server on the embedded model, waits until it answers, streams
# one completion with tandem-cli, then keeps serving until Ctrl-C.
set -euo pipefail
build="${1:-build}"
listen="${TANDEM_LISTEN:-127.0.0.1:50051}"
"$build/bin/tandem-server" --listen="$listen" "${@:2}" &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server' INT TERM
for _ in $(seq 1 120); do
  "$build/bin/tandem-cli" info --server="$listen" --timeout=1s >/dev/null 2>&1 && break
  kill -0 $server 2>/dev/null || { echo "tandem-server exited" >&2; exit 1; }
  sleep 0.5
done
echo "--- tandem-cli generate \"The meaning of life is\" (random weights: expect gibberish)"
"$build/bin/tandem-cli" generate "The meaning of life is" --server="$listen" --max_tokens=32
echo "--- tandem-server is serving gRPC on $listen; try: $build/bin/tandem-cli generate \"Hello\" --server=$listen"
echo "--- the chat page: http://localhost:9400/ ; the OpenAI API: http://localhost:9400/v1 (e.g. curl localhost:9400/v1/models)"
echo "--- Ctrl-C stops it"
wait $server
