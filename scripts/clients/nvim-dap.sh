#!/usr/bin/env bash
# The adapter driven by another DAP client: Neovim's nvim-dap, headless (nvim-dap.lua says what
# it does). Not part of the tests: nvim-dap is GPL-3.0 and is not shipped or vendored here.
#   scripts/clients/nvim-dap.sh NVIM_DAP_FOLDER
# needs nvim (0.7 runs nvim-dap 0.6.0; Debian 12's neovim package) and a built dist/adapter.js.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
plugin=${1:?the folder of nvim-dap (e.g. a checkout of its tag 0.6.0)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/prog.py" <<'PY'
def scale(v):
    w = v * 2
    return w


def total(values):
    acc = 0
    for v in values:
        acc += scale(v)
    return acc


result = total([1, 2, 3])
print("result:", result)
PY
NDBG_CHECK_PROGRAM="$work/prog.py" NDBG_CHECK_ADAPTER="$root/dist/adapter.js" \
  nvim --headless -u NONE -i NONE --cmd "set rtp+=$plugin" -c "luafile $here/nvim-dap.lua"
