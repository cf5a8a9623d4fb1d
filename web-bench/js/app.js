// web-bench: the page controller: loading files, the session list, selection, branch switching,
// forking, export and the simulation panel, all through the wasm Workspace.
import { h } from './blocks.js';
import { Transcript } from './transcript.js';
import { renderTree } from './tree.js';
import { Simulation } from './simulation.js';
import { loadWasm, Store } from './wasm.js';

const $ = (id) => document.getElementById(id);
const state = { store: null, sources: new Map(), selected: null, simulation: null };

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

function renderSessions() {
  $('sessions').replaceChildren(...allSessions().map((m) => h('li', {
    class: m.session_id === state.selected ? 'selected' : '', 'data-session': m.session_id,
    onclick: () => select(m.session_id),
  }, h('div', { class: 'title' }, m.title || '(untitled)'),
  h('div', { class: 'meta-line' }, h('span', { class: `badge ${m.status}` }, m.status),
    ` ${m.message_count} messages · ${m.kind}`),
  h('div', { class: 'meta-line' }, h('code', {}, m.session_id)))));
}

/** Loads exported .jsonl files (File objects) into the workspace. */
export async function loadFiles(files) {
  await loadWasm();
  let first = null;
  const notes = [];
  for (const file of files) {
    const data = new Uint8Array(await file.arrayBuffer());
    try {
      const info = state.store.load(file.name, data);
      state.sources.set(info.session_id, { fileName: file.name, data });
      notes.push(`${file.name}: ${info.lines} lines${info.skipped ? `, ${info.skipped} skipped` : ''}`);
      first ??= info.session_id;
    } catch (error) {
      notes.push(`${file.name}: ${error.code ?? 'error'} ${error.message}`);
    }
  }
  status(notes.join(' · '));
  renderSessions();
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

/** Shows one session of the main workspace. */
export function select(sessionId) {
  state.simulation?.pause();
  state.simulation = null;
  $('simulation-section').hidden = true;
  state.selected = sessionId;
  const got = state.store.ask('session::get', { session_id: sessionId });
  renderSessions();
  $('session-header').replaceChildren(...(got ? header(got.meta) : [h('h2', {}, sessionId)]));
  new Transcript($('transcript'), state.store, sessionId, { actions: itemActions }).open();
  renderTree($('tree'), state.store, sessionId, switchLeaf);
  $('export-button').disabled = false;
  $('simulate-button').disabled = false;
}

function switchLeaf(entryId) {
  try {
    state.store.call('session::set-active-leaf', { session_id: state.selected, entry_id: entryId });
    status(`active leaf → ${entryId}`);
    select(state.selected);
  } catch (error) {
    status(`${error.code}: ${error.message}`, true);
  }
}

function fork(entryId) {
  try {
    const { response, events } = state.store.call('session::fork', { session_id: state.selected, entry_id: entryId });
    status(`forked at ${entryId} → ${response.session_id} (${events.map((e) => e.trigger_type).join(', ')})`);
    select(response.session_id);
  } catch (error) {
    status(`${error.code}: ${error.message}`, true);
  }
}

function exportSelected() {
  const text = state.store.exportText(state.selected);
  const link = h('a', { href: URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' })), download: Store.fileName(state.selected) });
  document.body.append(link);
  link.click();
  link.remove();
  status(`exported ${Store.fileName(state.selected)} (${text.length} bytes)`);
}

function simulate() {
  const source = state.sources.get(state.selected) ?? {
    fileName: Store.fileName(state.selected), data: state.store.exportText(state.selected),
  };
  $('simulation-section').hidden = false;
  state.simulation = new Simulation($('sim-steps'), $('sim-progress'), source.fileName, source.data, (store, sid) => {
    const got = store.ask('session::get', { session_id: sid });
    $('session-header').replaceChildren(h('div', { class: 'muted' }, 'simulation'), ...(got ? header(got.meta) : [h('h2', {}, sid)]));
    if (!got) return $('transcript').replaceChildren(h('div', { class: 'muted' }, 'not created yet — press Step'));
    new Transcript($('transcript'), store, sid).open();
    renderTree($('tree'), store, sid, () => {});
  });
  status(`simulation of ${state.simulation.sessionId}: ${state.simulation.steps.length} calls`);
}

async function boot() {
  await loadWasm();
  state.store = new Store();
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
  $('sim-step').addEventListener('click', () => state.simulation?.step());
  $('sim-play').addEventListener('click', () => state.simulation?.play());
  $('sim-reset').addEventListener('click', () => state.simulation?.reset());
  window.bench = { state, loadFiles, select };
  document.body.dataset.ready = 'true';
  status('ready — open or drop exported .jsonl files');
}

boot().catch((error) => status(`failed to start: ${error.message}`, true));
