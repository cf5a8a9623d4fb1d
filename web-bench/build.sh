#!/usr/bin/env bash
# Builds the session-core npm package the page imports (host-wasm/npm-build/build.sh: release-wasm
# profile, wasm-bindgen --target web and bundler, generated TypeScript declarations). The page
# gets it like any app: web-bench/package.json depends on file:../host-wasm/npm, `npm ci` links
# it into node_modules, and index.html's import map points `session-core` at its `full` entry (the
# web target with other agents' formats, so the page opens pi and Claude Code files too).
set -euo pipefail
cd "$(dirname "$0")/.."
bash host-wasm/npm-build/build.sh
