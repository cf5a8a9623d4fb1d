// pi's own SessionManager (@mariozechner/pi-coding-agent, pinned in package.json) writes a session
// with two branches, a compaction, a branch summary, a label, model / thinking changes and a tool
// call; session-core's Workspace opens it (loadFile tells the format), keeps every entry, branch
// and compaction, and exports it back to pi's format; pi opens that export and builds the same
// context for the active branch as from its own file. Run: node --test (after installing the
// packed session-core, scripts/npm-package.sh).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SessionManager } from '@mariozechner/pi-coding-agent';
import { initSync, Workspace } from 'session-core/full';

initSync({ module: readFileSync(fileURLToPath(import.meta.resolve('session-core/full/session_wasm_bg.wasm'))) });

let clock = Date.UTC(2026, 11, 7, 12, 0, 0);
const at = () => (clock += 1000);
const usage = { input: 120, output: 30, cacheRead: 0, cacheWrite: 0, totalTokens: 150, cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3 } };
const user = (text) => ({ role: 'user', content: text, timestamp: at() });
const assistant = (content, stopReason = 'stop') => ({
  role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5', usage, stopReason, timestamp: at(),
});

/** A pi session file written by pi itself; its path and the manager that wrote it. */
function piSession() {
  const dir = mkdtempSync(join(tmpdir(), 'pi-interop-'));
  const pi = SessionManager.create('/work/project', dir);
  const asked = pi.appendMessage(user('Where is the session store?'));
  const called = pi.appendMessage(assistant([
    { type: 'thinking', thinking: 'Look at the tree first.', thinkingSignature: 'sig-1' },
    { type: 'toolCall', id: 'call_1', name: 'read', arguments: { path: 'core/src/store.rs' } },
  ], 'toolUse'));
  pi.appendMessage({ role: 'toolResult', toolCallId: 'call_1', toolName: 'read', content: [{ type: 'text', text: 'pub trait Store { … }' }], isError: false, timestamp: at() });
  const answered = pi.appendMessage(assistant([{ type: 'text', text: 'In core/src/store.rs.' }]));
  pi.appendLabelChange(asked, 'question');
  pi.appendModelChange('openai', 'gpt-5');
  pi.appendThinkingLevelChange('high');
  pi.appendSessionInfo('Find the store');
  pi.appendMessage(user('And the fs one?'));
  pi.appendMessage(assistant([{ type: 'text', text: 'stores/fs/src/lib.rs.' }]));
  // A second branch from the first answer, with a summary of the one left.
  pi.branchWithSummary(answered, 'Asked about the fs store; it is in stores/fs.');
  pi.appendCustomMessageEntry('reminder', 'Keep answers short.', true, { source: 'test' });
  pi.appendMessage(user('Summarise what we found.'));
  pi.appendMessage(assistant([{ type: 'text', text: 'The store trait and its fs backend.' }]));
  pi.appendCompaction('The user looked for the session store; it is core/src/store.rs.', called, 4200);
  pi.appendMessage(user('Thanks!'));
  pi.appendMessage(assistant([{ type: 'text', text: 'You are welcome.' }]));
  return { file: pi.getSessionFile(), pi };
}

/** A `getTree()` with every node's children in id order. */
function shape(nodes) {
  return nodes
    .map((node) => ({ ...node, children: shape(node.children) }))
    .sort((a, b) => a.entry.id.localeCompare(b.entry.id));
}

/** The JSON lines of a file, by entry id (the header under `session`). */
function linesById(text) {
  const lines = text.trim().split('\n').map((line) => JSON.parse(line));
  return new Map(lines.map((line) => [line.type === 'session' ? 'session' : line.id, line]));
}

test("a session pi wrote imports whole and pi reads our export back with the same context", () => {
  const { file, pi } = piSession();
  const original = readFileSync(file, 'utf8');
  const ws = new Workspace({ deterministic: true });

  const loaded = ws.loadFile(basename(file), original);
  assert.equal(loaded.format, 'pi');
  assert.equal(loaded.session_id, pi.getSessionId());
  assert.equal(loaded.skipped, 0);
  assert.equal(loaded.lines, pi.getEntries().length, 'every entry of the file is imported');

  const meta = ws.call('session::get', { session_id: loaded.session_id }).response.meta;
  assert.equal(meta.title, 'Find the store');
  const messages = pi.getEntries().filter((e) => e.type === 'message' || e.type === 'custom_message' || e.type === 'branch_summary');
  assert.equal(meta.message_count, messages.length);

  // The compaction is this store's compaction record, and the model's context starts with it.
  const context = ws.call('session::context', { session_id: loaded.session_id }).response;
  assert.equal(context.compaction?.summary, 'The user looked for the session store; it is core/src/store.rs.');
  assert.deepEqual(context.ignored, []);

  // Both branches are there: the leaf of the first one is an entry of the session.
  const firstBranchLeaf = pi.getEntries().find((e) => e.type === 'message' && e.message.role === 'assistant' && e.message.content[0]?.text === 'stores/fs/src/lib.rs.');
  const other = ws.call('session::context', { session_id: loaded.session_id, leaf: firstBranchLeaf.id }).response;
  assert.equal(other.leaf, firstBranchLeaf.id);

  // Our export, opened by pi: same entries, same active leaf, same context.
  const exported = ws.call('session::export', { session_id: loaded.session_id, format: 'pi' }).response;
  const dir = mkdtempSync(join(tmpdir(), 'pi-interop-export-'));
  mkdirSync(dir, { recursive: true });
  const exportedFile = join(dir, exported.file_name);
  writeFileSync(exportedFile, exported.data);
  assert.deepEqual(linesById(exported.data), linesById(original), 'every line comes back as pi wrote it');
  const reopened = SessionManager.open(exportedFile);
  const own = SessionManager.open(file);
  assert.equal(reopened.getLeafId(), own.getLeafId());
  assert.deepEqual(reopened.buildSessionContext(), own.buildSessionContext());
  // pi sorts siblings by time: siblings stamped in one millisecond may come back in another
  // order (architecture/formats/pi.md, "Line order"), so the trees are compared by shape.
  assert.deepEqual(shape(reopened.getTree()), shape(own.getTree()));
});

test('a truncated pi file is refused naming its line, and leaves nothing behind', () => {
  const { file } = piSession();
  const text = readFileSync(file, 'utf8');
  const torn = text.slice(0, text.trimEnd().length - 10);
  const ws = new Workspace({ deterministic: true });
  assert.throws(() => ws.loadFile(basename(file), torn), (error) => {
    assert.equal(error.code, 'session/invalid_request');
    const lines = torn.split('\n').length;
    assert.match(error.message, new RegExp(`line ${lines}`));
    return true;
  });
  assert.deepEqual(ws.sessionIds(), []);
});
