// tests/ts-consumer negative case: a misspelt request field (`limt`) must be a type error
// (TS2353, or TS2561 with a suggestion), so a front end cannot silently send a field the core ignores.
import { Workspace } from 'session-core';

export function newestPage(ws: Workspace, sessionId: string) {
  return ws.call('session::messages-tail', { session_id: sessionId, limt: 20 });
}
