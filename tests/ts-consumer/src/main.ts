// tests/ts-consumer: what a front end does with session-core, type-checked and run under Node:
// load an exported .jsonl, open the transcript with messages-tail (elided runs expanded through
// messages-range), switch branch, read typed events and typed error codes.
// Usage: node dist/main.js <exported session .jsonl>
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ErrorCode, initSync, isSessionError, PUBLIC_FUNCTION_IDS, VERSION, Workspace,
  type SessionEvent, type TailItem,
} from 'session-core';

const [file] = process.argv.slice(2);
if (!file) throw new Error('usage: node dist/main.js <session.jsonl>');

// Browsers call `await init()` (it fetches the .wasm next to the module); Node hands the bytes in.
initSync({ module: readFileSync(fileURLToPath(import.meta.resolve('session-core/session_wasm_bg.wasm'))) });

const ws = new Workspace({ deterministic: true });
const imported = ws.loadJsonl(basename(file), readFileSync(file));
assert.equal(imported.skipped, 0);
const sessionId: string = imported.session_id;

/** The newest transcript page, each maximal run of elided items replaced by its full entries. */
function transcript(): TailItem[] {
  const page = ws.call('session::messages-tail', { session_id: sessionId, limit: 20 }).response;
  const items: TailItem[] = [];
  for (let i = 0; i < page.messages.length;) {
    const run: string[] = [];
    while (page.messages[i]?.elided) run.push(page.messages[i++]!.entry_id);
    if (run.length === 0) {
      items.push(page.messages[i++]!);
      continue;
    }
    let cursor: string | null | undefined;
    do {
      const full = ws.call('session::messages-range', { session_id: sessionId, entry_ids: run, cursor }).response;
      items.push(...full.messages);
      cursor = full.next_cursor;
    } while (cursor);
  }
  return items;
}

const text = (items: TailItem[]) => items
  .flatMap((it) => it.message?.content ?? [])
  .map((block) => (block.type === 'text' ? block.text : ''))
  .join('\n');

const before = transcript();
const collapsed = ws.call('session::messages-tail', { session_id: sessionId }).response.messages
  .filter((it) => it.elided).length;

// Branch switch: a leaf of the entry tree that is not on the active path.
const { entries } = ws.call('session::store::list-entries', { session_id: sessionId }).response;
const onPath = new Set(before.map((it) => it.entry_id));
const parents = new Set(entries.map((e) => e.parent_id));
const otherLeaf = entries.find((e) => !parents.has(e.id) && !onPath.has(e.id));
assert.ok(otherLeaf, 'the fixture has a second branch');
ws.call('session::set-active-leaf', { session_id: sessionId, entry_id: otherLeaf.id });
const after = transcript();
assert.equal(after.at(-1)?.entry_id, otherLeaf.id);

// Typed events: the union narrows on trigger_type.
const { events } = ws.call('session::set-status', { session_id: sessionId, status: 'working' });
const changed = events.find((e: SessionEvent) => e.trigger_type === 'session::status-changed');
assert.ok(changed && changed.trigger_type === 'session::status-changed');
assert.equal(changed.payload.status, 'working');

// Typed errors: `code` is the ErrorCode union.
let code: ErrorCode | undefined;
try {
  ws.call('session::messages-tail', { session_id: 'no-such-session' });
} catch (error) {
  if (!isSessionError(error)) throw error;
  code = error.code;
}
assert.equal(code, ErrorCode.NotFound);

console.log(JSON.stringify({
  version: VERSION,
  public_functions: PUBLIC_FUNCTION_IDS.length,
  session_id: sessionId,
  lines: imported.lines,
  transcript_items: before.length,
  collapsed_in_tail: collapsed,
  switched_to: otherLeaf.id,
  after_switch: text(after).split('\n').filter(Boolean).at(-1),
  status_event: changed.payload,
  error_code: code,
}));
