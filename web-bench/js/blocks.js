// web-bench: renders content blocks and transcript items (messages, custom entries) as DOM.

/** `h('div', { class: 'x' }, child, …)`: a tiny element builder. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else el.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

const json = (value) => JSON.stringify(value, null, 2);

/** `e_3f2a…9c1b` for a long generated id, the id itself when short. */
export function shortId(id) {
  return id.length > 12 ? `${id.slice(0, 6)}…${id.slice(-4)}` : id;
}

/** An id shown shortened, the whole id in its title. */
const idCode = (id) => h('code', { title: id }, shortId(id));

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1 << 20) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1 << 20)).toFixed(1)} MB`;
}

/** One content block. */
export function block(b) {
  switch (b.type) {
    case 'text':
      return h('div', { class: 'text' }, b.text);
    case 'thinking':
      return h('details', { class: 'thinking' }, h('summary', {}, 'Thinking'), h('div', { class: 'text' }, b.text));
    case 'function_call':
      return h('div', { class: 'call' },
        h('span', { class: 'fn' }, b.function_id), ' ', h('code', { class: 'muted' }, b.id),
        h('pre', { class: 'arguments' }, json(b.arguments)));
    case 'function_result':
      return h('div', { class: `result-block${b.is_error ? ' is-error' : ''}` },
        h('div', { class: 'muted' }, `result of ${b.function_call_id}`), b.content.map(block));
    case 'image':
      return b.data
        ? h('img', { class: 'block-image', alt: b.attachment_id ?? 'image', src: `data:${b.mime};base64,${b.data}` })
        : h('span', { class: 'chip' }, `image ${b.attachment_id ?? ''} (data elided)`);
    case 'file':
      return h('span', { class: 'chip', title: b.attachment_id }, 'file ', h('strong', {}, b.name), ` ${b.mime} · ${size(b.size)}`);
    default:
      return h('pre', {}, json(b));
  }
}

/** Head line of an item: role, extra facts, optional action buttons. */
function head(role, facts, actions) {
  return h('div', { class: 'item-head' }, h('span', { class: 'role' }, role), h('span', { class: 'facts' }, facts),
    h('span', { class: 'actions' }, actions));
}

/** A `messages` / `messages-tail` / `messages-range` item (message or custom entry). */
export function item(it, actions = []) {
  const m = it.message;
  if (!m) {
    return h('div', { class: 'item custom-entry', 'data-entry': it.entry_id },
      head(`custom entry · ${it.custom.custom_type}`, idCode(it.entry_id), actions),
      h('pre', {}, json(it.custom.data)));
  }
  const facts = [idCode(it.entry_id)];
  if (m.role === 'assistant') facts.push(` ${m.model} · ${m.stop_reason}`);
  if (m.role === 'function_result') facts.push(` ${m.function_id} ← ${m.function_call_id}${m.is_error ? ' · error' : ''}`);
  if (m.role === 'custom') facts.push(` ${m.custom_type}`);
  if (it.elided) facts.push(' · elided');
  const body = m.content.map(block);
  if (m.role === 'function_result' && m.details !== null && m.details !== undefined) {
    body.push(h('details', {}, h('summary', { class: 'muted' }, 'details'), h('pre', {}, json(m.details))));
  }
  return h('div', { class: `item ${m.role}${it.elided ? ' elided' : ''}`, 'data-entry': it.entry_id },
    head(m.role.replace('_', ' '), facts, actions), body);
}
