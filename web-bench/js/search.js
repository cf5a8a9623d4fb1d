// web-bench: the search box: session::search over the loaded workspace, each hit with its
// snippet (occurrences marked from `highlights`, character ranges in code points); activating a
// hit opens its session on the hit's branch and scrolls the transcript to it.
import { h, shortId } from './blocks.js';

/** `snippet` with `highlights` (`[start, end)` in code points) as <mark> elements. */
function marked(snippet, highlights) {
  const chars = Array.from(snippet);
  const parts = [];
  let at = 0;
  for (const [start, end] of highlights) {
    parts.push(chars.slice(at, start).join(''), h('mark', {}, chars.slice(start, end).join('')));
    at = end;
  }
  parts.push(chars.slice(at).join(''));
  return parts;
}

/**
 * Renders the hits of `query` into `list` (`status` says how many); `onOpen(hit)` when one is
 * activated. An empty query clears the list.
 */
export function showSearch(list, status, store, query, onOpen) {
  list.replaceChildren();
  if (!query.trim()) {
    status.textContent = '';
    return null;
  }
  let answer;
  try {
    answer = store.ask('session::search', { query, limit: 20 });
  } catch (error) {
    status.textContent = `${error.code ?? 'error'}: ${error.message}`;
    return null;
  }
  status.textContent = `${answer.hits.length}${answer.next_cursor ? '+' : ''} hit${answer.hits.length === 1 ? '' : 's'}`;
  list.append(...answer.hits.map((hit) => h('li', { 'data-session': hit.session_id, 'data-entry': hit.entry_id ?? '' },
    h('button', { class: 'hit', onclick: () => onOpen(hit) },
      h('span', { class: 'hit-title' }, hit.title || '(untitled)'),
      h('span', { class: 'muted' }, ` · ${hit.entry_id ? `${hit.role ?? hit.kind} ${shortId(hit.entry_id)}` : 'title'}`),
      h('span', { class: 'snippet' }, marked(hit.snippet, hit.highlights))))));
  return answer;
}
