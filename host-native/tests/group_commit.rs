//! Group commit inside one session (`fsync: group`, issue 16), through `Worker::call` (session
//! lock, deferred flush, ordered publishing) over an fs store whose flushes are slowed (and once
//! failed) by an IO double: concurrent writers of ONE session share flushes; every acknowledged
//! append is on disk in one chain; events come in the chain's order; a failed flush fails exactly
//! the writes it covered (none of them is on disk, none has an event) and writing goes on; a lone
//! append flushes on its caller's thread.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use session_core::catalog::operation;
use session_core::events::MESSAGE_ADDED;
use session_core::{Limits, Store};
use session_manager::config::{AdapterConfig, FsAdapterConfig};
use session_manager::emitter::{Delivery, Emitter, Sink};
use session_manager::fs::{Fault, FaultyIo, IoOp};
use session_manager::runtime::Runtime;
use session_manager::worker::Worker;
use session_manager::{FsConfig, FsStore, SyncMode};

const WRITERS: usize = 8;
const EACH: usize = 12;

#[derive(Default)]
struct Events(Mutex<Vec<Value>>);

#[async_trait]
impl Sink for Events {
    async fn deliver(&self, d: Delivery) {
        self.0.lock().unwrap().push(d.payload);
    }
}

struct Setup {
    worker: Arc<Worker>,
    io: Arc<FaultyIo>,
    events: Arc<Events>,
    dir: tempfile::TempDir,
}

/// A durable flush of appends in `group` mode: of the data_dir's journal.
fn is_flush(kind: IoOp, path: &std::path::Path) -> bool {
    kind == IoOp::SyncData && path.file_name().is_some_and(|n| n == JOURNAL)
}

const JOURNAL: &str = ".session-journal";

/// A worker over an fs store in `group` mode whose journal flushes take 3 ms.
fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let io = Arc::new(FaultyIo::new());
    io.set_hook(Arc::new(|kind, path| {
        if is_flush(kind, path) {
            std::thread::sleep(Duration::from_millis(3));
        }
    }));
    let cfg = FsConfig::new(dir.path()).sync(SyncMode::Group).io(io.clone());
    let store = Arc::new(FsStore::open(cfg).expect("open"));
    let adapter = AdapterConfig::Fs(FsAdapterConfig {
        data_dir: dir.path().to_string_lossy().into_owned(),
        fsync: SyncMode::Group,
    });
    let events = Arc::new(Events::default());
    let emitter = Emitter::new(events.clone());
    emitter.subscriptions.write().unwrap().bind(MESSAGE_ADDED, "t", "f::x", &Value::Null).unwrap();
    let runtime = Runtime::over(adapter, store);
    let worker = Worker::new(None, "ws://x".into(), runtime, Limits::default(), emitter);
    Setup { worker: Arc::new(worker), io, events, dir }
}

async fn call(w: &Worker, id: &str, payload: Value) -> Result<Value, iii_sdk::Error> {
    w.call(operation(id).unwrap(), payload).await
}

/// `WRITERS` tasks append `EACH` messages each to session `s` at once; (text, acknowledged).
async fn append_together(w: &Arc<Worker>) -> Vec<(String, bool)> {
    let tasks: Vec<_> = (0..WRITERS)
        .map(|k| {
            let w = Arc::clone(w);
            tokio::spawn(async move {
                let mut out = Vec::new();
                for i in 0..EACH {
                    let text = format!("w{k}-{i}");
                    let msg = json!({"role": "user", "content": [{"type": "text", "text": text}],
                        "timestamp": i});
                    let r = call(&w, "session::append", json!({"session_id": "s", "message": msg}));
                    match r.await {
                        Ok(_) => out.push((text, true)),
                        Err(iii_sdk::Error::Remote { code, .. }) => {
                            assert_eq!(code, "session/storage");
                            out.push((text, false));
                        }
                        Err(other) => panic!("{other:?}"),
                    }
                }
                out
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("writer"));
    }
    all
}

fn text_of(v: &Value) -> String {
    v["message"]["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

/// The active path of `s` as the disk holds it (a fresh store), root first: message texts.
fn path_on_disk(dir: &std::path::Path) -> Vec<String> {
    let store = FsStore::open(FsConfig::new(dir).sync(SyncMode::Never)).expect("reopen");
    let leaf = store.get_active_leaf("s").expect("leaf").expect("a leaf");
    let path =
        session_core::path::walk("s", &leaf, |id| store.get_entry("s", id)).expect("one chain");
    path.iter()
        .filter_map(|e| serde_json::to_value(e).ok())
        .map(|e| text_of(&e))
        .filter(|t| !t.is_empty())
        .collect()
}

fn session_flushes(io: &FaultyIo) -> usize {
    let ops = io.ops();
    ops.iter().filter(|(k, p)| is_flush(*k, p)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_of_one_session_share_flushes_and_keep_one_ordered_chain() {
    let s = setup();
    call(&s.worker, "session::ensure", json!({"session_id": "s"})).await.unwrap();
    let before = session_flushes(&s.io);
    let outcomes = append_together(&s.worker).await;
    assert!(outcomes.iter().all(|o| o.1), "every append acknowledged: {outcomes:?}");
    let flushes = session_flushes(&s.io) - before;
    let appends = WRITERS * EACH;
    println!("{flushes} flushes for {appends} appends");
    assert!(flushes * 2 <= appends, "{flushes} flushes for {appends} appends: not grouped");

    let on_disk = path_on_disk(s.dir.path());
    assert_eq!(on_disk.len(), appends, "one chain holding every append");
    let mut per_writer = vec![Vec::new(); WRITERS];
    for t in &on_disk {
        let (k, i) = t[1..].split_once('-').unwrap();
        per_writer[k.parse::<usize>().unwrap()].push(i.parse::<usize>().unwrap());
    }
    for order in per_writer {
        assert_eq!(order, (0..EACH).collect::<Vec<_>>(), "a writer's appends in its order");
    }
    let events: Vec<String> = s.events.0.lock().unwrap().iter().map(text_of).collect();
    assert_eq!(events, on_disk, "message-added events in the chain's order, once each");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_group_flush_fails_exactly_the_writes_it_covered() {
    let s = setup();
    call(&s.worker, "session::ensure", json!({"session_id": "s"})).await.unwrap();
    let warmup =
        json!({"role": "user", "content": [{"type": "text", "text": "warm"}], "timestamp": 0});
    call(&s.worker, "session::append", json!({"session_id": "s", "message": warmup}))
        .await
        .unwrap();
    s.io.fail_next(IoOp::SyncData, JOURNAL, Fault::Io);
    let outcomes = append_together(&s.worker).await;
    assert!(!s.io.fired().is_empty(), "the injected flush fault never fired");
    let failed: HashSet<&str> = outcomes.iter().filter(|o| !o.1).map(|o| o.0.as_str()).collect();
    assert!(!failed.is_empty(), "the failed flush reached nobody");
    assert!(outcomes.iter().any(|o| o.1), "writing went on after the failure");

    // Reads see the same as the disk: the failed writes are gone, the chain is whole.
    let tail = call(&s.worker, "session::messages-tail", json!({"session_id": "s", "limit": 200}))
        .await
        .unwrap();
    let served = tail["messages"].as_array().map_or(0, Vec::len);
    let on_disk = path_on_disk(s.dir.path());
    assert_eq!(served, on_disk.len(), "{tail}");
    let acked: HashSet<&str> = outcomes.iter().filter(|o| o.1).map(|o| o.0.as_str()).collect();
    for t in &on_disk[1..] {
        assert!(acked.contains(t.as_str()), "{t} on disk but not acknowledged");
    }
    assert_eq!(on_disk.len() - 1, acked.len(), "every acknowledged append on disk");
    let events: Vec<String> = s.events.0.lock().unwrap().iter().map(text_of).collect();
    assert_eq!(events, on_disk, "events of acknowledged writes only, in the chain's order");
}

/// A lone append (no other call in progress) flushes on the calling thread, not through a
/// blocking thread; its flush failing fails it, leaves nothing of it on disk or in reads, and the
/// next lone append lands.
#[tokio::test(flavor = "current_thread")]
async fn a_lone_append_flushes_on_its_own_thread_and_fails_alone() {
    let s = setup();
    let caller = std::thread::current().id();
    let flushed_on = Arc::new(Mutex::new(Vec::new()));
    s.io.set_hook(Arc::new({
        let flushed_on = flushed_on.clone();
        move |kind, path| {
            if is_flush(kind, path) {
                flushed_on.lock().unwrap().push(std::thread::current().id());
            }
        }
    }));
    call(&s.worker, "session::ensure", json!({"session_id": "s"})).await.unwrap();
    let append = |text: &str| {
        let msg =
            json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1});
        call(&s.worker, "session::append", json!({"session_id": "s", "message": msg}))
    };
    append("one").await.unwrap();
    flushed_on.lock().unwrap().clear();
    append("two").await.unwrap();
    assert_eq!(*flushed_on.lock().unwrap(), [caller], "one flush, on the caller's thread");

    s.io.fail_next(IoOp::SyncData, JOURNAL, Fault::Io);
    match append("lost").await {
        Err(iii_sdk::Error::Remote { code, .. }) => assert_eq!(code, "session/storage"),
        other => panic!("the failed flush was acknowledged: {other:?}"),
    }
    append("three").await.unwrap();
    assert_eq!(path_on_disk(s.dir.path()), ["one", "two", "three"]);
    let tail = call(&s.worker, "session::messages-tail", json!({"session_id": "s", "limit": 10}))
        .await
        .unwrap();
    let served: Vec<String> = tail["messages"].as_array().unwrap().iter().map(text_of).collect();
    assert_eq!(served, ["one", "two", "three"], "{tail}");
}
