#!/usr/bin/env bash
# Installs every build and test dependency of ctxdb from Debian's archive.
# Idempotent: installs only what is missing, so a second run does nothing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libsqlite3-dev sqlite3 libsqlitecpp-dev libsimdjson-dev libzstd-dev
  doctest-dev libssl-dev libpcre2-dev
  python3 python3-pytest
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all dependencies present"
fi
