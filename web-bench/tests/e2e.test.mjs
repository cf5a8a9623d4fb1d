// web-bench: end-to-end test: the page loads the native-exported fixture, renders the transcript,
// opens a collapsed run, switches branch, forks, exports, simulates (each event with its feed
// seq), rebuilds sessions from their change feed, moves a session to the trash and restores it,
// opens a pi file and a Claude Code file (their trees and branches), and saves a screenshot.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { serve, ROOT } from './serve.mjs';
import { launch } from './browser.mjs';

const FIXTURES = join(ROOT, 'tests', 'fixtures');
// Files pi and Claude Code wrote (the fixtures above are exactly what the native export writes).
const OTHER_AGENTS = join(ROOT, 'tests', 'other-agents');
const OUTPUT = join(ROOT, 'tests', 'output');
let server, browser, page;

before(async () => {
  server = await serve();
  browser = await launch();
  page = browser.page;
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(`${server.url}/index.html`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.setInputFiles('#file-input', [join(FIXTURES, 's_001.jsonl'), join(FIXTURES, 's_002.jsonl')]);
  await page.waitForSelector('#sessions li[data-session="s_002"]');
});

after(async () => {
  await browser?.close();
  server?.server.close();
});

const transcriptText = () => page.textContent('#transcript');

test('lists both sessions with title, status and counts', async () => {
  const items = await page.$$eval('#sessions li', (lis) => lis.map((li) => li.textContent));
  assert.equal(items.length, 2);
  assert.match(items[0], /Refactor the parser.*done.*11 messages/);
  assert.match(items[1], /Empty scratch session.*idle.*0 messages.*e2e/);
});

test('renders the active path with every block kind', async () => {
  const text = await transcriptText();
  assert.match(text, /Please refactor parser\.rs and run the tests\./);
  assert.match(text, /all 42 tests pass/);
  assert.match(text, /Thanks — the diagram matches the new layout\./);
  assert.equal(await page.locator('#transcript img.block-image').count(), 1);
  assert.match(await page.textContent('#transcript .chip'), /diagram\.png/);
  assert.match(await page.textContent('#transcript .custom-entry'), /compaction/);
  assert.match(await page.textContent('#transcript [data-entry="e_006"] .arguments'), /src\/parser\.rs/);
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, 'web-bench.png') });
});

test('collapses the tool run and expands it through messages-range', async () => {
  assert.equal(await page.locator('#transcript [data-entry="e_002"]').count(), 0);
  const run = page.locator('#transcript .run');
  assert.match(await run.textContent(), /4 collapsed entries/);
  await run.locator('button.expand').click();
  await page.waitForSelector('#transcript [data-entry="e_002"]');
  assert.equal(await run.locator('button.expand').getAttribute('aria-expanded'), 'true');
  assert.match(await page.textContent('#transcript [data-entry="e_002"] details.thinking'), /Read the file first/);
  assert.match(await page.textContent('#transcript [data-entry="e_004"] .arguments'), /cargo test -p parser/);
  assert.match(await page.textContent('#transcript [data-entry="e_005"]'), /42 passed/);
});

test('switches the active leaf to the other branch from the tree', async () => {
  await page.click('#tree .node[data-entry="e_012"]');
  await page.waitForSelector('#transcript [data-entry="e_012"]');
  const text = await transcriptText();
  assert.match(text, /Alternative answer/);
  assert.doesNotMatch(text, /Thanks — the diagram/);
  assert.match(await page.getAttribute('#tree .node.leaf-active', 'data-entry'), /e_012/);
});

test('exports the session back to .jsonl, which loads to the same state', async () => {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-button')]);
  assert.equal(download.suggestedFilename(), 's_001.jsonl');
  const path = join(OUTPUT, 's_001.exported.jsonl');
  await download.saveAs(path);
  const text = await (await import('node:fs/promises')).readFile(path, 'utf8');
  assert.match(text, /"type":"leaf","entry_id":"e_012"/);
  const again = await page.evaluate(async (t) => {
    const { Store } = await import('./js/wasm.js');
    const store = new Store();
    const info = store.load('s_001.jsonl', t);
    return { info, text: store.exportText('s_001') };
  }, text);
  assert.deepEqual(again.info, { format: 'session-manager', session_id: 's_001', lines: text.trim().split('\n').length, skipped: 0 });
  assert.equal(again.text, text);
});

test('forks at an entry into a new session', async () => {
  await page.click('#transcript [data-entry="e_001"] button.fork');
  await page.waitForFunction(() => document.querySelectorAll('#sessions li').length === 3);
  assert.match(await page.textContent('#session-header'), /forked from s_001/);
  assert.match(await transcriptText(), /Please refactor parser\.rs/);
  await page.click('#sessions li[data-session="s_001"]');
});

test('steps through the session as a simulation, with the events of each step', async () => {
  await page.click('#simulate-button');
  await page.waitForSelector('#simulation-section:not([hidden])');
  await page.click('#sim-step');
  assert.match(await page.textContent('#sim-steps li.current'), /ensure s_001.*session::created/s);
  await page.click('#sim-step');
  assert.match(await page.textContent('#sim-steps li.current'), /append e_001.*session::message-added/s);
  assert.match(await transcriptText(), /Please refactor parser\.rs/);
  const total = Number((await page.textContent('#sim-progress')).split('/')[1]);
  for (let i = 2; i < total; i++) await page.click('#sim-step');
  assert.equal(await page.textContent('#sim-progress'), `${total} / ${total}`);
  assert.equal(await page.locator('#sim-steps .error-text').count(), 0);
  const updates = await page.locator('#sim-steps li', { hasText: 'session::message-updated' }).count();
  assert.equal(updates, 3, 'the streamed answer replays as three updates');
  assert.match(await transcriptText(), /Thanks — the diagram matches/);
});

test('each simulated step shows the seqs its events took, in order from 1 with no gaps', async () => {
  const perStep = await page.$$eval('#sim-steps li.done, #sim-steps li.current',
    (lis) => lis.map((li) => [...li.querySelectorAll('.event .seq')].map((el) => Number(el.dataset.seq))));
  const seqs = perStep.flat();
  assert.ok(seqs.length >= 18, `${seqs.length} seqs shown`);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 1), 'seqs 1, 2, 3, … in step order');
  assert.deepEqual(perStep[0], [1], 'ensure: session::created is seq 1');
  assert.match(await page.textContent('#sim-steps li.current'), new RegExp(`#${seqs.at(-1)}`));
});

test('rebuilds the simulated session from its feed, and it matches the store', async () => {
  const last = Number(await page.getAttribute('#sim-steps li.current .event:last-of-type .seq', 'data-seq'));
  await page.click('#rebuild-button');
  await page.waitForSelector('#rebuild-result[data-matches]');
  assert.equal(await page.getAttribute('#rebuild-result', 'data-matches'), 'true');
  const text = await page.textContent('#rebuild-result');
  assert.match(text, /s_001 rebuilt from its feed matches the simulation store/);
  // The feed compacts the message its update superseded: one run, applied as one change.
  assert.match(text, new RegExp(`${last - 1} changes applied, seq ${last} of ${last}`));
  assert.match(text, /Refactor the parser · done · 11 messages · 12 entries/);
  assert.doesNotMatch(text, /snapshot/, 'the whole feed is kept: no snapshot read');
  await page.click('#sim-reset');
  assert.equal(await page.textContent('#rebuild-result'), '', 'a step or reset clears the verdict');
});

test('rebuilds workspace sessions from their feeds: the loaded log, and a fork through a snapshot', async () => {
  await page.click('#sessions li[data-session="s_001"]');
  await page.click('#rebuild-button');
  await page.waitForSelector('#rebuild-result[data-matches]');
  assert.equal(await page.getAttribute('#rebuild-result', 'data-matches'), 'true');
  assert.match(await page.textContent('#rebuild-result'), /matches the workspace store.*17 changes applied, seq 18 of 18/s);
  const fork = await page.getAttribute('#sessions li:last-child', 'data-session');
  await page.click(`#sessions li[data-session="${fork}"]`);
  assert.equal(await page.textContent('#rebuild-result'), '', 'selecting clears the verdict');
  await page.click('#rebuild-button');
  await page.waitForSelector('#rebuild-result[data-matches]');
  assert.equal(await page.getAttribute('#rebuild-result', 'data-matches'), 'true');
  assert.match(await page.textContent('#rebuild-result'), /snapshot at seq 1 \(fork\)/);
});

test('moves a session to the trash and restores it: out of the live list, into the Trash group, back as it was', async () => {
  await page.click('#sessions li[data-session="s_001"]');
  const before = { item: await page.textContent('#sessions li[data-session="s_001"]'), transcript: await transcriptText(),
    header: await page.textContent('#session-header') };
  assert.match(before.item, /Refactor the parser.*done.*11 messages/);
  await page.click('#trash-button');
  await page.waitForSelector('#sessions li[data-session="s_001"]', { state: 'detached' });
  assert.match(await page.textContent('#status'), /moved s_001 to the trash \(session::deleted\)/);
  assert.equal(await page.getAttribute('#sessions li[aria-selected="true"]', 'data-session'), 's_002', 'its neighbour is shown');
  assert.match(await page.textContent('#session-header'), /Empty scratch session/);
  assert.equal(await page.textContent('#trash-count'), '1');
  const trashed = page.locator('#trash li[data-session="s_001"]');
  assert.equal(await trashed.isVisible(), false, 'the Trash group starts closed');
  await page.click('#trash-section summary');
  assert.match(await trashed.textContent(), /Refactor the parser.*trashed \S+.*11 messages/s);
  const at = Date.parse(await trashed.locator('time.trashed-at').getAttribute('datetime'));
  assert.ok(Math.abs(Date.now() - at) < 60_000, 'trashed just now');
  const listed = await page.evaluate(() => window.bench.state.store.ask('session::list-trash', {}));
  assert.deepEqual(listed.sessions.map((t) => t.meta.session_id), ['s_001']);
  assert.equal(listed.sessions[0].trashed_at, at);

  await trashed.locator('button.restore').click();
  await page.waitForSelector('#sessions li[data-session="s_001"]');
  assert.match(await page.textContent('#status'), /restored s_001 \(session::created\)/);
  assert.equal(await page.textContent('#trash-count'), '0');
  assert.equal(await page.locator('#trash li[data-session]').count(), 0);
  assert.deepEqual(await page.$$eval('#sessions li', (lis) => lis.map((li) => li.dataset.session)).then((ids) => ids.slice(0, 2)),
    ['s_001', 's_002'], 'back in its place (created_asc)');
  assert.equal(await page.getAttribute('#sessions li[data-session="s_001"]', 'aria-selected'), 'true', 'and shown');
  assert.equal(await page.textContent('#sessions li[data-session="s_001"]'), before.item, 'same title, status and message count');
  assert.equal(await page.textContent('#session-header'), before.header);
  assert.equal(await transcriptText(), before.transcript, 'same messages');
  await page.click('#trash-section summary');
});

test('shows what the model sees of each branch: its own compaction, the budget cut, usage totals', async () => {
  // Two branches from e2, each compacted at a different point; the assistant turns carry usage.
  await page.evaluate(() => {
    const { store } = window.bench.state;
    const sid = 's_model';
    store.call('session::ensure', { session_id: sid, title: 'Two compactions' });
    const text = (t) => [{ type: 'text', text: t }];
    const append = (id, parent, role, t, usage) => store.call('session::append', {
      session_id: sid, entry_id: id, ...(parent ? { parent_id: parent } : {}),
      message: role === 'user'
        ? { role, content: text(t), timestamp: 1 }
        : { role, content: text(t), stop_reason: 'end', model: 'm', provider: 'p', timestamp: 1, usage },
    });
    append('e1', null, 'user', 'first question');
    append('e2', 'e1', 'assistant', 'first answer', { input: 100, output: 10, cost_usd: 0.5 });
    append('a3', 'e2', 'user', 'branch A asks');
    append('a4', 'a3', 'assistant', 'branch A answers', { input: 200, output: 20, cost_usd: 0.25 });
    store.call('session::compact', { session_id: sid, summary: 'A so far', first_kept_entry_id: 'a3', tokens_before: 330, entry_id: 'ca' });
    append('a5', 'ca', 'user', 'branch A goes on');
    append('b3', 'e2', 'user', 'branch B asks');
    append('b4', 'b3', 'assistant', 'branch B answers', { input: 300, output: 30 });
    append('b5', 'b4', 'user', 'branch B goes on');
    store.call('session::compact', { session_id: sid, summary: 'B so far', first_kept_entry_id: 'b5', entry_id: 'cb' });
  });
  await page.evaluate(() => window.bench.loadFiles([]));
  await page.click('#sessions li[data-session="s_model"]');
  await page.waitForSelector('#model .boundary[data-entry="cb"]');
  const kept = () => page.$$eval('#model .model-messages li', (lis) => lis.map((li) => li.dataset.entry));
  const total = (which) => page.$$eval(`#model td[data-total="${which}"]`, (tds) => tds.map((td) => td.textContent));
  assert.match(await page.textContent('#model .boundary'), /Compaction cb keeps from b5.*B so far/s);
  assert.deepEqual(await kept(), ['b5'], 'branch B: from its own boundary, the record left out');
  // input, output, cache read, cache write, reasoning, cost, messages (user / assistant / result / custom)
  assert.deepEqual(await total('branch'), ['400', '40', '0', '0', '0', '$0.5000', '3 / 2 / 0 / 0']);
  assert.deepEqual(await total('session'), ['600', '60', '0', '0', '0', '$0.7500', '5 / 3 / 0 / 0']);

  await page.click('#tree .node[data-entry="a5"]');
  await page.waitForSelector('#model .boundary[data-entry="ca"]');
  assert.match(await page.textContent('#model .boundary'), /Compaction ca keeps from a3.*330 tokens before.*A so far/s);
  assert.deepEqual(await kept(), ['a3', 'a4', 'a5'], 'branch A: its compaction, not the newer one of B');
  assert.deepEqual(await total('branch'), ['300', '30', '0', '0', '0', '$0.7500', '3 / 2 / 0 / 0']);

  await page.fill('#budget-input', '12');
  await page.waitForSelector('#model .budget-cut');
  assert.match(await page.textContent('#model .budget-cut'), /Budget cut 1 turn \(2 messages, \d+ tokens\); kept from a5/);
  assert.deepEqual(await kept(), ['a5'], 'the oldest whole turn dropped');
  assert.doesNotMatch(await page.textContent('#model'), /null/);
  await page.fill('#budget-input', '');
  await page.waitForFunction(() => !document.querySelector('#model .budget-cut'));
  assert.deepEqual(await kept(), ['a3', 'a4', 'a5']);
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, 'web-bench-model.png') });
});

test('searches every session and jumps to a hit: in a collapsed run, on another branch', async () => {
  await page.fill('#search-input', '"cargo test"');
  await page.waitForSelector('#search-results li');
  assert.match(await page.textContent('#search-status'), /^\d+ hits?$/);
  const hit = page.locator('#search-results li[data-entry="e_004"]');
  assert.match(await hit.textContent(), /Refactor the parser/);
  assert.deepEqual(await hit.locator('mark').allTextContents(), ['cargo test'], 'the phrase\'s words marked in the snippet');
  await hit.locator('button').click();
  await page.waitForSelector('#transcript .item.search-target[data-entry="e_004"]');
  assert.equal(await page.getAttribute('#sessions li[aria-selected="true"]', 'data-session'), 's_001');

  await page.fill('#search-input', 'alternative');
  await page.waitForSelector('#search-results li[data-entry="e_012"]');
  await page.click('#tree .node[data-entry="e_011"]');
  await page.click('#search-results li[data-entry="e_012"] button');
  await page.waitForSelector('#transcript .item.search-target[data-entry="e_012"]');
  assert.match(await page.getAttribute('#tree .node.leaf-active', 'data-entry'), /e_012/, 'the hit\'s branch is shown');
  await page.fill('#search-input', '');
  assert.equal(await page.isVisible('#search-section'), false);
  await page.click('#tree .node[data-entry="e_011"]');
});

test("opens a pi file and a Claude Code file: their trees, branches and compactions like one of ours", async () => {
  const pi = { id: '01a25087-4ccc-73b6-a622-ea97b3c02370', leaf: '0a610b22', otherLeaf: 'e2f64782', compaction: '67c4e2b6' };
  const claude = {
    id: '7f3c2a10-5b6e-4d2f-9a41-0c8e2b7d9e11',
    leaf: 'c0000000-0000-4000-8000-000000000011',
    otherLeaf: 'c0000000-0000-4000-8000-000000000007',
  };
  await page.setInputFiles('#file-input', [join(OTHER_AGENTS, 'pi-session.jsonl'), join(OTHER_AGENTS, 'claude-code.jsonl')]);
  await page.waitForSelector(`#sessions li[data-session="${claude.id}"]`);
  assert.match(await page.textContent('#status'), /pi-session\.jsonl \(pi\) 13 entries.*claude-code\.jsonl \(claude-code\) 11 entries/);

  await page.click(`#sessions li[data-session="${pi.id}"]`);
  await page.waitForSelector(`#tree .node.leaf-active[data-entry="${pi.leaf}"]`);
  assert.match(await page.textContent('#session-header h2'), /pi sessions on disk/);
  assert.match(await transcriptText(), /Glad to help from the compacted branch\./);
  assert.match(await page.textContent(`#transcript [data-entry="${pi.compaction}"]`), /compaction/);
  await page.click(`#tree .node[data-entry="${pi.otherLeaf}"]`);
  await page.waitForSelector(`#transcript [data-entry="${pi.otherLeaf}"]`);
  assert.match(await transcriptText(), /The last entry of the file\./, "pi's other branch");

  await page.click(`#sessions li[data-session="${claude.id}"]`);
  await page.waitForSelector(`#tree .node.leaf-active[data-entry="${claude.leaf}"]`);
  assert.match(await page.textContent('#session-header h2'), /Claude Code reads the session store/);
  assert.match(await transcriptText(), /Glad to help after the compaction\./);
  await page.click(`#tree .node[data-entry="${claude.otherLeaf}"]`);
  await page.waitForSelector(`#transcript [data-entry="${claude.otherLeaf}"]`);
  assert.match(await transcriptText(), /Where is the fs store then\?/, "Claude Code's other branch");
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, 'web-bench-claude-code.png') });
});
