#!/usr/bin/env bash
# Builds the native addon into a separate directory (default: this package's build/).
#   scripts/build-native.sh [OUT_DIR]
# With OUT_DIR, binding.gyp and native/ are copied there first, so several builds can run side by
# side; point PRIME_TENSOR_ADDON at OUT_DIR/build/Release/tensor_cpu.node to load that build.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
gyp="$(npm root -g 2>/dev/null)/npm/node_modules/node-gyp/bin/node-gyp.js"
run_gyp() { if [ -f "$gyp" ]; then node "$gyp" "$@"; else npx --yes node-gyp "$@"; fi; }
if [ $# -ge 1 ]; then
  out="$(mkdir -p "$1" && cd "$1" && pwd)"
  rm -rf "$out/native" && cp -r "$here/native" "$here/binding.gyp" "$out/"
  cd "$out"
else
  cd "$here"
fi
nodedir_flag=()
if [ -f /usr/include/node/node_api.h ]; then nodedir_flag=(--nodedir=/usr); fi
run_gyp rebuild "${nodedir_flag[@]}" -j 2 2>&1 | grep -Ev '^gyp info|^npm warn' || true
test -f build/Release/tensor_cpu.node
