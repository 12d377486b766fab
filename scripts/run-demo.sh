#!/usr/bin/env bash
# Starts tandem-server on the embedded model, waits until it answers, streams
# one completion with tandem-cli, then keeps serving until Ctrl-C.
set -euo pipefail
build="${1:-build}"
listen="${TANDEM_LISTEN:-127.0.0.1:50051}"
"$build/bin/tandem-server" --listen="$listen" "${@:2}" &
server=$!
# The server stops with the script, however it ends (Ctrl-C, or a failure below).
stop_server() { kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
trap stop_server EXIT
trap 'exit 130' INT TERM
ready=0
for _ in $(seq 1 120); do
  "$build/bin/tandem-cli" health --server="$listen" --timeout=1s >/dev/null 2>&1 && { ready=1; break; }
  kill -0 $server 2>/dev/null || { echo "tandem-server exited" >&2; exit 1; }
  sleep 0.5
done
[ "$ready" = 1 ] || { echo "tandem-server did not answer on $listen within 60 s" >&2; exit 1; }
echo "--- tandem-cli generate \"The meaning of life is\" (random weights: expect gibberish)"
"$build/bin/tandem-cli" generate "The meaning of life is" --server="$listen" --max_tokens=32
echo "--- tandem-server is serving gRPC on $listen; try: $build/bin/tandem-cli generate \"Hello\" --server=$listen"
echo "--- the chat page: http://localhost:9400/ ; the OpenAI API: http://localhost:9400/v1 (e.g. curl localhost:9400/v1/models)"
echo "--- Ctrl-C stops it"
wait $server
