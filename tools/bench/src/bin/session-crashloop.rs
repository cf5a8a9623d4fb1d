//! session-crashloop: kill -9 crash loop of the worker's handler layer over the fs store (issue 7).
//!
//! The parent spawns this same binary as `child` on one data directory. The child builds the fs
//! runtime exactly like the worker does (`Runtime::build` of an fs adapter, `Worker::call` with no
//! engine: session lock, inline / blocking dispatch of `session_core::catalog`), checks through
//! the store the acknowledged mutations the parent sends it on stdin, retries the appends that were
//! in flight at the last kill (same `entry_id`: idempotent), then runs several concurrent clients
//! doing `session::append` (with `entry_id`), `session::update-message` and `session::fork`
//! forever. Before a call it prints an `S` line, after the call returned `Ok` an ack line (`A`,
//! `U`, `F`); one `write` of less than `PIPE_BUF` each, so a kill never tears a line.
//!
//! The parent SIGKILLs the child after a seeded random delay, reads every ack that reached the
//! pipe, then replays every changed `*.jsonl` file with `session_core::jsonl` and checks that
//! every acknowledged mutation is there (entry with its content, revision >= acknowledged; forks
//! with `forked_from` and the copied path) and that no line was skipped except a torn tail (a torn
//! last line or an incomplete trailing group, what the tail repair cuts).
//! The next child re-checks the newest acks and a random sample of older ones through the store.
//!
//! By default each client has a session of its own. With `--shared-sessions N` client `k` writes
//! session `k % N`, so several clients append, update and fork concurrently on one session: entry
//! ids carry the client (unique across clients), each client updates and forks at its own
//! acknowledged entries only, and a fork's copied path (which then includes other clients'
//! entries appended before the fork point) is checked against the count the fork's answer
//! reported: the fork session's entries and the source's root → fork-point path on disk.
//!
//! `cargo run --release -p session-bench --bin session-crashloop -- --cycles 1000`

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use session_core::catalog::operation;
use session_core::jsonl;
use session_core::Limits;
use session_manager::config::{AdapterConfig, FsAdapterConfig};
use session_manager::emitter::{Delivery, Emitter, Sink};
use session_manager::runtime::{FsFlags, Runtime};
use session_manager::worker::Worker;

#[derive(Debug, Parser)]
#[command(name = "session-crashloop", about = "kill -9 crash loop over the fs store")]
struct Args {
    #[command(subcommand)]
    mode: Option<Mode>,
    /// Kill / restart cycles.
    #[arg(long, default_value_t = 100)]
    cycles: u64,
    /// Concurrent client tasks in the child.
    #[arg(long, default_value_t = 4)]
    clients: u64,
    /// RNG seed (kill delays, child load).
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Shortest delay between the child being ready and the kill, ms.
    #[arg(long, default_value_t = 5)]
    min_delay_ms: u64,
    /// Longest delay between the child being ready and the kill, ms.
    #[arg(long, default_value_t = 250)]
    max_delay_ms: u64,
    /// Client sessions are replaced by new ones every this many cycles (bounds file and fork size).
    #[arg(long, default_value_t = 5)]
    rotate: u64,
    /// Sessions the clients share: client `k` writes session `k % N`, concurrently with the other
    /// clients on it. 0: one session per client.
    #[arg(long, default_value_t = 0)]
    shared_sessions: u64,
    /// Older acknowledged entries the restarted child re-checks through the store, per cycle.
    #[arg(long, default_value_t = 200)]
    sample: usize,
    /// `always` | `group` | `never`.
    #[arg(long, default_value = "group")]
    fsync: String,
    /// Data directory (default: a fresh one under the temp dir, removed on success).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Self-test of the checker: the first child acknowledges one append it never made, so the
    /// run must report it lost and fail.
    #[arg(long, hide = true)]
    sabotage: bool,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// Internal: the process that is killed.
    Child {
        #[arg(long)]
        data_dir: PathBuf,
        #[arg(long)]
        cycle: u64,
        #[arg(long)]
        clients: u64,
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        rotate: u64,
        #[arg(long)]
        shared_sessions: u64,
        #[arg(long)]
        fsync: String,
        #[arg(long)]
        sabotage: bool,
    },
}

/// splitmix64: small, seeded, good enough for delays and op choice.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A child → parent line (and the expectations parent → child).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "k")]
enum Msg {
    /// Child ready: store-level check of the expectations done.
    #[serde(rename = "V")]
    Verified { checked: u64, lost: u64, retried: u64, first: Option<String> },
    /// An append is about to be called (in flight until its ack).
    #[serde(rename = "S")]
    Start { sid: String, eid: String, text: String },
    /// Append acknowledged.
    #[serde(rename = "A")]
    Appended { sid: String, eid: String, text: String, retry: bool },
    /// Update acknowledged at `rev`.
    #[serde(rename = "U")]
    Updated { sid: String, eid: String, rev: u64, text: String },
    /// Fork acknowledged: `new` copies the path of `src` up to `eid` (`count` messages).
    #[serde(rename = "F")]
    Forked { src: String, eid: String, new: String, count: u64 },
    /// A call failed (not acknowledged; unexpected).
    #[serde(rename = "E")]
    Failed { op: String, error: String },
    /// Parent → child: an acknowledged entry to check.
    #[serde(rename = "xe")]
    ExpectEntry { sid: String, eid: String, rev: u64, text: String },
    /// Parent → child: an acknowledged fork to check.
    #[serde(rename = "xf")]
    ExpectFork { src: String, new: String, count: u64 },
    /// Parent → child: an append to retry.
    #[serde(rename = "xr")]
    Retry { sid: String, eid: String, text: String },
}

fn main() -> ExitCode {
    let args = Args::parse();
    match args.mode {
        Some(Mode::Child {
            ref data_dir,
            cycle,
            clients,
            seed,
            rotate,
            shared_sessions,
            ref fsync,
            sabotage,
        }) => {
            let sessions = Sessions { rotate: rotate.max(1), shared: shared_sessions };
            child(data_dir, cycle, clients, seed, sessions, fsync, sabotage)
        }
        None => parent(&args),
    }
}

// ---------------------------------------------------------------------------------------------
// Child

struct NullSink;

#[async_trait::async_trait]
impl Sink for NullSink {
    async fn deliver(&self, _delivery: Delivery) {}
}

/// Stdout shared by the client tasks; each line is one `write` + flush.
#[derive(Clone)]
struct Out(Arc<Mutex<std::io::Stdout>>);

impl Out {
    fn send(&self, msg: &Msg) {
        let mut line = serde_json::to_vec(msg).expect("encode");
        line.push(b'\n');
        let out = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut lock = out.lock();
        // The parent gone means the run is over.
        if lock.write_all(&line).and_then(|()| lock.flush()).is_err() {
            std::process::exit(3);
        }
    }
}

fn message(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
}

async fn call(worker: &Worker, id: &str, payload: Value) -> Result<Value, String> {
    let op = operation(id).ok_or_else(|| format!("{id} unknown"))?;
    worker.call(op, payload).await.map_err(|e| format!("{id}: {e}"))
}

fn entry_text(entry: &Value) -> Option<&str> {
    entry.pointer("/message/content/0/text").and_then(Value::as_str)
}

/// Which session a client writes.
#[derive(Debug, Clone, Copy)]
struct Sessions {
    /// A new generation of sessions every this many cycles.
    rotate: u64,
    /// Sessions shared by the clients (0: one per client).
    shared: u64,
}

impl Sessions {
    /// Client `k`'s session in `cycle`: its own, or shared session `k % shared`.
    fn of(&self, k: u64, cycle: u64) -> String {
        let generation = cycle / self.rotate;
        match self.shared {
            0 => format!("crash-c{k}-g{generation}"),
            n => format!("crash-s{}-g{generation}", k % n),
        }
    }
}

fn child(
    data_dir: &Path,
    cycle: u64,
    clients: u64,
    seed: u64,
    sessions: Sessions,
    fsync: &str,
    sabotage: bool,
) -> ExitCode {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let expectations: Vec<Msg> =
        input.lines().filter(|l| !l.is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let sync: session_manager::SyncMode = fsync.parse().expect("--fsync");
    let adapter = AdapterConfig::Fs(FsAdapterConfig {
        data_dir: data_dir.to_string_lossy().into_owned(),
        fsync: sync,
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    let out = Out(Arc::new(Mutex::new(std::io::stdout())));
    rt.block_on(async move {
        let emitter = Emitter::new(Arc::new(NullSink));
        let url = "ws://crashloop.invalid";
        let runtime =
            Runtime::build(&adapter, url, FsFlags::sync(sync), &emitter).expect("fs runtime");
        let worker = Arc::new(Worker::new(None, url.into(), runtime, Limits::default(), emitter));
        let (mut checked, mut lost, mut retried, mut first) = (0, 0, 0, None);
        let mut note = |what: String, first: &mut Option<String>| {
            lost += 1;
            first.get_or_insert(what);
        };
        for x in &expectations {
            match x {
                Msg::ExpectEntry { sid, eid, rev, text } => {
                    checked += 1;
                    let got = call(
                        &worker,
                        "session::get-message",
                        json!({"session_id": sid, "entry_id": eid}),
                    )
                    .await;
                    let entry = got.as_ref().ok().map(|v| &v["entry"]).filter(|e| e.is_object());
                    match entry {
                        None => note(format!("entry {sid}/{eid} missing: {got:?}"), &mut first),
                        Some(e) => {
                            let r = e["revision"].as_u64().unwrap_or(0);
                            if r < *rev || (r == *rev && entry_text(e) != Some(text)) {
                                note(format!("entry {sid}/{eid} at rev {r}: {e}"), &mut first);
                            }
                        }
                    }
                }
                Msg::ExpectFork { src, new, count } => {
                    checked += 1;
                    let got = call(&worker, "session::get", json!({"session_id": new})).await;
                    let meta = got.as_ref().ok().map(|v| &v["meta"]);
                    let ok = meta.is_some_and(|m| {
                        m["forked_from"].as_str() == Some(src)
                            && m["message_count"].as_u64() == Some(*count)
                    });
                    if !ok {
                        note(format!("fork {new} of {src}: {got:?}"), &mut first);
                    }
                }
                _ => {}
            }
        }
        // Appends in flight at the last kill: retried with the same entry id.
        for x in &expectations {
            if let Msg::Retry { sid, eid, text } = x {
                let ensured = call(&worker, "session::ensure", json!({"session_id": sid})).await;
                let payload = json!({"session_id": sid, "entry_id": eid, "message": message(text)});
                match ensured.and(call(&worker, "session::append", payload).await) {
                    Ok(r) if r["entry_id"].as_str() == Some(eid) => {
                        retried += 1;
                        out.send(&Msg::Appended {
                            sid: sid.clone(),
                            eid: eid.clone(),
                            text: text.clone(),
                            retry: true,
                        });
                    }
                    other => out.send(&Msg::Failed {
                        op: "retry".into(),
                        error: format!("{sid}/{eid}: {other:?}"),
                    }),
                }
            }
        }
        out.send(&Msg::Verified { checked, lost, retried, first });
        if sabotage {
            // Client 0's session, so the parent replays the file that lacks it.
            let (sid, eid) = (sessions.of(0, cycle), "never-written".to_string());
            out.send(&Msg::Appended { sid, eid, text: "never written".into(), retry: false });
        }
        let tasks: Vec<_> = (0..clients)
            .map(|k| {
                let (worker, out) = (worker.clone(), out.clone());
                let rng = Rng(seed ^ (k + 1).wrapping_mul(0xA24B_AED4_963E_E407));
                tokio::spawn(client(worker, out, rng, cycle, k, sessions.of(k, cycle)))
            })
            .collect();
        for t in tasks {
            let _ = t.await;
        }
    });
    ExitCode::SUCCESS
}

/// One client on session `sid` (its own or shared, see [`Sessions::of`]): appends (entry ids
/// unique per cycle and client), updates of its own acknowledged entries, forks at them. Runs
/// until killed.
async fn client(worker: Arc<Worker>, out: Out, mut rng: Rng, cycle: u64, k: u64, sid: String) {
    if let Err(e) = call(&worker, "session::ensure", json!({"session_id": sid})).await {
        out.send(&Msg::Failed { op: "ensure".into(), error: e });
        return;
    }
    // Own entries acknowledged in this run, with their current revision.
    let mut mine: Vec<(String, u64)> = Vec::new();
    for seq in 0u64.. {
        let roll = rng.below(100);
        if mine.is_empty() || roll < 60 {
            let eid = format!("e{cycle}-c{k}-{seq}");
            let text = format!("{eid} {}", "x".repeat(rng.below(200) as usize));
            out.send(&Msg::Start { sid: sid.clone(), eid: eid.clone(), text: text.clone() });
            let payload = json!({"session_id": sid, "entry_id": eid, "message": message(&text)});
            match call(&worker, "session::append", payload).await {
                Ok(_) => {
                    out.send(&Msg::Appended {
                        sid: sid.clone(),
                        eid: eid.clone(),
                        text,
                        retry: false,
                    });
                    mine.push((eid, 0));
                }
                Err(error) => out.send(&Msg::Failed { op: "append".into(), error }),
            }
        } else if roll < 97 {
            let i = rng.below(mine.len() as u64) as usize;
            let eid = mine[i].0.clone();
            let text = format!("upd {eid} #{seq} {}", "y".repeat(rng.below(200) as usize));
            let payload = json!({"session_id": sid, "entry_id": eid,
                "content": [{"type": "text", "text": text}]});
            match call(&worker, "session::update-message", payload).await {
                Ok(r) if r["updated"] == json!(true) => {
                    let rev = r["revision"].as_u64().unwrap_or(0);
                    mine[i].1 = rev;
                    out.send(&Msg::Updated { sid: sid.clone(), eid, rev, text });
                }
                other => {
                    out.send(&Msg::Failed { op: "update".into(), error: format!("{other:?}") })
                }
            }
        } else {
            let eid = mine[rng.below(mine.len() as u64) as usize].0.clone();
            let payload = json!({"session_id": sid, "entry_id": eid});
            match call(&worker, "session::fork", payload).await {
                Ok(r) => {
                    let new = r["session_id"].as_str().unwrap_or_default().to_string();
                    let count = r["meta"]["message_count"].as_u64().unwrap_or(0);
                    out.send(&Msg::Forked { src: sid.clone(), eid, new, count });
                }
                Err(error) => out.send(&Msg::Failed { op: "fork".into(), error }),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parent

#[derive(Debug, Default)]
struct Totals {
    appends: u64,
    retries: u64,
    updates: u64,
    forks: u64,
    lost: u64,
    store_lost: u64,
    store_checked: u64,
    skipped: u64,
    torn_tails: u64,
    unexplained: u64,
    call_errors: u64,
    files_replayed: u64,
}

/// Acknowledged state: what must be on disk.
#[derive(Debug, Default)]
struct Expected {
    /// (sid, eid) → (revision, text at that revision).
    entries: BTreeMap<(String, String), (u64, String)>,
    /// new sid → (source sid, fork entry, copied messages).
    forks: BTreeMap<String, (String, String, u64)>,
    /// In flight at the kill: (sid, eid) → text.
    pending: BTreeMap<(String, String), String>,
}

fn parent(args: &Args) -> ExitCode {
    let exe = std::env::current_exe().expect("current_exe");
    let (dir, temp) = match &args.data_dir {
        Some(d) => (d.clone(), false),
        None => {
            let d = std::env::temp_dir().join(format!("session-crashloop-{}", std::process::id()));
            (d, true)
        }
    };
    std::fs::create_dir_all(&dir).expect("data dir");
    let started = Instant::now();
    let mut rng = Rng(args.seed);
    let mut exp = Expected::default();
    let mut totals = Totals::default();
    let mut stamps: HashMap<PathBuf, (u64, i128, u64)> = HashMap::new();
    let mut failures: Vec<String> = Vec::new();
    let mut fresh: BTreeSet<String> = BTreeSet::new();
    let mut last_acks: Vec<Msg> = Vec::new();
    let mut done = 0;

    for cycle in 0..args.cycles {
        // What the restarted child re-checks through the store: the last cycle's acks and a
        // sample of older entries.
        let mut input = String::new();
        let mut push = |m: &Msg| {
            input.push_str(&serde_json::to_string(m).unwrap());
            input.push('\n');
        };
        for m in last_acks.drain(..) {
            push(&m);
        }
        if !exp.entries.is_empty() {
            let keys: Vec<_> = exp.entries.keys().collect();
            for _ in 0..args.sample.min(keys.len()) {
                let (sid, eid) = keys[rng.below(keys.len() as u64) as usize];
                let (rev, text) = &exp.entries[&(sid.clone(), eid.clone())];
                push(&Msg::ExpectEntry {
                    sid: sid.clone(),
                    eid: eid.clone(),
                    rev: *rev,
                    text: text.clone(),
                });
            }
        }
        for ((sid, eid), text) in std::mem::take(&mut exp.pending) {
            push(&Msg::Retry { sid, eid, text });
        }
        let mut child = Command::new(&exe)
            .args(["child", "--data-dir"])
            .arg(&dir)
            .args(["--cycle", &cycle.to_string(), "--clients", &args.clients.to_string()])
            .args(["--seed", &rng.next().to_string(), "--rotate", &args.rotate.to_string()])
            .args(["--shared-sessions", &args.shared_sessions.to_string()])
            .args(["--fsync", &args.fsync])
            .args(if args.sabotage && cycle == 0 { &["--sabotage"][..] } else { &[] })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn child");
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    // An unterminated last fragment was cut by the kill: never acknowledged.
                    Ok(_) if line.ends_with('\n') => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                    Ok(_) => break,
                }
            }
        });
        // Wait for the child to be ready, then kill it after a random delay.
        let mut lines = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut ready = false;
        while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            let verified = line.starts_with("{\"k\":\"V\"");
            lines.push(line);
            if verified {
                ready = true;
                break;
            }
        }
        if !ready {
            failures.push(format!("cycle {cycle}: the child never became ready"));
        }
        let span = args.max_delay_ms.saturating_sub(args.min_delay_ms) + 1;
        std::thread::sleep(Duration::from_millis(args.min_delay_ms + rng.below(span)));
        if let Ok(Some(status)) = child.try_wait() {
            failures.push(format!("cycle {cycle}: the child exited by itself: {status}"));
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let _ = writer.join();
        let _ = reader.join();
        lines.extend(rx.try_iter());

        for line in &lines {
            let msg: Msg = match serde_json::from_str(line) {
                Ok(m) => m,
                Err(e) => {
                    failures.push(format!("cycle {cycle}: bad child line {line:?}: {e}"));
                    continue;
                }
            };
            match &msg {
                Msg::Verified { checked, lost, first, .. } => {
                    totals.store_checked += checked;
                    totals.store_lost += lost;
                    if let Some(f) = first {
                        failures.push(format!("cycle {cycle}: store check: {f}"));
                    }
                }
                Msg::Start { sid, eid, text } => {
                    exp.pending.insert((sid.clone(), eid.clone()), text.clone());
                }
                Msg::Appended { sid, eid, text, retry } => {
                    let key = (sid.clone(), eid.clone());
                    exp.pending.remove(&key);
                    if *retry {
                        totals.retries += 1;
                    } else {
                        totals.appends += 1;
                    }
                    exp.entries.entry(key).or_insert((0, text.clone()));
                    fresh.insert(sid.clone());
                    last_acks.push(Msg::ExpectEntry {
                        sid: sid.clone(),
                        eid: eid.clone(),
                        rev: 0,
                        text: text.clone(),
                    });
                }
                Msg::Updated { sid, eid, rev, text } => {
                    totals.updates += 1;
                    let slot = exp.entries.entry((sid.clone(), eid.clone())).or_default();
                    if *rev >= slot.0 {
                        *slot = (*rev, text.clone());
                    }
                    fresh.insert(sid.clone());
                    last_acks.push(Msg::ExpectEntry {
                        sid: sid.clone(),
                        eid: eid.clone(),
                        rev: *rev,
                        text: text.clone(),
                    });
                }
                Msg::Forked { src, eid, new, count } => {
                    totals.forks += 1;
                    exp.forks.insert(new.clone(), (src.clone(), eid.clone(), *count));
                    fresh.insert(new.clone());
                    fresh.insert(src.clone());
                    last_acks.push(Msg::ExpectFork {
                        src: src.clone(),
                        new: new.clone(),
                        count: *count,
                    });
                }
                Msg::Failed { op, error } => {
                    totals.call_errors += 1;
                    if totals.call_errors <= 5 {
                        eprintln!("cycle {cycle}: {op} failed: {error}");
                    }
                }
                _ => {}
            }
        }
        check_disk(&dir, &exp, &mut fresh, &mut stamps, &mut totals, &mut failures, cycle);
        done += 1;
        if !failures.is_empty() {
            for f in failures.iter().take(20) {
                eprintln!("{f}");
            }
            break;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let ok = failures.is_empty()
        && totals.lost == 0
        && totals.store_lost == 0
        && totals.unexplained == 0
        && totals.call_errors == 0;
    let acked = totals.appends + totals.retries + totals.updates + totals.forks;
    println!(
        "crashloop: cycles={done} acked={acked} (appends={} retried_appends={} updates={} forks={}) \
         lost={} store_checked={} store_lost={} skipped_lines={} torn_tails={} unexplained_skips={} \
         call_errors={} files_replayed={} duration={secs:.1}s {}",
        totals.appends,
        totals.retries,
        totals.updates,
        totals.forks,
        totals.lost + totals.store_lost,
        totals.store_checked,
        totals.store_lost,
        totals.skipped,
        totals.torn_tails,
        totals.unexplained,
        totals.call_errors,
        totals.files_replayed,
        if ok { "OK" } else { "FAILED" }
    );
    if ok && temp {
        let _ = std::fs::remove_dir_all(&dir);
    } else if !ok {
        eprintln!("data dir kept: {}", dir.display());
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn stamp(meta: &std::fs::Metadata) -> (u64, i128, u64) {
    use std::os::unix::fs::MetadataExt;
    (
        meta.len(),
        i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        meta.ino(),
    )
}

/// Replays every `*.jsonl` file that changed since the last cycle (and those of sessions with new
/// acks), checks the skipped lines and every acknowledged mutation of those sessions.
fn check_disk(
    dir: &Path,
    exp: &Expected,
    fresh: &mut BTreeSet<String>,
    stamps: &mut HashMap<PathBuf, (u64, i128, u64)>,
    totals: &mut Totals,
    failures: &mut Vec<String>,
    cycle: u64,
) {
    let mut todo: BTreeMap<String, PathBuf> = BTreeMap::new();
    for sid in std::mem::take(fresh) {
        let path = dir.join(format!("{}.jsonl", jsonl::enc(&sid)));
        todo.insert(sid, path);
    }
    for item in std::fs::read_dir(dir).expect("read data dir").flatten() {
        let path = item.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        let Some(sid) = name.strip_suffix(".jsonl").and_then(jsonl::dec) else { continue };
        let Ok(meta) = item.metadata() else { continue };
        if stamps.get(&path) != Some(&stamp(&meta)) {
            todo.insert(sid, path);
        }
    }
    // Entries and forks by session.
    let mut by_sid: HashMap<&str, Vec<(&str, u64, &str)>> = HashMap::new();
    for ((sid, eid), (rev, text)) in &exp.entries {
        by_sid.entry(sid).or_default().push((eid, *rev, text));
    }
    for (sid, path) in todo {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                let expected = by_sid.contains_key(sid.as_str()) || exp.forks.contains_key(&sid);
                if expected {
                    totals.lost += 1;
                    failures.push(format!("cycle {cycle}: {} unreadable: {e}", path.display()));
                }
                continue;
            }
        };
        if let Ok(meta) = std::fs::metadata(&path) {
            stamps.insert(path.clone(), stamp(&meta));
        }
        totals.files_replayed += 1;
        let (state, stats) = jsonl::replay(&bytes);
        if stats.skipped > 0 {
            totals.skipped += stats.skipped as u64;
            // Every skipped line lies in what the tail repair cuts (a torn line or group).
            let torn_tail = match jsonl::tail_repair(&bytes) {
                jsonl::TailRepair::Truncate(at) => jsonl::replay(&bytes[..at]).1.skipped == 0,
                _ => false,
            };
            if torn_tail {
                totals.torn_tails += 1;
            } else {
                totals.unexplained += stats.skipped as u64;
                failures.push(format!(
                    "cycle {cycle}: {} skipped {} of {} lines (not only a torn tail)",
                    path.display(),
                    stats.skipped,
                    stats.lines
                ));
            }
        }
        for (eid, rev, text) in by_sid.get(sid.as_str()).into_iter().flatten() {
            let entry = state.entries.get(*eid).map(|e| serde_json::to_value(e).unwrap());
            let ok = entry.as_ref().is_some_and(|e| {
                let r = e["revision"].as_u64().unwrap_or(0);
                r > *rev || (r == *rev && entry_text(e) == Some(*text))
            });
            if !ok {
                totals.lost += 1;
                failures.push(format!("cycle {cycle}: lost {sid}/{eid} rev {rev}: {entry:?}"));
            }
        }
        if let Some((src, eid, count)) = exp.forks.get(&sid) {
            let messages = state.entries.len() as u64;
            let from = state.meta.as_ref().and_then(|m| m.forked_from.as_deref());
            if from != Some(src.as_str()) || messages != *count {
                totals.lost += 1;
                failures.push(format!(
                    "cycle {cycle}: fork {sid} of {src}@{eid}: forked_from {from:?}, {messages} \
                     entries, {count} acknowledged"
                ));
            }
            // The copied path: as long as the source's root → eid path.
            let src_path = dir.join(format!("{}.jsonl", jsonl::enc(src)));
            if let Ok(src_bytes) = std::fs::read(&src_path) {
                let (src_state, _) = jsonl::replay(&src_bytes);
                let mut depth = 0u64;
                let mut at = Some(eid.clone());
                while let Some(id) = at {
                    let Some(e) = src_state.entries.get(&id) else { break };
                    depth += 1;
                    at = e.parent_id().map(str::to_string);
                }
                if depth != *count {
                    totals.lost += 1;
                    failures.push(format!(
                        "cycle {cycle}: fork {sid}: source path to {eid} has {depth} entries, the \
                         fork {count}"
                    ));
                }
            }
        }
    }
}
