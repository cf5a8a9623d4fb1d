// web-bench: benchmark: gzipped wasm bundle size, and loading + replaying a generated ~50 MB
// exported session in headless Chromium (wasm replay alone, and the whole page opening it).
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { serve, ROOT } from './serve.mjs';
import { launch } from './browser.mjs';

const TARGET_MB = Number(process.env.BENCH_MB ?? 50);
const RUNS = 3;

/** A log like a long agent session: prompts, tool runs with large results, streamed answers. */
function bigSession(targetBytes) {
  const sid = 's_big';
  const meta = { session_id: sid, title: 'Benchmark session', description: '', status: 'idle', kind: 'user',
    created_at: 1_000_000, updated_at: 1_000_000, message_count: 0 };
  const lines = [JSON.stringify({ type: 'meta', meta })];
  let bytes = lines[0].length + 1;
  let n = 0;
  let parent = null;
  const filler = 'lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(40);
  const push = (line) => { lines.push(line); bytes += line.length + 1; };
  const append = (message) => {
    n += 1;
    const id = `e_${String(n).padStart(6, '0')}`;
    const entry = { kind: 'message', id, parent_id: parent, timestamp: 1_000_000 + n, revision: 0, message };
    meta.updated_at = entry.timestamp;
    meta.message_count += 1;
    push(JSON.stringify({ type: 'append', entry, meta }));
    parent = id;
    return entry;
  };
  while (bytes < targetBytes) {
    append({ role: 'user', content: [{ type: 'text', text: `step ${n}: please continue` }], timestamp: n });
    for (let c = 0; c < 3; c++) {
      const call = `c${n}_${c}`;
      append({ role: 'assistant', content: [{ type: 'thinking', text: filler.slice(0, 400) },
        { type: 'function_call', id: call, function_id: 'shell::run', arguments: { cmd: `cargo test ${n}`, env: filler.slice(0, 300) } }],
      stop_reason: 'function_call', model: 'm', provider: 'p', timestamp: n });
      append({ role: 'function_result', function_call_id: call, function_id: 'shell::run',
        content: [{ type: 'text', text: filler }], details: null, is_error: false, timestamp: n });
    }
    const answer = append({ role: 'assistant', content: [], stop_reason: 'end', model: 'm', provider: 'p', timestamp: n });
    for (let r = 1; r <= 2; r++) {
      answer.revision = r;
      answer.message.content = [{ type: 'text', text: filler.slice(0, 500 * r) }];
      push(JSON.stringify({ type: 'entry', entry: answer }));
    }
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const WEB = join(ROOT, 'node_modules', 'session-core', 'web');
const wasm = readFileSync(join(WEB, 'session_wasm_bg.wasm'));
const glue = readFileSync(join(WEB, 'session_wasm.js'));
const size = {
  wasm_bytes: wasm.length, wasm_gzip_bytes: gzipSync(wasm, { level: 9 }).length,
  js_gzip_bytes: gzipSync(glue, { level: 9 }).length,
};

const big = bigSession(TARGET_MB * 1_000_000);
const { server, url } = await serve({ extra: new Map([['/big.jsonl', big]]) });
const browser = await launch();
try {
  const { page } = browser;
  await page.goto(`${url}/index.html`);
  await page.waitForSelector('body[data-ready="true"]');
  const runs = await page.evaluate(async (count) => {
    const { Store } = await import('./js/wasm.js');
    const bytes = new Uint8Array(await (await fetch('/big.jsonl')).arrayBuffer());
    const out = [];
    for (let i = 0; i < count; i++) {
      const store = new Store();
      const t0 = performance.now();
      const info = store.load('s_big.jsonl', bytes);
      const t1 = performance.now();
      const tail = store.ask('session::messages-tail', { session_id: info.session_id, limit: 20 });
      const t2 = performance.now();
      out.push({ load_ms: t1 - t0, first_page_ms: t2 - t1, lines: info.lines, skipped: info.skipped, page_items: tail.messages.length });
    }
    // The whole page: File → arrayBuffer → load → session list, transcript page and entry tree.
    const file = new File([bytes], 's_big.jsonl');
    const t0 = performance.now();
    await window.bench.loadFiles([file]);
    const t1 = performance.now();
    return { runs: out, page_open_ms: t1 - t0 };
  }, RUNS);
  const result = {
    file_mb: +(big.length / 1e6).toFixed(1), lines: runs.runs[0].lines,
    load_replay_ms_median: +median(runs.runs.map((r) => r.load_ms)).toFixed(0),
    first_tail_page_ms_median: +median(runs.runs.map((r) => r.first_page_ms)).toFixed(1),
    page_open_ms: +runs.page_open_ms.toFixed(0),
    ...size,
  };
  console.log(JSON.stringify(result, null, 2));
  const ok = result.load_replay_ms_median < 2000 && size.wasm_gzip_bytes < 250 * 1024;
  console.log(ok ? 'within targets (< 2000 ms, < 250 KB gzip)' : 'OVER TARGET');
  process.exitCode = ok ? 0 : 1;
} finally {
  await browser.close();
  server.close();
}
