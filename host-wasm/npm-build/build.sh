#!/usr/bin/env bash
# Builds the session-core npm package in host-wasm/npm (outputs gitignored): session-wasm for
# wasm32-unknown-unknown with the release-wasm profile, wasm-bindgen --target web and bundler (and
# web again for the `full` entry, built with other agents' formats)
# (wasm-bindgen-cli must be 0.2.130, the exact version of the wasm-bindgen crate), the API schema
# of the Rust types (native example) and the TypeScript declarations generated from it.
set -euo pipefail
cd "$(dirname "$0")/../.."

want="0.2.130"
have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')"
if [ "$have" != "$want" ]; then
  echo "wasm-bindgen-cli $want is required (found '${have:-none}'):" >&2
  echo "  cargo install wasm-bindgen-cli --version $want --locked" >&2
  exit 1
fi

pkg=host-wasm/npm
# Panic locations (the file, line and column of every bounds check and unwrap, about 2.4 KB of the
# gzipped bundle) are never seen in a page: a panic aborts the module (`panic = "abort"`) and std's
# hook writes to a stderr that wasm32-unknown-unknown drops. `-Zlocation-detail=none` leaves them
# out; it is unstable, so the stable toolchain runs it with RUSTC_BOOTSTRAP=1 (as cargo-fuzz is run).
# Two builds of one crate: the main entry (web and bundler targets) without other agents' formats,
# within its gzip budget; `full/` (web target) with them (feature `formats`: session::import,
# session::export, `loadFile` of pi / Claude Code / OpenAI / UI message files).
wasm=target/wasm32-unknown-unknown/release-wasm/session_wasm.wasm
build() {
  RUSTC_BOOTSTRAP=1 RUSTFLAGS="${RUSTFLAGS:-} -Zlocation-detail=none" \
    cargo build -p session-wasm --target wasm32-unknown-unknown --profile release-wasm --locked "$@"
}
bindgen() {
  rm -rf "$pkg/$2"
  wasm-bindgen --target "$1" --remove-name-section --remove-producers-section --out-dir "$pkg/$2" "$wasm"
  rm -f "$pkg/$2/.gitignore"
}
build
bindgen web web
bindgen bundler bundler
build --features formats
bindgen web full

mkdir -p target/session-core-npm
cargo run -q -p session-wasm --example api_schema --locked > target/session-core-npm/api-schema.json
(cd host-wasm/npm-build && npm ci --no-audit --no-fund --loglevel=error)
node host-wasm/npm-build/generate.mjs target/session-core-npm/api-schema.json "$pkg"
ls -l "$pkg/web/session_wasm_bg.wasm" "$pkg/full/session_wasm_bg.wasm"
