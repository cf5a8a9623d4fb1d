// web-bench: the transcript of one session, paged through session::messages-tail (newest page
// first, older pages on demand) with collapsed activity runs expanded through messages-range.
import { h, item } from './blocks.js';

const PAGE_BLOCKS = 20;

export class Transcript {
  /** `hooks.actions(entryId)` returns the buttons shown on each item. */
  constructor(container, store, sessionId, hooks = {}) {
    Object.assign(this, { container, store, sessionId, hooks });
    this.observer = new IntersectionObserver((seen) => {
      if (seen.some((s) => s.isIntersecting)) this.loadOlder();
    }, { root: container.parentElement });
  }

  /** Renders the newest page. */
  open() {
    this.container.replaceChildren();
    this.olderButton = null;
    const page = this.page({});
    this.container.append(...this.nodes(page.messages));
    this.setMore(page);
    this.container.parentElement.scrollTop = this.container.parentElement.scrollHeight;
  }

  page(extra) {
    return this.store.ask('session::messages-tail', { session_id: this.sessionId, limit: PAGE_BLOCKS, ...extra });
  }

  setMore(page) {
    this.oldest = page.oldest_entry_id;
    this.olderButton?.remove();
    this.olderButton = null;
    if (page.has_more) {
      this.olderButton = h('button', { class: 'load-older', onclick: () => this.loadOlder() }, 'Load older');
      this.container.prepend(this.olderButton);
      this.observer.observe(this.olderButton);
    }
  }

  /** Prepends the page before the oldest shown entry, keeping the scroll position. */
  loadOlder() {
    if (!this.olderButton || this.loading) return;
    this.loading = true;
    const scroller = this.container.parentElement;
    const fromBottom = scroller.scrollHeight - scroller.scrollTop;
    const page = this.page({ before_entry_id: this.oldest });
    this.olderButton.after(...this.nodes(page.messages));
    this.setMore(page);
    scroller.scrollTop = scroller.scrollHeight - fromBottom;
    this.loading = false;
  }

  /** Items as DOM; each maximal group of elided items becomes one collapsed-run bar. */
  nodes(items) {
    const out = [];
    for (let i = 0; i < items.length;) {
      if (!items[i].elided) {
        out.push(this.itemNode(items[i++]));
        continue;
      }
      const run = [];
      while (i < items.length && items[i].elided) run.push(items[i++]);
      out.push(this.runNode(run));
    }
    return out;
  }

  itemNode(it) {
    return item(it, this.hooks.actions ? this.hooks.actions(it.entry_id) : []);
  }

  runNode(run) {
    const calls = run.flatMap((it) => (it.message?.content ?? []).filter((b) => b.type === 'function_call'));
    const names = [...new Set(calls.map((c) => c.function_id))].join(', ');
    const bar = h('div', { class: 'run', 'data-run': run.map((it) => it.entry_id).join(' ') },
      h('span', {}, `▸ ${run.length} collapsed entries`), calls.length ? h('span', { class: 'muted' }, `${calls.length} calls: ${names}`) : null,
      h('button', { class: 'expand', onclick: () => bar.replaceWith(...this.expand(run)) }, 'Expand'));
    return bar;
  }

  /** The full entries of a collapsed run, fetched with session::messages-range (paged). */
  expand(run) {
    const ids = run.map((it) => it.entry_id);
    const full = [];
    let cursor;
    do {
      const page = this.store.ask('session::messages-range', { session_id: this.sessionId, entry_ids: ids, cursor });
      full.push(...page.messages);
      cursor = page.next_cursor;
    } while (cursor);
    return full.map((it) => this.itemNode(it));
  }
}
