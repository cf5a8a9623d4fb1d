// web-bench: loads the session-core npm package (its web target, through index.html's import map)
// and wraps a Workspace.
import init, { Workspace, simulationSteps } from 'session-core';

let ready;

/** Loads the wasm module once. */
export function loadWasm() {
  ready ??= init();
  return ready;
}

/** A store with the engine's function surface: `call` returns `{ response, events }`. */
export class Store {
  constructor(options = {}) {
    this.ws = new Workspace(options);
  }
  call(functionId, request) {
    return this.ws.call(functionId, request);
  }
  /** Only the response of a call. */
  ask(functionId, request) {
    return this.ws.call(functionId, request).response;
  }
  /** Opens a session file of this store or of another agent (pi, Claude Code, OpenAI, UI messages). */
  load(fileName, data) {
    return this.ws.loadFile(fileName, data);
  }
  exportText(sessionId) {
    return this.ws.exportJsonl(sessionId);
  }
  setTime(ms) {
    this.ws.setTime(ms);
  }
  /** The session rebuilt from its change feed by the core's replica, and whether it matches. */
  rebuild(sessionId) {
    return this.ws.rebuildFromFeed(sessionId);
  }
  static fileName(sessionId) {
    return Workspace.fileName(sessionId);
  }
}

export { simulationSteps };
