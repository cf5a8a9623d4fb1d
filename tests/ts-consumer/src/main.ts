// tests/ts-consumer: what a front end does with session-core, type-checked and run under Node:
// load an exported .jsonl, open the transcript with messages-tail (elided runs expanded through
// messages-range), switch branch, read typed events and typed error codes, compact the branch and
// read what the model sees and the usage totals, move the session to the trash and restore it
// (the extensions, typed like the rest).
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

// What the model sees (issue 38): a compaction keeping only the branch's last entry; the context
// starts there, the summary apart; usage totals count the branch and the whole session.
const compacted = ws.call('session::compact', {
  session_id: sessionId, summary: 'the parser refactor so far', first_kept_entry_id: otherLeaf.id,
}).response;
const context = ws.call('session::context', { session_id: sessionId, token_budget: 10_000 }).response;
assert.equal(context.leaf, compacted.entry_id);
assert.equal(context.compaction?.summary, 'the parser refactor so far');
assert.deepEqual(context.messages.map((it) => it.entry_id), [otherLeaf.id]);
assert.ok(context.tokens > 0 && context.dropped === undefined);
const usage = ws.call('session::usage', { session_id: sessionId }).response;
const branchMessages: number = usage.branch.messages.user + usage.branch.messages.assistant;
assert.ok(branchMessages > 0 && usage.session.messages.assistant >= usage.branch.messages.assistant);

// Trash and restore: out of every read and list while in the trash, back exactly as it was.
const trashed = ws.call('session::trash', { session_id: sessionId });
assert.equal(trashed.response.trashed, true);
assert.deepEqual(trashed.events.map((e) => e.trigger_type), ['session::deleted']);
assert.equal(ws.call('session::get', { session_id: sessionId }).response, null);
const trash = ws.call('session::list-trash').response;
assert.deepEqual(trash.sessions.map((t) => t.meta.session_id), [sessionId]);
const trashedAt: number = trash.sessions[0]!.trashed_at;
const lifecycle = ws.call('session::lifecycle', { session_id: sessionId }).response;
assert.equal(lifecycle?.purge_at, trash.sessions[0]!.purge_at);
const restored: boolean = ws.call('session::restore', { session_id: sessionId }).response.restored;
assert.ok(restored);
assert.equal(transcript().at(-1)?.entry_id, compacted.entry_id, 'restored on the same branch, up to its compaction');
ws.call('session::set-expiry', { session_id: sessionId, expires_at: ws.now() + 1000 });
assert.deepEqual(ws.call('session::sweep', {}).response, { expired: 0, purged: 0 });
ws.advance(1000);
const swept = ws.call('session::sweep', {});
assert.deepEqual(swept.response, { expired: 1, purged: 0 });
assert.deepEqual(ws.sessionIds(), []);

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
  context: { compaction: context.compaction?.entry_id === compacted.entry_id, messages: context.messages.length, tokens: context.tokens },
  usage_branch_messages: usage.branch.messages,
  trashed_at: trashedAt,
  swept: swept.response,
}));
