#!/usr/bin/env bash
# The Debian packages the tests use, installed only when missing; says what it installs and why.
# As root (CI) it installs them, waiting for another apt or dpkg that holds the package manager's
# lock (at most NDBG_APT_WAIT seconds, default 300). Not root: it installs nothing, says per
# missing package what it is for and how to install it, and exits 0; the tests that need a
# missing package then fail saying so, except the training tests, which skip without PyTorch.
set -euo pipefail

# One group a line: packages | what needs them.
GROUPS_=(
  "python3-debugpy|compare mode runs the real program under debugpy (test/debugpy, test/adapter-compare)"
  "python3-numpy|the tests write tiny GGUF models with numpy (training/gguf.py)"
  "python3-torch libopenblas0-pthread|training tests (PyTorch; OpenBLAS makes its CPU matrix products fast); they skip without it"
  "cmake g++ git|the model server tests build llama.cpp's server from node-llama-cpp's source (scripts/llama-server.sh, test/model-server)"
  "chromium libkrb5-dev|end-to-end tests: headless Chromium drives a real VS Code (code-server), whose native modules build against the Kerberos headers"
)
LOCKS=(/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock)
WAIT=${NDBG_APT_WAIT:-300}

missing=()
declare -A why=()
for g in "${GROUPS_[@]}"; do
  for p in ${g%%|*}; do
    dpkg -s "$p" >/dev/null 2>&1 && continue
    missing+=("$p")
    why[$p]=${g#*|}
  done
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  for p in "${missing[@]}"; do
    echo "setup-system: skipped $p (not root): ${why[$p]}; install it with: sudo apt-get install $p" >&2
  done
  exit 0
fi

# Who holds a package manager lock now (empty: nobody). dpkg and apt take fcntl locks, which lslocks lists.
holder() {
  local l
  for l in "${LOCKS[@]}"; do
    lslocks -n -r -o PID,COMMAND,PATH 2>/dev/null | awk -v f="$l" '$3 == f { print $2 " (pid " $1 ") holds " f; exit }' | grep . && return
  done
  return 0
}

wait_for_lock() {
  local start=$SECONDS said=""
  while h=$(holder) && [ -n "$h" ]; do
    if [ $((SECONDS - start)) -ge "$WAIT" ]; then
      echo "setup-system: the package manager is still busy after ${WAIT} s ($h); run this again when it is done (NDBG_APT_WAIT sets the wait)" >&2
      exit 1
    fi
    [ -n "$said" ] || { echo "setup-system: waiting for the package manager: $h (at most ${WAIT} s)" >&2; said=1; }
    sleep 2
  done
}

for g in "${GROUPS_[@]}"; do
  want=()
  for p in ${g%%|*}; do [[ " ${missing[*]} " == *" $p "* ]] && want+=("$p"); done
  [ ${#want[@]} -eq 0 ] || echo "setup-system: installing ${want[*]}: ${g#*|}" >&2
done
# apt waits for the dpkg lock itself as well (Lock::Timeout), in case another takes it in between.
apt_get() { wait_for_lock; DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$WAIT" "$@"; }
apt_get update -qq >/dev/null
apt_get install -y -qq --no-install-recommends "${missing[@]}" || { echo "setup-system: apt-get could not install ${missing[*]}" >&2; exit 1; }
