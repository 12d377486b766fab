#!/usr/bin/env bash
# Run here (not on the GPU machine) after ../shared/device/fetch-debs.sh: adds
# to .device/debs the Debian packages that cpp-httplib's pkg-config file
# requires and the shared bundle leaves out (OpenSSL and zlib headers, Brotli),
# so that the GPU build finds cpp-httplib the same way as this machine, and
# utf8proc (the tokenizers' Unicode normalization), which its name filter
# leaves out too.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -d .device/debs ] || { echo "run ../shared/device/fetch-debs.sh first" >&2; exit 1; }
(cd .device/debs && apt-get download libssl-dev zlib1g-dev libbrotli-dev libbrotli1 \
    libutf8proc-dev libutf8proc2 libpcre2-dev libpcre2-8-0 >/dev/null 2>&1)
echo "added $(ls .device/debs | grep -cE '^(libssl-dev|zlib1g-dev|libbrotli|libutf8proc|libpcre2)') packages to .device/debs"
