// web-bench: keyboard, screen-reader roles, layout and leak checks of the page: the session list
// (Delete moving a session to the trash, its Restore button bringing it back), entry tree and run
// toggles driven by the keyboard only; what selecting a session reads; the layout at 1400×900 and
// 1024×768 with a session of real generated ids (screenshots in target/).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { serve, ROOT } from './serve.mjs';
import { launch } from './browser.mjs';
import { realSession } from './real-session.mjs';

const FIXTURES = join(ROOT, 'tests', 'fixtures');
const SHOTS = join(ROOT, '..', 'target', 'web-bench');
let server, browser, page;

// Page-side counters: IntersectionObservers made and still connected; object URLs made and revoked.
function instrument() {
  const Native = window.IntersectionObserver;
  const io = (window.__io = { made: 0, live: 0 });
  window.IntersectionObserver = class extends Native {
    constructor(...args) { super(...args); io.made += 1; io.live += 1; this.connected = true; }
    disconnect() { if (this.connected) io.live -= 1; this.connected = false; return super.disconnect(); }
  };
  const urls = (window.__urls = { made: [], revoked: [] });
  const create = URL.createObjectURL.bind(URL);
  const revoke = URL.revokeObjectURL.bind(URL);
  URL.createObjectURL = (blob) => { const url = create(blob); urls.made.push(url); return url; };
  URL.revokeObjectURL = (url) => { urls.revoked.push(url); return revoke(url); };
}

before(async () => {
  server = await serve();
  browser = await launch();
  page = browser.page;
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.addInitScript(instrument);
  await page.goto(`${server.url}/index.html`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.setInputFiles('#file-input', [join(FIXTURES, 's_001.jsonl'), join(FIXTURES, 's_002.jsonl')]);
  await page.waitForSelector('#sessions [role="option"][data-session="s_002"]');
});

after(async () => {
  await browser?.close();
  server?.server.close();
});

const focused = () => page.evaluate(() => {
  const el = document.activeElement;
  return { role: el.getAttribute('role'), entry: el.dataset.entry, session: el.dataset.session, text: el.textContent,
    selected: el.getAttribute('aria-selected'), expanded: el.getAttribute('aria-expanded') };
});

/** Presses Tab (Shift+Tab when `back`) until the focused element matches `selector`. */
async function tabTo(selector, back = false) {
  for (let i = 0; i < 80; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s), selector)) return;
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
  }
  assert.fail(`Tab never reached ${selector}`);
}

const header = () => page.textContent('#session-header h2');

test('roles: a listbox of options, a tree of treeitems, run toggles with aria-expanded', async () => {
  assert.equal(await page.getAttribute('#sessions', 'role'), 'listbox');
  assert.deepEqual(await page.$$eval('#sessions > li', (lis) => lis.map((li) => [li.getAttribute('role'), li.getAttribute('aria-selected')])),
    [['option', 'true'], ['option', 'false']]);
  assert.equal(await page.locator('#tree [role="tree"]').count(), 1);
  assert.equal(await page.locator('#tree [role="treeitem"]').count(), 5, 'e_001, e_007, e_008, e_011, e_012');
  assert.equal(await page.getAttribute('#tree [role="treeitem"][aria-selected="true"]', 'data-entry'), 'e_011');
  assert.equal(await page.getAttribute('#tree [data-entry="e_007"][role="treeitem"]', 'aria-expanded'), 'true');
  assert.equal(await page.getAttribute('#tree [data-entry="e_012"][role="treeitem"]', 'aria-expanded'), null);
  const toggle = page.locator('#transcript .run button.expand');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.equal(await page.locator(`#${await toggle.getAttribute('aria-controls')}`).isHidden(), true);
});

test('keyboard: Tab reaches the session list, arrows move, Enter and Space select', async () => {
  await page.keyboard.press('Escape');
  await page.evaluate(() => document.activeElement?.blur());
  await tabTo('#sessions [role="option"]');
  assert.equal((await focused()).session, 's_001', 'the selected session is the tab stop');
  await page.keyboard.press('ArrowDown');
  assert.equal((await focused()).session, 's_002');
  assert.equal(await header(), 'Refactor the parser', 'moving focus does not select');
  await page.keyboard.press('Enter');
  assert.equal(await header(), 'Empty scratch session');
  assert.equal((await focused()).selected, 'true');
  await page.keyboard.press('Home');
  assert.equal((await focused()).session, 's_001');
  await page.keyboard.press('End');
  assert.equal((await focused()).session, 's_002');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press(' ');
  assert.equal(await header(), 'Refactor the parser');
  assert.deepEqual(await page.$$eval('#sessions [role="option"]', (os) => os.map((o) => [o.dataset.session, o.getAttribute('aria-selected'), o.tabIndex])),
    [['s_001', 'true', 0], ['s_002', 'false', -1]]);
});

test('keyboard: a collapsed run opens with Enter and closes with Space, focus staying on its toggle', async () => {
  await tabTo('#transcript .run button.expand');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#transcript [data-entry="e_002"]');
  let now = await focused();
  assert.equal(now.expanded, 'true');
  assert.equal(now.text, 'Collapse');
  assert.equal(await page.locator('#transcript [data-entry="e_004"]').isVisible(), true);
  await page.keyboard.press(' ');
  now = await focused();
  assert.equal(now.expanded, 'false');
  assert.equal(now.text, 'Expand');
  assert.equal(await page.locator('#transcript [data-entry="e_002"]').isHidden(), true);
  await page.keyboard.press('Enter');
  assert.equal((await focused()).expanded, 'true', 'and opens again from the entries already read');
});

test('keyboard: arrows move in the entry tree, ←/→ close and open, Enter and Space activate', async () => {
  await tabTo('#tree [role="treeitem"]');
  assert.equal((await focused()).entry, 'e_011', 'the active leaf is the tab stop');
  await page.keyboard.press('Home');
  const seen = [(await focused()).entry];
  for (let i = 0; i < 5; i++) {
    await page.keyboard.press('ArrowDown');
    seen.push((await focused()).entry);
  }
  assert.deepEqual(seen, ['e_001', 'e_007', 'e_008', 'e_011', 'e_012', 'e_012']);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#transcript [data-entry="e_012"]');
  assert.match(await page.textContent('#transcript'), /Alternative answer/);
  const after = await focused();
  assert.deepEqual([after.role, after.entry, after.selected], ['treeitem', 'e_012', 'true'], 'focus stays on the activated node, now selected');
  assert.equal(await page.getAttribute('#tree [role="treeitem"][data-entry="e_011"]', 'aria-selected'), 'false');

  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowLeft');
  assert.equal((await focused()).entry, 'e_008', '← on a node without children goes to its parent');
  await page.keyboard.press('ArrowLeft');
  assert.equal((await focused()).expanded, 'false');
  assert.equal(await page.locator('#tree [role="treeitem"][data-entry="e_011"]').isHidden(), true);
  await page.keyboard.press('ArrowDown');
  assert.equal((await focused()).entry, 'e_012', '↓ skips a closed node\'s children');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowRight');
  assert.equal((await focused()).expanded, 'true');
  await page.keyboard.press('ArrowRight');
  assert.equal((await focused()).entry, 'e_011', '→ on an open node enters it');
  await page.keyboard.press(' ');
  await page.waitForSelector('#transcript [data-entry="e_011"]');
  assert.match(await page.textContent('#transcript'), /Thanks — the diagram matches/);
  assert.equal((await focused()).selected, 'true');
  await page.keyboard.press('End');
  assert.equal((await focused()).entry, 'e_012');
});

test('selecting a session reads only what it shows (no re-listing, no re-reading every entry)', async () => {
  await page.evaluate(() => {
    const ws = window.bench.state.store.ws;
    const call = ws.call.bind(ws);
    window.__calls = [];
    ws.call = (id, request) => { window.__calls.push(id); return call(id, request); };
  });
  // The page's once-a-second session::sweep is no read of the selection.
  const reads = async (action) => {
    await page.evaluate(() => { window.__calls.length = 0; });
    await action();
    return page.evaluate(() => window.__calls.filter((id) => id !== 'session::sweep').sort());
  };
  // "What the model sees" reads from the compaction boundary (session::context) and kept totals.
  const shown = ['session::context', 'session::get', 'session::messages-tail', 'session::store::get-active-leaf', 'session::usage'];
  assert.deepEqual(await reads(() => page.click('#sessions [data-session="s_002"]')), shown);
  assert.deepEqual(await reads(() => page.click('#sessions [data-session="s_001"]')), shown);
  assert.deepEqual(await reads(() => page.click('#tree .node[data-entry="e_012"]')), ['session::set-active-leaf', ...shown].sort());
  await page.click('#tree .node[data-entry="e_011"]');
});

test('keyboard: Delete moves the focused session to the trash, its Restore button brings it back', async () => {
  await page.click('#sessions [data-session="s_001"]');
  await page.evaluate(() => document.activeElement?.blur());
  await tabTo('#sessions [role="option"]');
  await page.keyboard.press('ArrowDown');
  assert.equal((await focused()).session, 's_002');
  await page.keyboard.press('Delete');
  await page.waitForSelector('#sessions [data-session="s_002"]', { state: 'detached' });
  const after = await focused();
  assert.deepEqual([after.role, after.session], ['option', 's_001'], 'focus goes on to its neighbour');
  assert.equal(await header(), 'Refactor the parser', 'the shown session stays shown');
  assert.equal(await page.textContent('#trash-count'), '1');
  assert.equal(await page.getAttribute('#sessions', 'aria-describedby'), 'sessions-keys');
  assert.match(await page.textContent('#sessions-keys'), /Delete moves to the trash/);

  await tabTo('#trash-section summary');
  await page.keyboard.press('Enter');
  assert.equal(await page.getAttribute('#trash-section', 'open'), '', 'Enter opens the Trash group');
  await tabTo('#trash button.restore');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Restore Empty scratch session');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#sessions [data-session="s_002"]');
  const restored = await focused();
  assert.deepEqual([restored.role, restored.session, restored.selected], ['option', 's_002', 'true'],
    'the restored session is shown and focused');
  assert.equal(await header(), 'Empty scratch session');
  assert.equal(await page.textContent('#trash-count'), '0');
  assert.deepEqual(await page.$$eval('#sessions [role="option"]', (os) => os.map((o) => [o.dataset.session, o.tabIndex])),
    [['s_001', -1], ['s_002', 0]]);
  await page.keyboard.press('Home');
  await page.keyboard.press('Enter');
  assert.equal(await header(), 'Refactor the parser');
  await tabTo('#trash-section summary');
  await page.keyboard.press(' ');
  assert.equal(await page.getAttribute('#trash-section', 'open'), null, 'Space closes it');
});

test('leaks: one IntersectionObserver connected at a time; exported object URLs are revoked', async () => {
  for (const sid of ['s_002', 's_001', 's_002', 's_001']) await page.click(`#sessions [data-session="${sid}"]`);
  const io = await page.evaluate(() => window.__io);
  assert.ok(io.made >= 4, `observers made: ${io.made}`);
  assert.equal(io.live, 1, 'only the shown transcript observes');
  await Promise.all([page.waitForEvent('download'), page.click('#export-button')]);
  await page.waitForFunction(() => window.__urls.made.length > 0 && window.__urls.made.every((u) => window.__urls.revoked.includes(u)));
});

for (const [width, height] of [[1400, 900], [1024, 768]]) {
  test(`layout at ${width}×${height} with a real session: no horizontal overflow, one-line tree labels`, async (t) => {
    await page.setViewportSize({ width, height });
    if (!(await page.locator('#sessions [role="option"][data-session^="s_"][title*="Port the ingest"]').count())) {
      const real = await page.evaluate(realSession);
      await page.setInputFiles('#file-input', { name: real.fileName, mimeType: 'application/x-ndjson', buffer: Buffer.from(real.text) });
    }
    const sid = await page.getAttribute('#sessions [role="option"][title*="Port the ingest"]', 'data-session');
    await page.click(`#sessions [data-session="${sid}"]`);
    await page.waitForSelector('#tree [role="treeitem"]');
    const facts = await page.evaluate(() => {
      const labels = [...document.querySelectorAll('#tree .node .label')].map((el) => ({
        height: el.getBoundingClientRect().height, line: parseFloat(getComputedStyle(el).lineHeight),
        cut: el.scrollWidth > el.clientWidth,
      }));
      const ids = [...document.querySelectorAll('#tree .node')].map((n) => [n.querySelector('.id').textContent, n.dataset.entry, n.title]);
      const pane = document.getElementById('side-pane').getBoundingClientRect();
      return { scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, labels, ids,
        paneRight: pane.right, treeOverflow: document.getElementById('side-pane').scrollWidth - document.getElementById('side-pane').clientWidth };
    });
    assert.ok(facts.scrollWidth <= facts.innerWidth, `page scrollWidth ${facts.scrollWidth} > ${facts.innerWidth}`);
    assert.ok(facts.paneRight <= facts.innerWidth, `tree pane ends at ${facts.paneRight}`);
    assert.equal(facts.treeOverflow, 0, 'the tree pane does not scroll sideways');
    assert.ok(facts.labels.length >= 10, `${facts.labels.length} labels`);
    for (const l of facts.labels) assert.ok(l.height <= l.line * 1.1, `a label ${l.height}px high, line ${l.line}px`);
    assert.ok(facts.labels.some((l) => l.cut), 'long labels end in an ellipsis rather than wrapping');
    for (const [shown, id, title] of facts.ids) {
      assert.match(id, /^e_[0-9a-f]{32}$/);
      assert.equal(shown, `${id.slice(0, 6)}…${id.slice(-4)}`);
      assert.ok(title.startsWith(id), 'the full id is in the title');
    }
    mkdirSync(SHOTS, { recursive: true });
    const path = join(SHOTS, `layout-${width}x${height}.png`);
    await page.screenshot({ path });
    t.diagnostic(`screenshot: ${path}`);
  });
}
