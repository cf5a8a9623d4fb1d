// web-bench: step-by-step simulation of a loaded log: the calls that rebuild it (from the core's
// simulate module) run one at a time on a fresh deterministic store, each listed with its events
// and the seq each event took in the session's change feed.
import { h } from './blocks.js';
import { eventLine } from './feed.js';
import { Store, simulationSteps } from './wasm.js';

const KEEP_DONE = 200;
const SHOW_PENDING = 5;

function summary(step) {
  const r = step.request;
  const id = r.entry_id ?? r.session_id;
  const role = r.message?.role ?? (r.custom ? `custom ${r.custom.custom_type}` : '');
  return `${step.function_id.replace('session::', '')} ${id}${role ? ` (${role})` : ''}`;
}

export class Simulation {
  /** `onStep(store, sessionId)` runs after every step (to re-render the transcript). */
  constructor(list, progress, fileName, data, onStep) {
    const plan = simulationSteps(fileName, data);
    Object.assign(this, { list, progress, onStep, steps: plan.steps, sessionId: plan.session_id });
    this.reset();
  }

  reset() {
    this.pause();
    this.store = new Store({ deterministic: true });
    this.next = 0;
    this.list.replaceChildren();
    this.renderPending();
    this.onStep(this.store, this.sessionId);
  }

  get done() {
    return this.next >= this.steps.length;
  }

  /** Runs the next call; returns its `{ response, events }` (or `{ error }`). */
  step() {
    if (this.done) return null;
    const step = this.steps[this.next++];
    this.store.setTime(step.at);
    let outcome;
    try {
      outcome = this.store.call(step.function_id, step.request);
    } catch (error) {
      outcome = { error };
    }
    const li = this.list.querySelector('li.pending');
    li?.remove();
    this.list.querySelector('li.current')?.classList.replace('current', 'done');
    const events = (outcome.events ?? []).map(eventLine);
    const node = h('li', { class: 'current', value: this.next }, h('div', {}, summary(step), h('span', { class: 'muted' }, ` · line ${step.line}`)),
      outcome.error ? h('div', { class: 'error-text' }, outcome.error.message) : null,
      events.length ? events : h('div', { class: 'muted' }, 'no events'));
    const firstPending = this.list.querySelector('li.pending');
    if (firstPending) firstPending.before(node); else this.list.append(node);
    while (this.list.querySelectorAll('li.done').length > KEEP_DONE) this.list.querySelector('li.done').remove();
    this.renderPending();
    node.scrollIntoView({ block: 'nearest' });
    this.onStep(this.store, this.sessionId);
    return outcome;
  }

  renderPending() {
    this.list.querySelectorAll('li.pending').forEach((li) => li.remove());
    for (const [i, step] of this.steps.slice(this.next, this.next + SHOW_PENDING).entries()) {
      this.list.append(h('li', { class: 'pending', value: this.next + i + 1 }, summary(step)));
    }
    this.progress.textContent = `${this.next} / ${this.steps.length}`;
  }

  play() {
    if (this.timer) return this.pause();
    this.timer = setInterval(() => (this.done ? this.pause() : this.step()), 120);
  }

  pause() {
    clearInterval(this.timer);
    this.timer = null;
  }
}
