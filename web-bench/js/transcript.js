// web-bench: the transcript of one session, paged through session::messages-tail (newest page
// first, older pages on demand) with collapsed activity runs toggled open through messages-range.
import { h, item } from './blocks.js';

const PAGE_BLOCKS = 20;
let runIds = 0;

export class Transcript {
  /** `hooks.actions(entryId)` returns the buttons shown on each item. Call `close()` when done. */
  constructor(container, store, sessionId, hooks = {}) {
    Object.assign(this, { container, store, sessionId, hooks });
    this.observer = new IntersectionObserver((seen) => {
      if (seen.some((s) => s.isIntersecting)) this.loadOlder();
    }, { root: container.parentElement });
  }

  /** Stops watching the scroll position (the page shows another transcript). */
  close() {
    this.observer.disconnect();
    this.olderButton = null;
  }

  /** Renders the newest page. */
  open() {
    this.container.replaceChildren();
    this.olderButton = null;
    const page = this.page({});
    this.container.append(...this.nodes(page.messages));
    this.setMore(page);
    this.container.parentElement.scrollTop = this.container.parentElement.scrollHeight;
    return this;
  }

  page(extra) {
    return this.store.ask('session::messages-tail', { session_id: this.sessionId, limit: PAGE_BLOCKS, ...extra });
  }

  setMore(page) {
    this.oldest = page.oldest_entry_id;
    if (this.olderButton) {
      this.observer.unobserve(this.olderButton);
      this.olderButton.remove();
    }
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
      out.push(...this.runNodes(run));
    }
    return out;
  }

  itemNode(it) {
    return item(it, this.hooks.actions ? this.hooks.actions(it.entry_id) : []);
  }

  /** A run's bar (its toggle button says expanded or not) and the region its full entries fill. */
  runNodes(run) {
    const calls = run.flatMap((it) => (it.message?.content ?? []).filter((b) => b.type === 'function_call'));
    const names = [...new Set(calls.map((c) => c.function_id))].join(', ');
    const id = `run-${++runIds}`;
    const region = h('div', { id, class: 'run-entries', role: 'group', 'aria-label': `${run.length} entries of the run`, hidden: true });
    const toggle = h('button', {
      class: 'expand', 'aria-expanded': 'false', 'aria-controls': id, 'aria-describedby': `${id}-summary`,
      onclick: () => {
        const open = toggle.getAttribute('aria-expanded') !== 'true';
        if (open && !region.childElementCount) region.append(...this.expand(run));
        region.hidden = !open;
        toggle.setAttribute('aria-expanded', String(open));
        toggle.textContent = open ? 'Collapse' : 'Expand';
        bar.querySelector('.caret').textContent = open ? '▾' : '▸';
      },
    }, 'Expand');
    const bar = h('div', { class: 'run', 'data-run': run.map((it) => it.entry_id).join(' ') },
      h('span', { id: `${id}-summary` }, h('span', { class: 'caret', 'aria-hidden': 'true' }, '▸'), ` ${run.length} collapsed entries`,
        calls.length ? h('span', { class: 'muted' }, ` · ${calls.length} calls: ${names}`) : null),
      toggle);
    return [bar, region];
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
