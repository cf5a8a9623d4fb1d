// web-bench: the entry tree of a session (every branch, not only the active path); chains
// without branching are folded so long sessions stay small; clicking a node moves the active leaf.
import { h } from './blocks.js';

function label(entry) {
  if (entry.kind === 'custom') return `custom · ${entry.custom_type}`;
  const m = entry.message;
  const text = m.content.find((b) => b.type === 'text')?.text ?? m.content.map((b) => b.type).join(', ');
  const short = text.length > 36 ? `${text.slice(0, 36)}…` : text;
  return `${m.role.replace('_', ' ')}${short ? ` · ${short}` : ''}`;
}

/** Renders the tree of `sessionId` into `container`; `onSelect(entryId)` on click. */
export function renderTree(container, store, sessionId, onSelect) {
  const { entries } = store.ask('session::store::list-entries', { session_id: sessionId });
  const leaf = store.ask('session::store::get-active-leaf', { session_id: sessionId }).entry_id;
  const byId = new Map(entries.map((e) => [e.id, e]));
  const children = new Map();
  const roots = [];
  for (const e of [...entries].sort((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : 1))) {
    if (e.parent_id && byId.has(e.parent_id)) {
      if (!children.has(e.parent_id)) children.set(e.parent_id, []);
      children.get(e.parent_id).push(e);
    } else roots.push(e);
  }
  const onPath = new Set();
  for (let id = leaf; id && byId.has(id) && !onPath.has(id); id = byId.get(id).parent_id) onPath.add(id);

  const node = (e) => h('span', {
    class: `node${onPath.has(e.id) ? ' on-path' : ''}${e.id === leaf ? ' leaf-active' : ''}`,
    'data-entry': e.id, title: 'make this the active leaf', onclick: () => onSelect(e.id),
  }, h('span', { class: 'id' }, e.id), label(e));

  // A chain of single-child entries renders as first … last; a branch point lists its children.
  const chain = (start) => {
    const li = h('li');
    const run = [start];
    let e = start;
    while ((children.get(e.id) ?? []).length === 1) {
      e = children.get(e.id)[0];
      run.push(e);
    }
    li.append(node(run[0]));
    if (run.length > 2) li.append(h('div', { class: 'segment' }, `⋮ ${run.length - 2} more`));
    if (run.length > 1) li.append(h('div', {}, node(run[run.length - 1])));
    const kids = children.get(e.id) ?? [];
    if (kids.length) li.append(h('ul', {}, kids.map(chain)));
    return li;
  };
  container.replaceChildren(h('ul', {}, roots.map(chain)));
  if (!entries.length) container.append(h('div', { class: 'muted' }, 'no entries'));
}
