#!/usr/bin/env bash
# Builds llama.cpp's server (CPU) from the llama.cpp source node-llama-cpp ships, once per machine:
# the build is cached outside the clone, under ${NDBG_CACHE:-${XDG_CACHE_HOME:-~/.cache}/ndbg}/llama-server-<commit>,
# so that every clone and CI run on the machine reuses it. Prints the path of the llama-server binary.
# Concurrent runs wait for one build (flock). Needs git, cmake and a C++ compiler (scripts/setup-system.sh).
#   scripts/llama-server.sh [--jobs N]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=2
[ "${1:-}" = "--jobs" ] && jobs=${2:?--jobs needs a number}
bundle=node_modules/node-llama-cpp/llama/gitRelease.bundle
[ -f "$bundle" ] || { echo "llama-server: $bundle is missing (npm ci installs node-llama-cpp)" >&2; exit 1; }
for tool in git cmake c++; do
  command -v "$tool" >/dev/null || { echo "llama-server: $tool is missing (scripts/setup-system.sh installs it)" >&2; exit 1; }
done
commit=$(git bundle list-heads "$bundle" | awk '$2 == "HEAD" { print $1; exit }')
[ -n "$commit" ] || { echo "llama-server: $bundle names no HEAD" >&2; exit 1; }
cache=${NDBG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ndbg}
dir=$cache/llama-server-${commit:0:12}
bin=$dir/build/bin/llama-server
mkdir -p "$cache"
exec 9>"$dir.lock"
flock 9
if [ ! -x "$bin" ]; then
  start=$SECONDS
  rm -rf "$dir"
  echo "llama-server: building llama.cpp ${commit:0:12} in $dir (CPU, $jobs jobs; 7-35 minutes on 2 cores, quiet or busy)" >&2
  git clone -q "$bundle" "$dir" >&2
  git -C "$dir" checkout -q "$commit"
  cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DBUILD_SHARED_LIBS=OFF >&2
  cmake --build "$dir/build" --target llama-server -j "$jobs" >&2
  echo "llama-server: built in $((SECONDS - start)) s" >&2
fi
echo "$bin"
