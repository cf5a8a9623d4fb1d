// web-bench: the page controller: loading files, the session list and its trash, selection,
// branch switching, forking, export, search, what the model sees of the shown branch, the simulation panel
// and rebuilding a session from its change feed, all through the wasm Workspace (which a timer
// sweeps every second).
import { h } from './blocks.js';
import { Transcript } from './transcript.js';
import { renderTree, shape } from './tree.js';
import { SessionList, TrashList } from './sessions.js';
import { Simulation } from './simulation.js';
import { showRebuild } from './feed.js';
import { showContext } from './context.js';
import { showSearch } from './search.js';
import { loadWasm, Store } from './wasm.js';

const $ = (id) => document.getElementById(id);
// `trees`: each session's tree shape, read once (entries only change by loading or forking).
const state = { store: null, sources: new Map(), selected: null, simulation: null, transcript: null, trees: new Map(), list: null, trash: null, model: null };
const SWEEP_MS = 1000;

function status(text, isError = false) {
  $('status').textContent = text;
  $('status').style.color = isError ? '#fca5a5' : '';
}

/** Every session's meta, oldest first (session::list pages). */
function allSessions() {
  const metas = [];
  let cursor;
  do {
    const page = state.store.ask('session::list', { limit: 500, order: 'created_asc', cursor });
    metas.push(...page.sessions);
    cursor = page.next_cursor;
  } while (cursor);
  return metas;
}

/** Every trashed session, newest trashed first (session::list-trash pages). */
function allTrashed() {
  const trashed = [];
  for (;;) {
    const page = state.store.ask('session::list-trash', { limit: 500, offset: trashed.length });
    trashed.push(...page.sessions);
    if (page.sessions.length === 0 || trashed.length >= page.total) return trashed;
  }
}

/** Re-reads the live sessions and the trash (`selected` marked); the live metas. */
function refreshLists(selected = state.selected) {
  const live = allSessions();
  state.list.render(live, selected);
  state.trash.render(allTrashed());
  return live;
}

/** Loads session files (File objects: this store's exported logs, pi, Claude Code, OpenAI items, UI messages) into the workspace. */
export async function loadFiles(files) {
  await loadWasm();
  let first = null;
  const notes = [];
  for (const file of files) {
    const data = new Uint8Array(await file.arrayBuffer());
    try {
      const info = state.store.load(file.name, data);
      // Only this store's own logs can be replayed step by step (the simulation).
      if (info.format === 'session-manager') state.sources.set(info.session_id, { fileName: file.name, data });
      else state.sources.delete(info.session_id);
      state.trees.delete(info.session_id);
      const own = info.format === 'session-manager';
      const read = own ? `${info.lines} lines` : `(${info.format}) ${info.lines} entries`;
      notes.push(`${file.name} ${read}${info.skipped ? `, ${info.skipped} skipped` : ''}`);
      first ??= info.session_id;
    } catch (error) {
      notes.push(`${file.name}: ${error.code ?? 'error'} ${error.message}`);
    }
  }
  status(notes.join(' · '));
  $('search-input').disabled = false;
  refreshLists();
  if (first) select(first);
}

function header(meta) {
  const facts = [h('span', { class: `badge ${meta.status}` }, meta.status), ` ${meta.kind} · ${meta.message_count} messages`];
  if (meta.status_reason) facts.push(` · ${meta.status_reason}`);
  if (meta.forked_from) facts.push(` · forked from ${meta.forked_from}`);
  if (meta.metadata) facts.push(` · ${JSON.stringify(meta.metadata)}`);
  const lines = [h('h2', {}, meta.title || '(untitled)'), h('div', { class: 'muted' }, h('code', {}, meta.session_id), ' ', facts)];
  if (meta.description) lines.push(h('div', {}, meta.description));
  return lines;
}

function itemActions(entryId) {
  return [h('button', { class: 'fork', title: 'fork a new session at this entry', onclick: () => fork(entryId) }, 'Fork')];
}

/** Puts a new transcript in the pane (none: `store` null), releasing the previous one's observer. */
function showTranscript(store, sessionId, hooks) {
  state.transcript?.close();
  state.transcript = store ? new Transcript($('transcript'), store, sessionId, hooks).open() : null;
}

/**
 * Shows one session of the main workspace, reading only what it shows: its meta, its active
 * leaf, the newest transcript page, and (the first time only) the tree's shape.
 * `focusEntry`: the tree node to focus afterwards (keyboard activation keeps its place).
 */
export function select(sessionId, focusEntry) {
  state.simulation?.pause();
  state.simulation = null;
  $('simulation-section').hidden = true;
  clearRebuild();
  state.selected = sessionId;
  const got = state.store.ask('session::get', { session_id: sessionId });
  state.list.mark(sessionId, got?.meta);
  $('session-header').replaceChildren(...(got ? header(got.meta) : [h('h2', {}, sessionId)]));
  showTranscript(state.store, sessionId, { actions: itemActions });
  if (!state.trees.has(sessionId)) state.trees.set(sessionId, shape(state.store, sessionId));
  const leaf = state.store.ask('session::store::get-active-leaf', { session_id: sessionId }).entry_id;
  renderTree($('tree'), state.trees.get(sessionId), leaf, switchLeaf, focusEntry);
  showModel(state.store, sessionId, leaf);
  setSessionButtons(true);
}

/** The hits of the typed query (the section hides when it is empty). */
function search() {
  const query = $('search-input').value;
  $('search-section').hidden = !query.trim();
  showSearch($('search-results'), $('search-status'), state.store, query, openHit);
}

/** Whether `entryId` is on the path root → `leaf` of a session's tree shape. */
function onPath(tree, leaf, entryId) {
  for (let id = leaf; id; id = tree.byId.get(id)?.parent) if (id === entryId) return true;
  return false;
}

/**
 * Opens a hit: its session, on the hit's branch (the hit becomes the active leaf when the active
 * path does not hold it), the transcript paged back to the hit and scrolled to it.
 */
function openHit(hit) {
  select(hit.session_id);
  if (!hit.entry_id) return;
  const leaf = state.store.ask('session::store::get-active-leaf', { session_id: hit.session_id }).entry_id;
  if (!onPath(state.trees.get(hit.session_id), leaf, hit.entry_id)) switchLeaf(hit.entry_id);
  const find = () => $('transcript').querySelector(`.item[data-entry="${CSS.escape(hit.entry_id)}"]`);
  const run = () => [...$('transcript').querySelectorAll('.run')].find((r) => r.dataset.run.split(' ').includes(hit.entry_id));
  for (let pages = 0; !find() && !run() && state.transcript?.olderButton && pages < 100; pages++) state.transcript.loadOlder();
  // A hit inside a collapsed activity run: the run opens (through messages-range).
  if (!find() && run()?.querySelector('button.expand[aria-expanded="false"]')) run().querySelector('button.expand').click();
  const target = find();
  if (!target) return status(`${hit.entry_id} is not on the transcript`, true);
  $('transcript').querySelectorAll('.search-target').forEach((el) => el.classList.remove('search-target'));
  target.classList.add('search-target');
  target.scrollIntoView({ block: 'center' });
}

/** The token budget typed in (a positive whole number), or null for none. */
function budget() {
  const value = Number($('budget-input').value);
  return $('budget-input').value !== '' && Number.isInteger(value) && value > 0 ? value : null;
}

/** "What the model sees" for the branch ending at `leaf`, under the typed budget. */
function showModel(store, sessionId, leaf) {
  state.model = { store, sessionId, leaf };
  showContext($('model'), store, sessionId, leaf, budget());
}

function setSessionButtons(enabled) {
  for (const id of ['export-button', 'simulate-button', 'rebuild-button', 'trash-button', 'budget-input']) $(id).disabled = !enabled;
}

/** Shows no session (the last live one went to the trash or was swept). */
function clearSelection() {
  state.simulation?.pause();
  state.simulation = null;
  $('simulation-section').hidden = true;
  clearRebuild();
  state.selected = null;
  $('session-header').replaceChildren();
  showTranscript(null);
  $('transcript').replaceChildren();
  $('tree').replaceChildren();
  $('model').replaceChildren();
  state.model = null;
  setSessionButtons(false);
}

/** The live session now at index `at` (the last when past the end), or null when none is left. */
const neighbour = (live, at) => live[Math.min(at, live.length - 1)]?.session_id ?? null;

/** After the shown session left the live list: shows the session now in its place, or none. */
function selectAfter(live, at, focus) {
  const next = neighbour(live, at);
  if (!next) {
    clearSelection();
    if (focus) document.querySelector('#trash-section summary').focus();
    return;
  }
  select(next);
  if (focus) state.list.focus(next);
}

/**
 * Moves a live session to the trash (session::trash), then re-lists both groups; the shown session
 * gives way to its neighbour. `focus`: keep the keyboard in the list (Delete pressed there).
 */
function trashSession(sessionId, focus = false) {
  try {
    const at = allSessions().findIndex((m) => m.session_id === sessionId);
    const { response, events } = state.store.call('session::trash', { session_id: sessionId });
    if (!response.trashed) return status(`${sessionId} is not a live session`, true);
    status(`moved ${sessionId} to the trash (${events.map((e) => e.trigger_type).join(', ')}), purged ${new Date(response.purge_at).toLocaleString()}`);
    const wasShown = sessionId === state.selected;
    const live = refreshLists(wasShown ? null : state.selected);
    if (wasShown) selectAfter(live, at, focus);
    else if (focus) state.list.focus(neighbour(live, at));
  } catch (error) {
    status(`${error.code}: ${error.message}`, true);
  }
}

/** Brings a trashed session back (session::restore), re-lists both groups and shows it. */
function restoreSession(sessionId) {
  try {
    const { response, events } = state.store.call('session::restore', { session_id: sessionId });
    if (!response.restored) {
      refreshLists();
      return status(`${sessionId} is no longer in the trash`, true);
    }
    status(`restored ${sessionId} (${events.map((e) => e.trigger_type).join(', ')})`);
    refreshLists(sessionId);
    select(sessionId);
    // Its Restore button is gone: the keyboard goes on from the restored session.
    state.list.focus(sessionId);
  } catch (error) {
    status(`${error.code}: ${error.message}`, true);
  }
}

/** session::sweep (expired sessions, trash past its retention); re-lists when it removed any. */
function sweep() {
  let swept;
  try {
    swept = state.store.ask('session::sweep', {});
  } catch (error) {
    return status(`sweep: ${error.code}: ${error.message}`, true);
  }
  if (swept.expired + swept.purged === 0) return;
  status(`sweep: ${swept.expired} expired, ${swept.purged} purged from the trash`);
  const shown = [...$('sessions').querySelectorAll('[role="option"]')].map((o) => o.dataset.session);
  const live = refreshLists();
  if (state.selected && !live.some((m) => m.session_id === state.selected)) {
    selectAfter(live, Math.max(0, shown.indexOf(state.selected)), false);
  }
}

function clearRebuild() {
  $('rebuild-result').replaceChildren();
  delete $('rebuild-result').dataset.matches;
}

/** Rebuilds the shown session (the simulated one while a simulation is open) from its feed. */
function rebuild() {
  const [store, sessionId, where] = state.simulation
    ? [state.simulation.store, state.simulation.sessionId, 'simulation']
    : [state.store, state.selected, 'workspace'];
  if (!sessionId) return;
  const r = showRebuild($('rebuild-result'), store, sessionId, where);
  if (r) status(`rebuilt ${sessionId} from ${r.applied_seq} changes: ${r.matches ? 'matches' : 'differs'}`, !r.matches);
}

function switchLeaf(entryId) {
  try {
    state.store.call('session::set-active-leaf', { session_id: state.selected, entry_id: entryId });
    status(`active leaf → ${entryId}`);
    select(state.selected, entryId);
  } catch (error) {
    status(`${error.code}: ${error.message}`, true);
  }
}

function fork(entryId) {
  try {
    const { response, events } = state.store.call('session::fork', { session_id: state.selected, entry_id: entryId });
    status(`forked at ${entryId} → ${response.session_id} (${events.map((e) => e.trigger_type).join(', ')})`);
    refreshLists(response.session_id);
    select(response.session_id);
  } catch (error) {
    status(`${error.code}: ${error.message}`, true);
  }
}

function exportSelected() {
  const text = state.store.exportText(state.selected);
  const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  const link = h('a', { href: url, download: Store.fileName(state.selected) });
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own reference to the blob once started; let go of the page's.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
  status(`exported ${Store.fileName(state.selected)} (${text.length} bytes)`);
}

function simulate() {
  const source = state.sources.get(state.selected) ?? {
    fileName: Store.fileName(state.selected), data: state.store.exportText(state.selected),
  };
  $('simulation-section').hidden = false;
  state.simulation = new Simulation($('sim-steps'), $('sim-progress'), source.fileName, source.data, (store, sid) => {
    clearRebuild();
    const got = store.ask('session::get', { session_id: sid });
    $('session-header').replaceChildren(h('div', { class: 'muted' }, 'simulation'), ...(got ? header(got.meta) : [h('h2', {}, sid)]));
    if (!got) {
      showTranscript(null);
      $('tree').replaceChildren();
      return $('transcript').replaceChildren(h('div', { class: 'muted' }, 'not created yet — press Step'));
    }
    showTranscript(store, sid);
    // Each step changes the entries, so the simulated tree's shape is read afresh.
    const leaf = store.ask('session::store::get-active-leaf', { session_id: sid }).entry_id;
    renderTree($('tree'), shape(store, sid), leaf, null);
    showModel(store, sid, leaf);
  });
  status(`simulation of ${state.simulation.sessionId}: ${state.simulation.steps.length} calls`);
}

async function boot() {
  await loadWasm();
  state.store = new Store();
  state.list = new SessionList($('sessions'), (sessionId) => select(sessionId), (sessionId) => trashSession(sessionId, true));
  state.trash = new TrashList($('trash'), $('trash-count'), restoreSession);
  state.trash.render([]);
  $('open-button').addEventListener('click', () => $('file-input').click());
  $('file-input').addEventListener('change', (e) => loadFiles([...e.target.files]));
  const zone = document.body;
  zone.addEventListener('dragover', (e) => { e.preventDefault(); $('drop-zone').classList.add('over'); });
  zone.addEventListener('dragleave', () => $('drop-zone').classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    $('drop-zone').classList.remove('over');
    loadFiles([...e.dataTransfer.files].filter((f) => f.name.endsWith('.jsonl')));
  });
  $('export-button').addEventListener('click', exportSelected);
  $('simulate-button').addEventListener('click', simulate);
  $('rebuild-button').addEventListener('click', rebuild);
  $('search-input').addEventListener('input', search);
  $('budget-input').addEventListener('input', () => state.model && showModel(state.model.store, state.model.sessionId, state.model.leaf));
  $('trash-button').addEventListener('click', () => state.selected && trashSession(state.selected));
  $('sim-step').addEventListener('click', () => state.simulation?.step());
  $('sim-play').addEventListener('click', () => state.simulation?.play());
  $('sim-reset').addEventListener('click', () => state.simulation?.reset());
  setInterval(sweep, SWEEP_MS);
  window.bench = { state, loadFiles, select, sweep, search };
  document.body.dataset.ready = 'true';
  status('ready — open or drop exported .jsonl files');
}

boot().catch((error) => status(`failed to start: ${error.message}`, true));
