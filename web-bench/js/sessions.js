// web-bench: the session list: one listbox option per live session (title, status, counts,
// shortened id), the selected one marked, keyboard and clicks through listbox.js, Delete moving the
// focused one to the trash; and the Trash group under it: each trashed session with when it was
// trashed and a Restore button.
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
  /** `onChoose(sessionId)` when an option is activated, `onTrash(sessionId)` on Delete. */
  constructor(list, onChoose, onTrash) {
    this.list = list;
    listbox(list, (li) => onChoose(li.dataset.session));
    list.addEventListener('keydown', (event) => {
      const option = event.target.closest('[role="option"]');
      if (!option || event.key !== 'Delete' || event.altKey || event.ctrlKey || event.metaKey) return;
      event.preventDefault();
      onTrash(option.dataset.session);
    });
  }

  /** Focuses the option of `sessionId` (making it the tab stop). */
  focus(sessionId) {
    const option = [...this.list.querySelectorAll('[role="option"]')].find((o) => o.dataset.session === sessionId);
    if (option) rove(this.list, option, true);
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

const clock = (ms) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const day = (ms) => new Date(ms).toLocaleString();

function trashed(t, onRestore) {
  const { meta } = t;
  const title = meta.title || '(untitled)';
  return h('li', { 'data-session': meta.session_id, title: `${title}\n${meta.session_id}\npurged ${day(t.purge_at)}` },
    h('div', { class: 'title' }, title),
    h('div', { class: 'meta-line' },
      h('time', { class: 'trashed-at', datetime: new Date(t.trashed_at).toISOString() }, `trashed ${clock(t.trashed_at)}`),
      ` · ${meta.message_count} messages`),
    h('div', { class: 'id-line meta-line' }, h('code', {}, shortId(meta.session_id)),
      h('button', { class: 'restore', 'aria-label': `Restore ${title}`, onclick: () => onRestore(meta.session_id) }, 'Restore')));
}

/** The Trash group (a `<details>`): its count in the summary, one item per trashed session. */
export class TrashList {
  /** `onRestore(sessionId)` when a Restore button is pressed. */
  constructor(list, count, onRestore) {
    Object.assign(this, { list, count, onRestore });
  }

  /** Replaces the items with `sessions` (`session::list-trash`'s, newest trashed first). */
  render(sessions) {
    this.count.textContent = String(sessions.length);
    this.list.replaceChildren(...(sessions.length
      ? sessions.map((t) => trashed(t, this.onRestore))
      : [h('li', { class: 'empty muted' }, 'nothing in the trash')]));
  }
}
