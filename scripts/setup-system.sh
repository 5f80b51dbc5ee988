#!/usr/bin/env bash
# System packages the tests need, from Debian: debugpy (compare mode), PyTorch + numpy + OpenBLAS
# (training), Chromium and Kerberos headers (end-to-end tests in code-server). Installed only when missing.
set -euo pipefail
need=()
for p in python3-debugpy python3-torch python3-numpy libopenblas0-pthread chromium libkrb5-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "missing system packages: ${need[*]} (install them with apt-get as root)" >&2
  exit 1
fi
echo "installing ${need[*]}" >&2
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
