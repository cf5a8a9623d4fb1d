// web-bench: a session like a real one, written in the page through the wasm store with generated
// ids (`e_<32 hex>`): long prompts and answers, tool runs, a custom entry and branches three deep.
// `realSession` runs page-side (page.evaluate) and returns `{ sessionId, fileName, text }`.

export async function realSession() {
  const { Store } = await import('./js/wasm.js');
  const store = new Store();
  const { session_id: sid } = store.ask('session::create', {
    title: 'Port the ingest pipeline to the new storage layer and benchmark the write path',
    metadata: { owner: 'u_42' },
  });
  let t = Date.now();
  const append = (message, parent) => store.ask('session::append', { session_id: sid, message: { ...message, timestamp: t++ }, parent_id: parent }).entry_id;
  const user = (text, parent) => append({ role: 'user', content: [{ type: 'text', text }] }, parent);
  const answer = (text, parent) => append({ role: 'assistant', content: [{ type: 'text', text }], model: 'claude-sonnet', provider: 'anthropic', stop_reason: 'end' }, parent);
  const tools = (n, what) => {
    for (let i = 0; i < n; i++) {
      const call = `call_${what}_${i}`;
      append({ role: 'assistant', content: [{ type: 'thinking', text: `Check ${what} step ${i} before changing anything.` },
        { type: 'function_call', id: call, function_id: i % 2 ? 'shell::run' : 'fs::read', arguments: { path: `src/${what}/mod_${i}.rs`, cmd: `cargo test -p ${what}` } }],
      model: 'claude-sonnet', provider: 'anthropic', stop_reason: 'function_call' });
      append({ role: 'function_result', function_call_id: call, function_id: i % 2 ? 'shell::run' : 'fs::read',
        content: [{ type: 'text', text: `ok: ${what} ${i} — ${'lines of output '.repeat(8)}` }] });
    }
  };
  user('We need to move the ingest pipeline off the legacy blob store and onto the new log-structured storage layer. Start by reading the current writer and tell me what it depends on.');
  tools(3, 'ingest');
  answer('The writer depends on three things: the blob client, the retry queue and the schema registry. Only the blob client has to change; the other two already speak the new protocol.');
  const ask = user('Good. Port the writer first and keep the old path behind a flag so we can compare both in production for a week.');
  tools(4, 'writer');
  const ported = answer('The writer is ported: the new path batches records into segments of 4 MiB and fsyncs once per segment; the old path stays behind INGEST_LEGACY=1.');
  answer('Alternative: port the reader first, since it has no flag to hide behind and the writer change is riskier without a reader that understands segments.', ask);
  const bench = user('Now benchmark the write path against the legacy one with the production record mix, and explain the numbers.', ported);
  tools(2, 'bench');
  const numbers = answer('New path: 412 MB/s sustained, p99 append latency 3.1 ms. Legacy: 180 MB/s, p99 11 ms. The gain comes from batching fsyncs per segment rather than per record.');
  append({ role: 'assistant', content: [{ type: 'text', text: 'Retry: measured again with a cold page cache; the new path still leads at 365 MB/s sustained with p99 at 3.8 ms.' }], model: 'claude-sonnet', provider: 'anthropic', stop_reason: 'end' }, bench);
  const deeper = user('What happens to the latency when a segment rolls over while a compaction is running on the same disk?', numbers);
  answer('Rollover under compaction raises p99 to 7.4 ms for about two seconds, then settles; the compactor yields to foreground fsyncs through the IO scheduler.', deeper);
  answer('Shorter answer: p99 doubles briefly during rollover under compaction and recovers within two seconds.', deeper);
  store.ask('session::append', { session_id: sid, custom: { custom_type: 'compaction', data: { summary: 'ingest pipeline ported; write path benchmarked' } } });
  return { sessionId: sid, fileName: Store.fileName(sid), text: store.exportText(sid) };
}
