// web-bench: "What the model sees" for the shown branch: session::context (the compaction
// boundary, the kept messages, what a token budget cut, the records it ignored and why) and the
// branch's and session's session::usage totals.
import { h, shortId } from './blocks.js';

const USAGE_COLUMNS = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'];
const ROLES = ['user', 'assistant', 'function_result', 'custom'];

const idCode = (id) => h('code', { title: id }, shortId(id));
const number = (n) => n.toLocaleString('en-US');

/** The first words of a message item: its first text block, else what kind of blocks it holds. */
function preview(it) {
  const m = it.message;
  const text = m.content.find((b) => b.type === 'text')?.text;
  if (text) return text.length > 80 ? `${text.slice(0, 80)}…` : text;
  const kinds = [...new Set(m.content.map((b) => b.type))];
  return kinds.length ? kinds.join(', ') : '(empty)';
}

function boundary(c) {
  if (!c) return h('div', { class: 'boundary none muted' }, 'No compaction on this branch: the model sees it from its first message.');
  return h('div', { class: 'boundary', 'data-entry': c.entry_id },
    h('div', {}, h('strong', {}, 'Compaction '), idCode(c.entry_id), ' keeps from ', idCode(c.first_kept_entry_id),
      c.tokens_before == null ? null : h('span', { class: 'muted' }, ` · ${number(c.tokens_before)} tokens before`)),
    h('div', { class: 'summary text' }, c.summary));
}

function budgetCut(d) {
  if (!d) return null;
  return h('div', { class: 'budget-cut', 'data-first-kept': d.first_kept_entry_id },
    `Budget cut ${d.turns} turn${d.turns === 1 ? '' : 's'} (${d.messages} messages, ${number(d.tokens)} tokens); kept from `,
    idCode(d.first_kept_entry_id),
    d.over_budget ? h('span', { class: 'error-text' }, ' · the last turn alone is over the budget') : null);
}

function usageTable(usage) {
  const cell = (which, measure, text) => h('td', { 'data-total': which, 'data-measure': measure }, text);
  const row = (measure, label, value) => h('tr', {}, h('th', { scope: 'row' }, label),
    cell('branch', measure, value(usage.branch)), cell('session', measure, value(usage.session)));
  return h('table', { class: 'usage' },
    h('caption', { class: 'muted' }, 'Usage totals'),
    h('tr', {}, h('td', {}), h('th', { scope: 'col' }, 'branch'), h('th', { scope: 'col' }, 'session')),
    USAGE_COLUMNS.map((k) => row(k, k.replace('_', ' '), (t) => number(t[k]))),
    row('cost_usd', 'cost', (t) => `$${t.cost_usd.toFixed(4)}`),
    row('messages', 'messages (user / assistant / result / custom)', (t) => ROLES.map((r) => t.messages[r]).join(' / ')));
}

/**
 * Renders what a model is given for the branch ending at `leaf` of `sessionId` into `target`:
 * `budget` (a token count, or null) is passed as `token_budget`. Returns the context read.
 */
export function showContext(target, store, sessionId, leaf, budget) {
  let context, usage;
  try {
    const branch = { session_id: sessionId, ...(leaf ? { leaf } : {}) };
    context = store.ask('session::context', { ...branch, include_image_data: false, ...(budget == null ? {} : { token_budget: budget }) });
    usage = store.ask('session::usage', branch);
  } catch (error) {
    return target.replaceChildren(h('div', { class: 'error-text' }, `${error.code ?? 'error'}: ${error.message}`));
  }
  const kept = h('ol', { class: 'model-messages' }, context.messages.map((it) =>
    h('li', { 'data-entry': it.entry_id, class: it.message.role }, idCode(it.entry_id), ' ',
      h('span', { class: 'role' }, it.message.role.replace('_', ' ')), ' ', h('span', { class: 'muted' }, preview(it)))));
  const ignored = context.ignored.length
    ? h('ul', { class: 'ignored' }, context.ignored.map((i) =>
      h('li', { 'data-entry': i.entry_id }, 'ignored compaction ', idCode(i.entry_id), `: ${i.reason}`)))
    : null;
  target.replaceChildren(...[
    h('div', { class: 'model-total' }, `${context.messages.length} messages · ~${number(context.tokens)} tokens`),
    boundary(context.compaction), budgetCut(context.dropped), kept, ignored, usageTable(usage)].filter(Boolean));
  return context;
}
