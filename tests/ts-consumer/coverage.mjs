// tests/ts-consumer: checks the installed package's declarations give every public function of
// the catalog (the list comes from the Rust catalog: the api_schema document's x-functions) a
// request and a response type that are neither `any` nor `unknown`.
// Usage: node coverage.mjs <api-schema.json>
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import ts from 'typescript';

const doc = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const catalog = doc['x-functions'].filter((f) => f.kind === 'mutation' || f.kind === 'read').map((f) => f.id);
assert.ok(catalog.length > 0, 'the catalog lists public functions');

const probe = 'coverage-probe.ts';
writeFileSync(probe, "import type { Functions, PublicFunctionId } from 'session-core';\n"
  + 'export type Probe = Functions;\nexport type Public = PublicFunctionId;\n');
try {
  const program = ts.createProgram([probe], {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true,
  });
  const errors = ts.getPreEmitDiagnostics(program);
  assert.equal(errors.length, 0, ts.formatDiagnostics(errors, ts.createCompilerHost({})));
  const checker = program.getTypeChecker();
  const aliases = new Map();
  ts.forEachChild(program.getSourceFile(probe), (node) => {
    if (ts.isTypeAliasDeclaration(node)) aliases.set(node.name.text, checker.getTypeAtLocation(node.name));
  });
  const functions = aliases.get('Probe');
  const declared = new Set(checker.getPropertiesOfType(functions).map((p) => p.name));
  const publicIds = new Set(aliases.get('Public').types?.map((t) => t.value) ?? []);
  const opaque = ts.TypeFlags.Any | ts.TypeFlags.Unknown;
  for (const id of catalog) {
    assert.ok(declared.has(id), `${id} has no entry in Functions`);
    assert.ok(publicIds.has(id), `${id} is not in PublicFunctionId`);
    const entry = checker.getTypeOfSymbol(checker.getPropertyOfType(functions, id));
    for (const side of ['request', 'response']) {
      const type = checker.getTypeOfSymbol(checker.getPropertyOfType(entry, side));
      assert.equal(type.flags & opaque, 0, `${id} ${side} is ${checker.typeToString(type)}`);
    }
  }
  assert.equal(publicIds.size, catalog.length, 'PublicFunctionId lists exactly the public catalog');
  console.log(`declarations cover all ${catalog.length} public functions of the catalog (${declared.size} functions typed)`);
} finally {
  rmSync(probe, { force: true });
}
