// web-bench: the change feed on the page: the seq (and recorded change) of each event a call
// fired, and the "Rebuild from feed" panel — the session rebuilt from its session::changes pages
// by the core's replica (Workspace.rebuildFromFeed) and whether it matches the store.
import { h, shortId } from './blocks.js';

/** One event of a call: `#seq trigger_type`, the recorded change when it differs, the payload. */
export function eventLine(e) {
  const payloads = [h('pre', {}, JSON.stringify(e.payload, null, 2))];
  if (e.change) payloads.push(h('div', { class: 'muted' }, `recorded as ${e.change.type}:`), h('pre', {}, JSON.stringify(e.change.payload, null, 2)));
  return h('div', { class: 'event' },
    e.seq == null ? null : h('span', { class: 'seq', 'data-seq': e.seq, title: `seq ${e.seq} in the session's change feed` }, `#${e.seq}`),
    h('strong', {}, e.trigger_type),
    e.change ? h('span', { class: 'muted change-type' }, ` → ${e.change.type}`) : null,
    h('details', {}, h('summary', { class: 'muted' }, 'payload'), ...payloads));
}

function entryLine(entry) {
  const what = entry.kind === 'message' ? entry.message.role : `custom ${entry.custom_type}`;
  return h('li', { 'data-entry': entry.id }, h('code', { title: entry.id }, shortId(entry.id)), ` ${what}`,
    entry.revision ? h('span', { class: 'muted' }, ` · rev ${entry.revision}`) : null);
}

/**
 * Rebuilds `sessionId` of `store` from its feed and renders the outcome into `target`
 * (`data-matches` says whether the replica agrees with the store). `where` names the store.
 */
export function showRebuild(target, store, sessionId, where) {
  let r;
  try {
    r = store.rebuild(sessionId);
  } catch (error) {
    target.dataset.matches = 'false';
    return target.replaceChildren(h('div', { class: 'error-text' }, `${error.code ?? 'error'}: ${error.message}`));
  }
  target.dataset.matches = String(r.matches);
  const verdict = r.matches
    ? h('div', { class: 'verdict match' }, `✓ ${sessionId} rebuilt from its feed matches the ${where} store`)
    : h('div', { class: 'verdict differ' }, `✗ ${sessionId} rebuilt from its feed differs from the ${where} store`);
  const facts = `${r.applied} changes applied, seq ${r.applied_seq} of ${r.latest_seq}, ${r.pages} page${r.pages === 1 ? '' : 's'}`;
  const snapshots = r.snapshots.map((s) => `snapshot at seq ${s.at_seq} (${s.reason})`);
  const meta = r.meta
    ? `${r.meta.title || '(untitled)'} · ${r.meta.status} · ${r.meta.message_count} messages · ${r.entries.length} entries`
    : 'no session: the feed ends deleted, or never started';
  const parts = [verdict,
    h('div', { class: 'muted' }, [facts, ...snapshots].join(' · ')),
    h('div', { class: 'rebuilt-meta' }, meta),
    r.difference ? h('pre', { class: 'error-text difference' }, r.difference) : null,
    r.entries.length ? h('details', {}, h('summary', { class: 'muted' }, 'rebuilt entries'), h('ul', { class: 'rebuilt-entries' }, r.entries.map(entryLine))) : null];
  target.replaceChildren(...parts.filter(Boolean));
  return r;
}
