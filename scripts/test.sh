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
