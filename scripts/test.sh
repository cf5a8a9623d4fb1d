#!/usr/bin/env bash
# Runs every check CI runs, after installing what they need (idempotent): formatting, clippy,
# the no_std / wasm builds of the core, and the whole test suite (unit, golden, BDD, store).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "toolchain components and targets"
rustup component add clippy rustfmt >/dev/null
rustup target add wasm32v1-none wasm32-unknown-unknown >/dev/null

step "format"
cargo fmt --all --check

step "clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "core builds without std (wasm32v1-none) and for wasm32-unknown-unknown"
cargo build -p session-core --no-default-features --target wasm32v1-none --locked
cargo build -p session-core --no-default-features --target wasm32-unknown-unknown --locked

step "tests (engine scenarios are reported skipped unless III_BIN is set)"
cargo test --workspace --locked

# ---- wasm host and web bench (issue 6) ------------------------------------------------------
# Installs Chromium + chromedriver (Debian), wasm-bindgen-cli at exactly the wasm-bindgen crate's
# version and the web bench's npm packages (package-lock.json), then runs the wasm tests
# (conformance suite + cross-host digest) under Node and headless Chromium, and the Playwright test.
WASM_BINDGEN_VERSION="0.2.130"
export PATH="$HOME/.cargo/bin:$PATH"

step "wasm host: system packages (chromium, chromium-driver, node)"
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null || ! command -v npm >/dev/null; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver nodejs npm
fi

step "wasm host: wasm-bindgen-cli $WASM_BINDGEN_VERSION"
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  # --locked can fail when the registry lacks a version the CLI's lockfile pins; then resolve.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --locked \
    || cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi

step "wasm host: tests under Node"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test -p session-wasm --target wasm32-unknown-unknown --locked

step "wasm host: tests under headless Chromium"
WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER="$(command -v chromedriver)" \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test -p session-wasm --target wasm32-unknown-unknown --locked

step "web bench: bundle (release-wasm + wasm-bindgen --target web) and Playwright end-to-end test"
bash web-bench/build.sh
(cd web-bench && npm ci --no-audit --no-fund && node --test tests/e2e.test.mjs)
# ---- end of wasm host and web bench ---------------------------------------------------------
