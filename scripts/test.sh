#!/usr/bin/env bash
# Runs every check CI runs, after installing what they need (idempotent): formatting, clippy,
# the no_std / wasm builds of the core, and the whole test suite (unit, golden, BDD, store).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step with the time it starts, so a slow CI run shows where its time went.
step() { printf '\n==> [%s] %s\n' "$(date -u +%T)" "$*"; }

# Builds for checks, not for debugging: no incremental caches (every CI build is clean), and
# line tables only for the dev and test profiles (backtraces keep their lines; compiling and
# linking the test binaries' full debug info was a good part of their build time).
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=line-tables-only

# Debian packages, installed only when a tool is absent (see each step).
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}
have() {
  local tool="$1"
  if command -v "$tool" >/dev/null; then
    echo "$tool: present, $(command -v "$tool") ($("$tool" --version 2>/dev/null | head -n 1))"
  else
    echo "$tool: absent"
    return 1
  fi
}

step "toolchain components and targets"
rustup component add clippy rustfmt >/dev/null
rustup target add wasm32v1-none wasm32-unknown-unknown >/dev/null

step "format"
cargo fmt --all --check

step "clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

MSRV="$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)"
step "the declared MSRV (rust-version $MSRV) compiles the workspace"
if ! rustup run "$MSRV" rustc --version >/dev/null 2>&1; then
  rustup toolchain install "$MSRV" --profile minimal
fi
CARGO_TARGET_DIR=target/msrv cargo +"$MSRV" check --workspace --locked

step "docs build with warnings as errors (broken intra-doc links, unclosed HTML)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "core builds without std (wasm32v1-none) and for wasm32-unknown-unknown"
cargo build -p session-core --no-default-features --target wasm32v1-none --locked
cargo build -p session-core --no-default-features --target wasm32-unknown-unknown --locked

# ---- PostgreSQL for the postgres adapter's tests (issue 13) ---------------------------------
# A throwaway server from Debian's `postgresql` (installed when no server binaries are on the
# machine), on a free 127.0.0.1 port, as the `postgres` user when we are root; its URL reaches the
# tests through SESSION_MANAGER_TEST_PG_URL, and it is stopped when this script ends. Without a
# server the postgres tests are reported ignored / skipped, never passed.
step "PostgreSQL: a throwaway server for the postgres adapter's tests"
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "postgresql: present, $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
else
  echo "postgresql: absent"
  apt_install postgresql
fi
PG_DIR="$(mktemp -d /tmp/session-manager-pg.XXXXXX)"
trap 'bash scripts/postgres.sh stop "$PG_DIR"' EXIT
SESSION_MANAGER_TEST_PG_URL="$(bash scripts/postgres.sh start "$PG_DIR" fast)"
export SESSION_MANAGER_TEST_PG_URL
echo "test server: $SESSION_MANAGER_TEST_PG_URL"

step "tests (engine scenarios are reported skipped unless III_BIN is set; postgres ones run on the server above)"
cargo test --workspace --locked

step "README's run command, with --manifest appended (taken from README.md, not copied)"
bash scripts/readme-run-check.sh

# ---- wasm host and web bench (issue 6) ------------------------------------------------------
# Installs what is absent of Chromium, chromedriver, Node.js and npm (Debian), wasm-bindgen-cli at
# exactly the wasm-bindgen crate's version and the web bench's npm packages (package-lock.json),
# then runs the wasm tests (conformance suite + cross-host digest) under Node and headless
# Chromium, the Playwright test, and the session-core npm package check.
WASM_BINDGEN_VERSION="0.2.130"
export PATH="$HOME/.cargo/bin:$PATH"

step "wasm host: system tools (chromium, chromedriver, node, npm)"
# Each tool on its own, installed from Debian only when it is absent. Node.js and npm are never
# installed on top of an existing Node.js: these machines ship one outside Debian's packages, and
# Debian's `nodejs` / `npm` conflict with it.
have chromium || apt_install chromium
have chromedriver || apt_install chromium-driver
have node || apt_install nodejs npm
if ! have npm; then
  # Node.js is here but npm is not: Debian's npm fits only Debian's nodejs.
  if dpkg-query -W -f='${Version}' nodejs 2>/dev/null | grep -qv nodesource; then
    apt_install npm
  else
    echo "npm is missing beside $(command -v node), which is not Debian's nodejs:" \
      "install the npm that belongs to that Node.js" >&2
    exit 1
  fi
fi
for tool in chromium chromedriver node npm; do
  command -v "$tool" >/dev/null || { echo "$tool: still absent after installing it" >&2; exit 1; }
done

step "wasm host: wasm-bindgen-cli $WASM_BINDGEN_VERSION"
# `|| true`: an absent tool must not end the script (set -e with pipefail).
wasm_bindgen_found="$( (wasm-bindgen --version 2>/dev/null || true) | awk '{print $2}')"
echo "wasm-bindgen: ${wasm_bindgen_found:-absent}"
if [ "$wasm_bindgen_found" != "$WASM_BINDGEN_VERSION" ]; then
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
(cd web-bench && npm ci --no-audit --no-fund && node --test tests/e2e.test.mjs tests/access.test.mjs)

step "npm package: session-core built, packed, installed into tests/ts-consumer, tsc (negative case must fail), declarations cover the catalog, run under Node, gzipped bundle <= 250 KB"
bash scripts/npm-package.sh
# ---- end of wasm host and web bench ---------------------------------------------------------

# ---- fuzz smoke (issue 7, fuzz/README.md) ---------------------------------------------------
# cargo-fuzz from crates.io; the stable toolchain runs it with RUSTC_BOOTSTRAP=1. Each target
# runs 20 s from its committed seeds (new inputs go to a temp corpus); a crash fails the build.
CARGO_FUZZ_VERSION="0.13.2"
step "fuzz: cargo-fuzz $CARGO_FUZZ_VERSION and a 20 s smoke run of each target"
cargo_fuzz_found="$( (cargo fuzz --version 2>/dev/null || true) | awk '{print $2}')"
echo "cargo-fuzz: ${cargo_fuzz_found:-absent}"
if [ "$cargo_fuzz_found" != "$CARGO_FUZZ_VERSION" ]; then
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi
FUZZ_CORPUS="$(mktemp -d)"
(cd fuzz && cargo test --lib && for target in dispatch cursor jsonl_replay formats; do
  mkdir -p "$FUZZ_CORPUS/$target"
  RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" "$FUZZ_CORPUS/$target" "seeds/$target" -- \
    -dict=dict/json.dict -max_total_time=20 -timeout=10
done)
rm -rf "$FUZZ_CORPUS"
step "done"
# ---- end of fuzz smoke ----------------------------------------------------------------------
