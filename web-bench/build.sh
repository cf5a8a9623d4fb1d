#!/usr/bin/env bash
# Builds web-bench/pkg (gitignored): session-wasm for wasm32-unknown-unknown with the
# release-wasm profile, then wasm-bindgen --target web (wasm-bindgen-cli must be 0.2.130, the
# exact version of the wasm-bindgen crate).
set -euo pipefail
cd "$(dirname "$0")/.."

want="0.2.130"
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')"
if [ "$have" != "$want" ]; then
  echo "wasm-bindgen-cli $want is required (found '${have:-none}'):" >&2
  echo "  cargo install wasm-bindgen-cli --version $want --locked" >&2
  exit 1
fi
cargo build -p session-wasm --target wasm32-unknown-unknown --profile release-wasm --locked
wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section \
  --out-dir web-bench/pkg \
  target/wasm32-unknown-unknown/release-wasm/session_wasm.wasm
ls -l web-bench/pkg/session_wasm_bg.wasm
