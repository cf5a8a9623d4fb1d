// web-bench: the entry tree of a session (every branch, not only the active path) as an ARIA
// tree; chains without branching are folded so long sessions stay small; activating a node
// (click, Enter, Space) moves the active leaf. The shape is read once per session (`shape`).
import { h, shortId } from './blocks.js';
import { navigate } from './treekeys.js';


/** `[role, text]` of an entry: its first text, else the functions it calls, else its block kinds. */
function label(entry) {
  if (entry.kind === 'custom') return ['custom', entry.custom_type];
  const m = entry.message;
  const calls = m.content.filter((b) => b.type === 'function_call').map((b) => b.function_id);
  const text = m.content.find((b) => b.type === 'text')?.text
    ?? (calls.length ? `calls ${calls.join(', ')}` : m.content.map((b) => b.type).join(', '));
  const short = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return [m.role === 'function_result' ? 'result' : m.role, short.replace(/\s+/g, ' ')];
}

/** What the tree shows of a session's entries (id, parent, order, label), content dropped. */
export function shape(store, sessionId) {
  const { entries } = store.ask('session::store::list-entries', { session_id: sessionId });
  const byId = new Map(entries.map((e) => [e.id, e]));
  const children = new Map();
  const roots = [];
  for (const e of [...entries].sort((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : 1))) {
    const node = { id: e.id, parent: byId.has(e.parent_id) ? e.parent_id : null, label: label(e) };
    if (node.parent) {
      if (!children.has(node.parent)) children.set(node.parent, []);
      children.get(node.parent).push(node);
    } else roots.push(node);
    byId.set(e.id, node);
  }
  return { byId, children, roots, collapsed: new Set() };
}

/**
 * Renders `tree` (from `shape`) with `leaf` active into `container`; `onSelect(entryId)` on
 * activation (none: nodes only navigate); `focus` = entry id to focus after rendering.
 */
export function renderTree(container, tree, leaf, onSelect, focus) {
  const { byId, children, roots, collapsed } = tree;
  const onPath = new Set();
  for (let id = leaf; id && byId.has(id) && !onPath.has(id); id = byId.get(id).parent) onPath.add(id);

  // One treeitem per shown entry: its row, then the group of what hangs below it.
  const treeitem = (e, level, group, folded = 0) => {
    const open = group ? !collapsed.has(e.id) : undefined;
    const facts = [e.id === leaf ? 'active leaf' : onPath.has(e.id) ? 'on the active path' : '',
      folded ? `${folded} folded entries before it` : ''].filter(Boolean).join(', ');
    const li = h('li', {
      role: 'treeitem', 'data-entry': e.id, 'aria-level': level, 'aria-selected': String(e.id === leaf),
      'aria-expanded': group ? String(open) : undefined, tabindex: '-1',
      'aria-label': `${e.label.join(': ')}${facts ? ` (${facts})` : ''}, ${e.id}`,
    }, h('div', {
      class: `node${onPath.has(e.id) ? ' on-path' : ''}${e.id === leaf ? ' leaf-active' : ''}`,
      title: `${e.id}\n${e.label.join(': ')}`, 'data-entry': e.id,
    }, h('span', { class: 'twisty', 'aria-hidden': 'true' }, group ? (open ? '▾' : '▸') : ''),
    h('span', { class: 'id' }, shortId(e.id)),
    h('span', { class: 'label' }, h('span', { class: 'role' }, e.label[0]), ' ', e.label[1])));
    if (group) {
      group.hidden = !open;
      li.append(group);
    }
    return li;
  };
  const kidsGroup = (e, level) => {
    const kids = children.get(e.id) ?? [];
    return kids.length ? h('ul', { role: 'group', class: 'branches' }, kids.map((k) => chain(k, level))) : null;
  };
  // A chain of single-child entries shows as its first entry holding its last (⋮ n more between).
  const chain = (start, level) => {
    let end = start;
    let length = 1;
    while ((children.get(end.id) ?? []).length === 1) {
      end = children.get(end.id)[0];
      length += 1;
    }
    if (end === start) return treeitem(start, level, kidsGroup(start, level + 1));
    const fold = h('ul', { role: 'group', class: 'fold' },
      length > 2 ? h('li', { role: 'none', class: 'segment', 'aria-hidden': 'true' }, `⋮ ${length - 2} more`) : null,
      treeitem(end, level + 1, kidsGroup(end, level + 2), length - 2));
    return treeitem(start, level, fold);
  };

  const root = h('ul', { role: 'tree', 'aria-label': 'Entry tree' }, roots.map((r) => chain(r, 1)));
  container.replaceChildren(root);
  if (!roots.length) return container.append(h('div', { class: 'muted' }, 'no entries'));
  const items = [...root.querySelectorAll('[role="treeitem"]')];
  const current = items.find((li) => li.dataset.entry === focus) ?? items.find((li) => li.dataset.entry === leaf) ?? items[0];
  current.tabIndex = 0;
  navigate(root, {
    activate: onSelect ? (li) => onSelect(li.dataset.entry) : null,
    toggle: (li, open) => {
      li.querySelector(':scope > [role="group"]').hidden = !open;
      li.setAttribute('aria-expanded', String(open));
      li.querySelector(':scope > .node .twisty').textContent = open ? '▾' : '▸';
      if (open) collapsed.delete(li.dataset.entry); else collapsed.add(li.dataset.entry);
    },
  });
  if (focus) current.focus();
}
