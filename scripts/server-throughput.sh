#!/usr/bin/env bash
# Cases per second of `ndbg eval steps --concurrency N` against llama.cpp's server started with
# N slots (-np N, a 2048-token context each), for each N given: the README's table.
#   scripts/server-throughput.sh [--limit P] [--threads T] [N ...]   (default: --limit 16, T = cores, N = 1 2 4 8)
set -euo pipefail
cd "$(dirname "$0")/.."
limit=16
threads=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --limit) limit=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- 1 2 4 8
bin=$(scripts/llama-server.sh)
model=$(ls models/*.gguf | head -1)
data=test/fixtures/programs/documented.jsonl
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
echo "| N | cases | seconds | cases/s |"
echo "|---|---|---|---|"
for n in "$@"; do
  "$bin" -m "$model" --host 127.0.0.1 --port "$port" -c $((2048 * n)) -np "$n" --no-kv-unified -t "$threads" --no-webui >/dev/null 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null || true' EXIT
  for _ in $(seq 100); do node -e "fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" "http://127.0.0.1:$port/health" && break; sleep 0.2; done
  json=$(node dist/ndbg.js eval steps --data "$data" --limit "$limit" --no-compute --model "http://127.0.0.1:$port/v1" --concurrency "$n" --json 2>/dev/null)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  node -e 'const r=JSON.parse(process.argv[1]); const s=r.time.totalMs/1000; console.log(`| ${process.argv[2]} | ${r.overall.count} | ${s.toFixed(1)} | ${(r.overall.count/s).toFixed(1)} |`)' "$json" "$n"
done
