#!/usr/bin/env bash
# Checks the layering the build promises, on what was built and written:
#   1. the given test binaries (engine, text, checkpoint) load no LibTorch;
#   2. no file of core/engine/, core/base/, core/checkpoint/, server/ or
#      client/ names a model family (the families live in core/model/ and
#      core/text/).
# Usage: check_layers.sh SOURCE_DIR BINARY...
set -u
src="$1"
shift
failed=0
for bin in "$@"; do
  if [ ! -x "$bin" ]; then
    echo "FAIL: $bin is not a built binary"
    failed=1
    continue
  fi
  torch=$(ldd "$bin" | grep -Ei 'libtorch|libc10|libcaffe2' || true)
  if [ -n "$torch" ]; then
    echo "FAIL: $(basename "$bin") loads LibTorch:"
    echo "$torch"
    failed=1
  else
    echo "ok: $(basename "$bin") loads no LibTorch ($(ldd "$bin" | wc -l) libraries)"
  fi
done
families='gpt-?2|llama|qwen|mistral|gemma'
hits=$(grep -rniE "$families" "$src/core/engine" "$src/core/base" "$src/core/checkpoint" \
         "$src/server" "$src/client" --include='*.cc' --include='*.h' || true)
if [ -n "$hits" ]; then
  echo "FAIL: a model family is named outside core/model/ and core/text/:"
  echo "$hits"
  failed=1
else
  echo "ok: no model family named in core/engine, core/base, core/checkpoint, server, client"
fi
exit "$failed"
