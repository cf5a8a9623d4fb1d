// web-bench: the session list: one listbox option per loaded session (title, status, counts,
// shortened id), the selected one marked; keyboard and clicks through listbox.js.
import { h, shortId } from './blocks.js';
import { listbox, rove } from './listbox.js';

function option(meta, selected) {
  const title = meta.title || '(untitled)';
  return h('li', {
    role: 'option', 'data-session': meta.session_id, tabindex: '-1',
    'aria-selected': String(selected), class: selected ? 'selected' : '', title: `${title}\n${meta.session_id}`,
  }, h('div', { class: 'title' }, title),
  h('div', { class: 'meta-line' }, h('span', { class: `badge ${meta.status}` }, meta.status),
    ` ${meta.message_count} messages · ${meta.kind}`),
  h('div', { class: 'id-line meta-line' }, h('code', {}, shortId(meta.session_id))));
}

export class SessionList {
  /** `onChoose(sessionId)` when an option is activated. */
  constructor(list, onChoose) {
    this.list = list;
    listbox(list, (li) => onChoose(li.dataset.session));
  }

  /** Replaces the options with `metas`, `selected` marked. */
  render(metas, selected) {
    this.list.replaceChildren(...metas.map((m) => option(m, m.session_id === selected)));
    this.mark(selected);
  }

  /** Marks `sessionId` selected (and the tab stop) and refreshes its option from `meta`. */
  mark(sessionId, meta) {
    let chosen = null;
    for (const li of this.list.querySelectorAll('[role="option"]')) {
      const on = li.dataset.session === sessionId;
      li.setAttribute('aria-selected', String(on));
      li.classList.toggle('selected', on);
      if (on) chosen = li;
    }
    if (chosen && meta) {
      const focused = document.activeElement === chosen;
      const fresh = option(meta, true);
      chosen.replaceWith(fresh);
      chosen = fresh;
      if (focused) fresh.focus();
    }
    rove(this.list, chosen ?? this.list.querySelector('[role="option"]'));
  }
}
