#!/usr/bin/env bash
# Every test: type check, build, the TypeScript suites (node's test runner) and the Python suites.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-system.sh || exit 1
[ -d node_modules ] || npm install --no-audit --no-fund || exit 1
npx tsc -p . --noEmit || exit 1
node scripts/build.mjs || exit 1
log=$(mktemp -d)
node --import tsx --test --test-concurrency=1 test/*.test.ts 2>&1 | tee "$log/node.txt"
node_rc=${PIPESTATUS[0]}
py=/usr/bin/python3; [ -x "$py" ] || py=python3
"$py" -m unittest discover -s test/python 2>&1 | tee "$log/py.txt"
py_rc=${PIPESTATUS[0]}
pass=$(grep -E '^# pass [0-9]+' "$log/node.txt" | awk '{print $3}'); fail=$(grep -E '^# fail [0-9]+' "$log/node.txt" | awk '{print $3}')
pyran=$(grep -E '^Ran [0-9]+ test' "$log/py.txt" | awk '{print $2}')
pyfail=$(grep -oE '(failures|errors)=[0-9]+' "$log/py.txt" | awk -F= '{s+=$2} END {print s+0}')
total_fail=$(( ${fail:-0} + ${pyfail:-0} ))
echo "tests: $(( ${pass:-0} + ${pyran:-0} - ${pyfail:-0} )) passed, ${total_fail} failed"
[ "$node_rc" = 0 ] && [ "$py_rc" = 0 ]
