#!/usr/bin/env bash
# npm package (issue 15): builds the session-core package (host-wasm/npm-build/build.sh), packs it
# (npm pack), installs the tarball into the TypeScript consumer tests/ts-consumer like an outside
# app, type-checks it (tsc --noEmit), asserts the ill-typed negative case fails to type-check,
# checks the declarations cover every public function of the catalog, runs the consumer under
# Node against a fixture the native export code wrote, runs pi's own SessionManager against the
# pi converter (tests/pi-interop), and checks the gzipped bundle (<= 250 KB)
# and that the wasm imports nothing from `env` (an import no browser provides).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
out="$root/target/session-core-npm"
budget=$((250 * 1024))

echo "== build"
bash host-wasm/npm-build/build.sh

echo "== the wasm imports nothing from \`env\` (every import is wasm-bindgen's own glue)"
node --input-type=module - host-wasm/npm/web/session_wasm_bg.wasm host-wasm/npm/bundler/session_wasm_bg.wasm host-wasm/npm/full/session_wasm_bg.wasm <<'JS'
import { readFileSync } from 'node:fs';
for (const path of process.argv.slice(2)) {
  const imports = WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(path)));
  const modules = [...new Set(imports.map((i) => i.module))];
  const env = imports.filter((i) => i.module === 'env').map((i) => i.name);
  console.log(`  ${path}: ${imports.length} imports from ${modules.join(', ')}`);
  if (env.length > 0) {
    console.error(`FAIL: ${path} imports from env: ${env.join(', ')}`);
    process.exit(1);
  }
}
JS

echo "== pack"
mkdir -p "$out"
rm -f "$out"/session-core-*.tgz
tarball_name="$(cd host-wasm/npm && npm pack --silent --pack-destination "$out")"
tarball="$out/$tarball_name"
tar -tzf "$tarball" | sort | sed 's/^/  /'

echo "== install the tarball into tests/ts-consumer"
cd tests/ts-consumer
npm ci --no-audit --no-fund --loglevel=error
npm install --no-save --no-audit --no-fund --loglevel=error "$tarball"

echo "== tsc --noEmit (typed calls)"
npx --no-install tsc --noEmit -p tsconfig.json

echo "== tsc on the negative case (a misspelt request field) must fail"
if npx --no-install tsc -p tsconfig.negative.json > "$out/negative.txt" 2>&1; then
  echo "FAIL: negative/wrong-field.ts type-checked; requests are not closed types" >&2
  exit 1
fi
sed 's/^/  /' "$out/negative.txt"
if ! grep -Eq "error TS(2353|2561): .*'limt' does not exist in type 'MessagesTailRequest'" "$out/negative.txt"; then
  echo "FAIL: tsc rejected the negative case, but not for the misspelt field" >&2
  exit 1
fi

echo "== declarations cover the catalog"
node coverage.mjs "$out/api-schema.json"

echo "== run under Node against the native export fixture"
rm -rf dist
npx --no-install tsc -p tsconfig.json
node dist/main.js "$root/web-bench/tests/fixtures/s_001.jsonl"

echo "== pi's own SessionManager (pinned) opens our export of a session it wrote (tests/pi-interop)"
(cd "$root/tests/pi-interop" \
  && npm ci --no-audit --no-fund --loglevel=error \
  && npm install --no-save --no-audit --no-fund --loglevel=error "$tarball" \
  && node --test pi.test.mjs)

echo "== gzipped bundle (web target, as installed)"
node --input-type=module - "$budget" <<'JS'
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
const budget = Number(process.argv[2]);
const dir = 'node_modules/session-core';
const files = ['web/session_wasm_bg.wasm', 'web/session_wasm.js', 'web/index.js', 'api.js'];
let total = 0;
for (const file of files) {
  const raw = readFileSync(`${dir}/${file}`);
  const gz = gzipSync(raw, { level: 9 }).length;
  total += gz;
  console.log(`  ${file}: ${raw.length} B raw, ${gz} B gzip -9`);
}
console.log(`  total gzip -9: ${total} B (${(total / 1024).toFixed(1)} KB), budget ${budget} B`);
if (total > budget) {
  console.error('FAIL: the gzipped bundle is over budget');
  process.exit(1);
}
JS
node --input-type=module - <<'JS'
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
// The `full` entry (other agents' formats) is measured and reported, not held to the budget.
const dir = 'node_modules/session-core';
const files = ['full/session_wasm_bg.wasm', 'full/session_wasm.js', 'full/index.js', 'api.js'];
const total = files.reduce((sum, file) => sum + gzipSync(readFileSync(`${dir}/${file}`), { level: 9 }).length, 0);
console.log(`  full entry (with other agents' formats), gzip -9: ${total} B (${(total / 1024).toFixed(1)} KB)`);
JS
ls -l "$tarball" | awk '{print "  tarball " $NF ": " $5 " B"}'
echo "npm package: ok"
