#!/usr/bin/env bash
# Builds a small native-dialect GGUF from the test fixtures, for tests and demos:
# a tokenizer, then the tiny trained model (when PyTorch is present, about 10 s on one thread)
# or random weights (numpy only). Prints the path of the f16 GGUF; a q8_0 one lies beside it.
#   scripts/tiny-model.sh OUT_DIR [--random]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/tiny-model.sh OUT_DIR [--random]}
mode=${2:-}
mkdir -p "$out"
py=python3
torch_py=""
for p in python3 /usr/bin/python3; do
  if "$p" -c "import torch" >/dev/null 2>&1; then torch_py=$p; break; fi
done
"$py" -m training.tokenizer train --data test/fixtures/gguf/train.jsonl --vocab 1024 --out "$out/tokenizer.json" >&2
if [ "$mode" = "--random" ] || [ -z "$torch_py" ]; then
  [ -z "$torch_py" ] && [ "$mode" != "--random" ] && echo "PyTorch is absent: writing random weights" >&2
  for t in f16 q8_0; do
    "$py" -m training.gguf --random --config tiny --tokenizer "$out/tokenizer.json" --type "$t" --out "$out/tiny.$t.gguf" >&2
  done
else
  "$torch_py" -m training.train --data test/fixtures/gguf/train.jsonl --eval test/fixtures/gguf/heldout.jsonl \
    --config tiny --tokenizer "$out/tokenizer.json" --out "$out/run" --threads 1 > "$out/train.log"
  for t in f16 q8_0; do
    "$py" -m training.gguf --weights "$out/run" --type "$t" --out "$out/tiny.$t.gguf" >&2
  done
fi
echo "$out/tiny.f16.gguf"
