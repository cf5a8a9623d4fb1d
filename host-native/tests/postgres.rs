//! The postgres adapter against a real PostgreSQL server (`SESSION_MANAGER_TEST_PG_URL`; every
//! test is reported ignored without one): session-core's storage conformance suite on one
//! instance, across two instances (writes through one, reads through the other) and across
//! restarts; its two-instance races (`races::two_instances::*`: calls on both at once); the model test with restarts and instance switches; migrations under concurrency
//! and a newer schema refused; two instances appending to one session at once; a terminated
//! backend connection; a cold instance reading pages from the entry rows (`postgres/cold_reads.rs`);
//! writes decided over a state another instance changed since (`postgres/decided_alone.rs`).

#[path = "postgres/cold_reads.rs"]
mod cold_reads;
mod common;
#[path = "postgres/decided_alone.rs"]
mod decided_alone;

use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};
use session_core::catalog::dispatch;
use session_core::conformance::races::RACES;
use session_core::conformance::{message_entry, sample_meta, CHECKS};
use session_core::meta_order::ListQuery;
use session_core::path::{PathSelect, PathSpot};
use session_core::store::{Applied, ChangeSet};
use session_core::wire::{AttachmentMeta, FeedPage, SessionEntry, SessionMeta};
use session_core::{Env, Limits, ManualClock, SeqIds};
use session_core::{MemStore, Store, StoreError, Write};
use session_manager::pg::PgStore;

use common::pg::{drop_schemas, fresh_config, fresh_store, url, URL_VAR};
use common::{write_strategy, SESSIONS};

/// A test of its own against the test server's URL.
type DbTest = fn(&str) -> Result<(), String>;

fn main() {
    let args = Arguments::from_args();
    let url = url();
    let mut trials = Vec::new();
    for (name, check) in CHECKS.iter().copied() {
        for (variant, make) in [
            ("one_instance", make_one as fn(&str) -> Box<dyn Store>),
            ("two_instances", make_two),
            ("restarted", make_restarting),
        ] {
            let url = url.clone();
            trials.push(Trial::test(format!("conformance::{variant}::{name}"), move || {
                let url = url.expect("ignored without a server");
                check(&|| make(&url)).map_err(Failed::from)
            }));
        }
    }
    for (name, race) in RACES.iter().copied() {
        let url = url.clone();
        trials.push(Trial::test(format!("races::two_instances::{name}"), move || {
            let url = url.expect("ignored without a server");
            let config = fresh_config(&url);
            let open =
                || Arc::new(PgStore::open(&config).expect("opens")) as Arc<dyn Store + Send + Sync>;
            race(&|| [open(), open()]).map_err(Failed::from)
        }));
    }
    let tests: [(&str, DbTest); 11] = [
        ("append_round_trips", append_round_trips),
        ("stale_decisions_are_taken_again", decided_alone::stale_decisions_are_taken_again),
        ("cold_instance_reads_rows", cold_reads::cold_instance_reads_rows),
        ("hot_reload_fs_postgres_fs", hot_reload),
        ("two_instances_deliver_every_event_once", events_across_instances),
        ("migrate_fs_postgres_fs_is_byte_identical", migrate_round_trip),
        ("model_with_restarts_and_two_instances", model),
        ("migrations_run_once_under_concurrency", concurrent_migrations),
        ("newer_schema_is_refused", newer_schema_refused),
        ("two_instances_append_one_chain", concurrent_appends),
        ("terminated_backend_loses_nothing", terminated_backend),
    ];
    for (name, test) in tests {
        let url = url.clone();
        trials.push(Trial::test(name, move || {
            test(&url.expect("ignored without a server")).map_err(Failed::from)
        }));
    }
    if url.is_none() {
        println!("postgres tests skipped (reported ignored): {URL_VAR} is not set");
        trials = trials.into_iter().map(|t| t.with_ignored_flag(true)).collect();
    }
    let conclusion = libtest_mimic::run(&args, trials);
    if let Some(url) = url {
        drop_schemas(&url);
    }
    conclusion.exit();
}

fn make_one(url: &str) -> Box<dyn Store> {
    Box::new(fresh_store(url))
}

fn make_two(url: &str) -> Box<dyn Store> {
    Box::new(TwoInstances::new(url))
}

fn make_restarting(url: &str) -> Box<dyn Store> {
    Box::new(Restarting::new(url))
}

/// Two instances on one schema: every write through `writer`, every read through `reader`.
#[derive(Debug)]
struct TwoInstances {
    writer: PgStore,
    reader: PgStore,
}

impl TwoInstances {
    fn new(url: &str) -> Self {
        let config = fresh_config(url);
        let open = || PgStore::open(&config).expect("opens");
        TwoInstances { writer: open(), reader: open() }
    }
}

/// An instance replaced by a fresh one (an empty cache) after every write.
#[derive(Debug)]
struct Restarting {
    config: session_manager::config::PostgresAdapterConfig,
    store: std::sync::RwLock<PgStore>,
}

impl Restarting {
    fn new(url: &str) -> Self {
        let config = fresh_config(url);
        let store = std::sync::RwLock::new(PgStore::open(&config).expect("opens"));
        Restarting { config, store }
    }
}

/// The reads of a wrapper, forwarded to `$reader`; its writes to `$write`.
macro_rules! forward_store {
    ($ty:ty, |$s:ident| $reader:expr, |$w:ident, $changes:ident| $write:expr) => {
        impl Store for $ty {
            fn get_meta(&self, sid: &str) -> Result<Option<SessionMeta>, StoreError> {
                let $s = self;
                $reader.get_meta(sid)
            }
            fn list_metas(&self) -> Result<Vec<SessionMeta>, StoreError> {
                let $s = self;
                $reader.list_metas()
            }
            fn get_entry(&self, sid: &str, eid: &str) -> Result<Option<SessionEntry>, StoreError> {
                let $s = self;
                $reader.get_entry(sid, eid)
            }
            fn list_entries(&self, sid: &str) -> Result<Vec<SessionEntry>, StoreError> {
                let $s = self;
                $reader.list_entries(sid)
            }
            fn get_active_leaf(&self, sid: &str) -> Result<Option<String>, StoreError> {
                let $s = self;
                $reader.get_active_leaf(sid)
            }
            fn get_attachment(
                &self,
                sid: &str,
                aid: &str,
            ) -> Result<Option<(AttachmentMeta, Vec<u8>)>, StoreError> {
                let $s = self;
                $reader.get_attachment(sid, aid)
            }
            fn get_attachment_meta(
                &self,
                sid: &str,
                aid: &str,
            ) -> Result<Option<AttachmentMeta>, StoreError> {
                let $s = self;
                $reader.get_attachment_meta(sid, aid)
            }
            fn list_attachments(&self, sid: &str) -> Result<Vec<AttachmentMeta>, StoreError> {
                let $s = self;
                $reader.list_attachments(sid)
            }
            fn changes(&self, sid: &str, after: u64, limit: usize) -> Result<FeedPage, StoreError> {
                let $s = self;
                $reader.changes(sid, after, limit)
            }
            fn path_locate(
                &self,
                sid: &str,
                leaf: &str,
                id: Option<&str>,
            ) -> Result<PathSpot, StoreError> {
                let $s = self;
                $reader.path_locate(sid, leaf, id)
            }
            fn path_select(
                &self,
                sid: &str,
                leaf: &str,
                query: &PathSelect,
            ) -> Result<Vec<(usize, SessionEntry)>, StoreError> {
                let $s = self;
                $reader.path_select(sid, leaf, query)
            }
            fn list_page(&self, query: &ListQuery<'_>) -> Result<Vec<SessionMeta>, StoreError> {
                let $s = self;
                $reader.list_page(query)
            }
            fn apply(&self, $changes: &ChangeSet) -> Result<Applied, StoreError> {
                let $w = self;
                $write
            }
        }
    };
}

forward_store!(TwoInstances, |s| s.reader, |w, changes| w.writer.apply(changes));
forward_store!(Restarting, |s| s.store.read().expect("lock"), |w, changes| {
    let applied = w.store.read().expect("lock").apply(changes);
    *w.store.write().expect("lock") = PgStore::open(&w.config).expect("reopens");
    applied
});

#[derive(Debug, Clone)]
enum Step {
    /// A change set through instance 0 or 1.
    Apply(usize, ChangeSet),
    /// Instance 0 or 1 replaced by a fresh one.
    Restart(usize),
}

fn step_strategy() -> impl Strategy<Value = Step> {
    let change = (0usize..2, proptest::sample::select(SESSIONS)).prop_flat_map(|(at, sid)| {
        proptest::collection::vec(write_strategy(sid), 1..4)
            .prop_map(move |writes| Step::Apply(at, ChangeSet { session_id: sid.into(), writes }))
    });
    prop_oneof![10 => change, 1 => (0usize..2).prop_map(Step::Restart)]
}

/// Random change sets through two instances of one schema, restarts between them, against a
/// `MemStore`: after every step both instances read what the model holds (metas, entries,
/// leaves, attachments, feeds), and at the end their indexed reads agree with it.
fn model(url: &str) -> Result<(), String> {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(16);
    let mut runner =
        TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let url = url.to_string();
    runner
        .run(&proptest::collection::vec(step_strategy(), 1..25), move |steps| {
            let config = fresh_config(&url);
            let open = || PgStore::open(&config).expect("opens");
            let mut instances = [open(), open()];
            let model = MemStore::new();
            for step in steps {
                match step {
                    Step::Apply(at, changes) => {
                        let got = instances[at].apply(&changes);
                        let want = model.apply(&changes);
                        prop_assert_eq!(got.is_ok(), want.is_ok(), "{:?} vs {:?}", got, want);
                        if let (Ok(got), Ok(want)) = (got, want) {
                            prop_assert_eq!(got, want);
                        }
                    }
                    Step::Restart(at) => instances[at] = open(),
                }
                for store in &instances {
                    prop_assert_eq!(common::listed(store), common::listed(&model));
                    for sid in SESSIONS {
                        prop_assert_eq!(common::visible(store, sid), common::visible(&model, sid));
                        prop_assert_eq!(store.changes(sid, 0, 100), model.changes(sid, 0, 100));
                    }
                }
            }
            // The indexed reads, once per case (each one a round trip; the walks are many).
            for store in &instances {
                for sid in SESSIONS {
                    let ids: Vec<String> = model
                        .list_entries(sid)
                        .unwrap_or_default()
                        .iter()
                        .map(|e| e.id().to_string())
                        .collect();
                    prop_assert_eq!(
                        common::page_reads(store, sid, &ids),
                        common::page_reads(&model, sid, &ids)
                    );
                    common::indexed_reads_agree(store, None, sid).map_err(TestCaseError::fail)?;
                }
            }
            Ok(())
        })
        .map_err(|e| e.to_string())
}

/// Four instances opening one new schema at once all start, and it is migrated once.
fn concurrent_migrations(url: &str) -> Result<(), String> {
    let config = Arc::new(fresh_config(url));
    let opened: Vec<_> = (0..4)
        .map(|_| {
            let config = config.clone();
            std::thread::spawn(move || PgStore::open(&config).map(|_| ()))
        })
        .collect();
    for handle in opened {
        handle.join().map_err(|_| "an opener panicked")??;
    }
    let versions =
        admin(url, &format!("SELECT count(*)::text FROM {}.schema_version", config.schema))?;
    let want = session_manager::pg::SCHEMA_VERSION.to_string();
    if versions != [want.clone()] {
        return Err(format!("schema_version rows: {versions:?}, want {want} (one per migration)"));
    }
    Ok(())
}

/// A schema a newer build migrated further is refused with a clear error.
fn newer_schema_refused(url: &str) -> Result<(), String> {
    let config = fresh_config(url);
    drop(PgStore::open(&config)?);
    admin(url, &format!("INSERT INTO {}.schema_version VALUES (99)", config.schema))?;
    match PgStore::open(&config) {
        Ok(_) => Err("a schema at version 99 was accepted".into()),
        Err(e) if e.contains("version 99") && e.contains("newer") => Ok(()),
        Err(e) => Err(format!("unclear refusal: {e}")),
    }
}

/// 2 × 50 appends to one session through two instances at once form one chain of 100.
fn concurrent_appends(url: &str) -> Result<(), String> {
    let config = fresh_config(url);
    let a = Arc::new(PgStore::open(&config)?);
    let b = Arc::new(PgStore::open(&config)?);
    let sid = "shared";
    a.apply(&ChangeSet::new(sid).with(Write::PutMeta(sample_meta(sid, 1))))
        .map_err(|e| e.to_string())?;
    let writers: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .enumerate()
        .map(|(w, store)| {
            std::thread::spawn(move || {
                for i in 0..50 {
                    let entry = message_entry(&format!("w{w}-{i}"), None, i, "hi");
                    let set = ChangeSet::new(sid)
                        .with(Write::CommitAppend { entry, parent_explicit: false });
                    let applied = store.apply(&set).map_err(|e| e.to_string())?;
                    if !applied.commit.is_some_and(|c| c.committed) {
                        return Err(format!("append w{w}-{i} not committed"));
                    }
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    for handle in writers {
        handle.join().map_err(|_| "a writer panicked")??;
    }
    for store in [&a, &b] {
        let leaf = store.get_active_leaf(sid).map_err(|e| e.to_string())?.ok_or("no leaf")?;
        let spot = store.path_locate(sid, &leaf, None).map_err(|e| e.to_string())?;
        if spot.len != 100 {
            return Err(format!(
                "the active path holds {} entries, want one chain of 100",
                spot.len
            ));
        }
        let meta = store.get_meta(sid).map_err(|e| e.to_string())?.ok_or("no meta")?;
        if meta.message_count != 100 {
            return Err(format!("message_count {}", meta.message_count));
        }
    }
    Ok(())
}

/// Killing the store's backend connections loses no acknowledged write; calls succeed again once
/// the pool has replaced them.
fn terminated_backend(url: &str) -> Result<(), String> {
    let mut config = fresh_config(url);
    let app = config.schema.clone();
    config.url = format!("{url}?application_name={app}");
    let store = PgStore::open(&config)?;
    let sid = "s";
    store
        .apply(&ChangeSet::new(sid).with(Write::PutMeta(sample_meta(sid, 1))))
        .map_err(|e| e.to_string())?;
    let mut acked = 0;
    for round in 0..5 {
        for i in 0..10 {
            let entry = message_entry(&format!("e{round}-{i}"), None, i, "x");
            let set =
                ChangeSet::new(sid).with(Write::CommitAppend { entry, parent_explicit: false });
            if store.apply(&set).is_ok() {
                acked += 1;
            }
        }
        let killed = admin(
            url,
            &format!(
                "SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_activity \
                 WHERE application_name = '{app}'"
            ),
        )?;
        if killed == ["0"] {
            return Err("no backend of the store was found to terminate".into());
        }
    }
    // The pool drops closed connections and opens new ones: within a few calls reads work again.
    let mut entries = None;
    for _ in 0..20 {
        if let Ok(found) = store.list_entries(sid) {
            entries = Some(found);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let entries = entries.ok_or("the store did not recover after its backends were terminated")?;
    if entries.len() < acked {
        return Err(format!("{acked} appends acknowledged, {} stored", entries.len()));
    }
    if acked < 40 {
        return Err(format!("only {acked} of 50 appends succeeded between terminations"));
    }
    Ok(())
}

/// A data_dir of v1.0.32 files (torn, legacy, malformed lines among them) and sessions the fs
/// store wrote (hostile ids, attachments, streamed deltas, a fork) goes to postgres and back
/// through the `migrate` command with its entry rows current; `export --snapshot` of both
/// data_dirs is byte-identical, and a second run copies nothing.
fn migrate_round_trip(url: &str) -> Result<(), String> {
    use session_core::wire::MessageDelta;
    use session_manager::transfer::{export_all, Format};
    let source = common::fixture("v1_0_32");
    {
        let fs = session_manager::FsStore::open(session_manager::FsConfig::new(source.path()))
            .map_err(|e| e.to_string())?;
        for sid in ["../escape/chat 42:?", "nul\0byte", "ünï €", "plain"] {
            let apply = |w: Vec<Write>| fs.apply(&ChangeSet { session_id: sid.into(), writes: w });
            apply(vec![Write::PutMeta(sample_meta(sid, 1))]).map_err(|e| e.to_string())?;
            for (i, parent) in [(0, None), (1, Some("e0")), (2, Some("e0"))] {
                let entry = message_entry(&format!("e{i}"), parent, i, "text");
                apply(vec![Write::CommitAppend { entry, parent_explicit: parent.is_some() }])
                    .map_err(|e| e.to_string())?;
            }
            let bytes = sid.as_bytes().to_vec();
            let meta = session_core::conformance::attachment_meta(sid, "../a 1", &bytes);
            apply(vec![Write::PutAttachment { meta, bytes }]).map_err(|e| e.to_string())?;
            let delta = MessageDelta {
                session_id: sid.into(),
                entry_id: "e2".into(),
                revision: 1,
                block_index: 0,
                text: Some(" more".into()),
                thinking: None,
            };
            apply(vec![Write::AppendDelta { delta, at: 9 }]).map_err(|e| e.to_string())?;
        }
    }
    let config = fresh_config(url);
    let back = tempfile::tempdir().map_err(|e| e.to_string())?;
    let bin = env!("CARGO_BIN_EXE_session-manager");
    let run = |from: &str, to: &str| -> Result<String, String> {
        let out = std::process::Command::new(bin)
            .args(["migrate", "--from", from, "--to", to, "--schema", &config.schema])
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            return Err(format!("migrate failed: {text}{}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(text)
    };
    let dir = |d: &tempfile::TempDir| d.path().to_string_lossy().into_owned();
    let first = run(&dir(&source), url)?;
    let again = run(&dir(&source), url)?;
    if !again.contains("(0 copied") || !first.contains("verified") {
        return Err(format!("not idempotent: {first} then {again}"));
    }
    // Migrated sessions are read from their entry rows at once (no replay on first read).
    let schema = &config.schema;
    let stale = admin(
        url,
        &format!("SELECT count(*)::text FROM {schema}.sessions WHERE projected <> version"),
    )?;
    if stale != ["0"] {
        return Err(format!("migrated sessions without current entry rows: {stale:?}"));
    }
    run(url, &dir(&back))?;
    let (want, got) = (
        tempfile::tempdir().map_err(|e| e.to_string())?,
        tempfile::tempdir().map_err(|e| e.to_string())?,
    );
    let exported =
        export_all(source.path(), want.path(), Format::Snapshot).map_err(|e| e.to_string())?;
    export_all(back.path(), got.path(), Format::Snapshot).map_err(|e| e.to_string())?;
    if exported.len() < 8 {
        return Err(format!("only {} sessions exported", exported.len()));
    }
    let (want_tree, got_tree) = (common::tree(want.path()), common::tree(got.path()));
    if want_tree != got_tree {
        return Err(format!("exported files differ: {want_tree:?} vs {got_tree:?}"));
    }
    for name in &want_tree {
        let (a, b) = (want.path().join(name), got.path().join(name));
        if a.is_dir() {
            continue;
        }
        if std::fs::read(a).map_err(|e| e.to_string())?
            != std::fs::read(b).map_err(|e| e.to_string())?
        {
            return Err(format!("{name} differs after fs → postgres → fs"));
        }
    }
    Ok(())
}

/// Every delivery an emitter made.
#[derive(Debug, Default)]
struct Recorder(std::sync::Mutex<Vec<session_manager::emitter::Delivery>>);

#[async_trait::async_trait]
impl session_manager::emitter::Sink for Recorder {
    async fn deliver(&self, delivery: session_manager::emitter::Delivery) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(delivery);
    }
}

/// Each recorder's store-events envelopes as `(session, seq, type)`, sorted.
fn seen(recorder: &Recorder) -> Vec<(String, u64, String)> {
    let deliveries = recorder.0.lock().unwrap_or_else(|p| p.into_inner());
    let mut seen: Vec<_> = deliveries
        .iter()
        .filter_map(|d| {
            let e: session_core::wire::EventEnvelope =
                serde_json::from_value(d.payload.clone()).ok()?;
            let sid = e.payload.get("session_id")?.as_str()?.to_string();
            Some((sid, e.change?.seq, e.trigger_type))
        })
        .collect();
    seen.sort();
    seen
}

/// Two workers on one schema, mutations through both: every instance's subscribers receive
/// every event of every mutation once, whichever instance made it, also after the instances'
/// database connections were terminated mid-way, and also the events committed while instance 1
/// was stopped (it goes on where it had delivered when it starts again under its name).
fn events_across_instances(url: &str) -> Result<(), String> {
    use serde_json::json;
    use session_manager::config::AdapterConfig;
    use session_manager::emitter::Emitter;
    use session_manager::runtime::Runtime;
    use session_manager::worker::Worker;
    let mut config = fresh_config(url);
    config.url = format!("{url}?application_name={}", config.schema);
    let app = config.schema.clone();
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let adapter = AdapterConfig::Postgres(config);
    let recorders = [Arc::new(Recorder::default()), Arc::new(Recorder::default())];
    // Instance `i` on its own engine URL (its lasting name), recording into `recorders[i]`.
    let start = |i: usize| -> Result<Worker, String> {
        let emitter = Emitter::new(recorders[i].clone());
        emitter
            .subscriptions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .bind(session_core::events::STORE_EVENTS, "feed", "feed", &json!({}))
            .map_err(|e| e.to_string())?;
        let own = format!("ws://instance-{i}");
        let runtime = rt.block_on(async {
            let (adapter, emitter) = (adapter.clone(), emitter.clone());
            tokio::task::spawn_blocking(move || Runtime::build(&adapter, &own, None, &emitter))
                .await
        });
        let runtime = runtime.map_err(|e| e.to_string())??;
        let limits = session_core::Limits::default();
        Ok(Worker::new(None, "ws://x".into(), runtime, limits, emitter))
    };
    let mut workers = [Some(start(0)?), Some(start(1)?)];
    // Give both followers time to read the outbox head (they deliver what comes after it).
    std::thread::sleep(std::time::Duration::from_millis(300));
    let call = |worker: &Option<Worker>, id: &str, payload: serde_json::Value| {
        let op = session_core::catalog::operation(id).ok_or("no such op")?;
        let worker = worker.as_ref().ok_or("that instance is down")?;
        rt.block_on(worker.call(op, payload)).map_err(|e| format!("{id}: {e}"))
    };
    let mut expected = 0;
    for round in 0..2 {
        // Round 1 runs while instance 1 is down: all through instance 0.
        let through: [usize; 3] = if round == 0 { [0, 1, 0] } else { [0, 0, 0] };
        for (k, at) in through.into_iter().enumerate() {
            let other = if round == 0 { 1 - at } else { 0 };
            let created = call(&workers[at], "session::create", json!({"title": format!("t{k}")}))?;
            let sid = created["session_id"].as_str().ok_or("no session_id")?.to_string();
            let message = json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1});
            call(
                &workers[other],
                "session::append",
                json!({"session_id": sid, "message": message}),
            )?;
            call(
                &workers[at],
                "session::set-status",
                json!({"session_id": sid, "status": "working"}),
            )?;
            expected += 3;
        }
        if round == 0 {
            let killed = admin(url, &format!(
                "SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_activity WHERE application_name = '{app}'"
            ))?;
            if killed == ["0"] {
                return Err("no backend to terminate".into());
            }
            std::thread::sleep(std::time::Duration::from_millis(300));
            // Instance 1 stops (its follower saves how far it delivered) …
            workers[1] = None;
            std::thread::sleep(std::time::Duration::from_millis(400));
        }
    }
    // … and starts again under the same name: it delivers what was committed meanwhile.
    workers[1] = Some(start(1)?);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (a, b) = (seen(&recorders[0]), seen(&recorders[1]));
        if a.len() >= expected && b.len() >= expected {
            let mut once = a.clone();
            once.dedup();
            if a != b || once.len() != a.len() || a.len() != expected {
                return Err(format!(
                    "instance 0 saw {a:?}\ninstance 1 saw {b:?}\n(want {expected} each, once)"
                ));
            }
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "after 10 s: instance 0 saw {} of {expected}, instance 1 {}: {a:?} / {b:?}",
                a.len(),
                b.len()
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A worker on fs hot-reloads onto postgres and back: each store serves what was written to it,
/// subscribers get the resync's events, and a bad postgres config keeps the last good runtime.
fn hot_reload(url: &str) -> Result<(), String> {
    use serde_json::json;
    use session_manager::config::{AdapterConfig, FsAdapterConfig, WorkerConfig};
    use session_manager::emitter::Emitter;
    use session_manager::runtime::Runtime;
    use session_manager::worker::Worker;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let fs = AdapterConfig::Fs(FsAdapterConfig {
        data_dir: dir.path().to_string_lossy().into_owned(),
        fsync: session_manager::SyncMode::Never,
    });
    let pg = AdapterConfig::Postgres(fresh_config(url));
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let recorder = Arc::new(Recorder::default());
    let emitter = Emitter::new(recorder.clone());
    emitter
        .subscriptions
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .bind(session_core::events::STORE_EVENTS, "feed", "feed", &json!({}))
        .map_err(|e| e.to_string())?;
    let runtime = Runtime::build(&fs, "ws://x", None, &emitter)?;
    let worker =
        Worker::new(None, "ws://x".into(), runtime, session_core::Limits::default(), emitter);
    let call = |id: &str, payload: serde_json::Value| -> Result<serde_json::Value, String> {
        let op = session_core::catalog::operation(id).ok_or("no such op")?;
        rt.block_on(worker.call(op, payload)).map_err(|e| format!("{id}: {e}"))
    };
    let titles = |expect: &[&str]| -> Result<(), String> {
        let listed = call("session::list", json!({}))?;
        let mut got: Vec<String> = listed["sessions"]
            .as_array()
            .ok_or("no sessions")?
            .iter()
            .filter_map(|m| m["title"].as_str().map(String::from))
            .collect();
        got.sort();
        if got != expect {
            return Err(format!("listed {got:?}, want {expect:?}"));
        }
        Ok(())
    };
    let config = |adapter: &AdapterConfig| WorkerConfig {
        adapter: adapter.clone(),
        ..WorkerConfig::default()
    };
    call("session::create", json!({"title": "on fs"}))?;
    rt.block_on(session_manager::reload::apply(&worker, config(&pg)));
    if worker.runtime().mode() != "postgres" {
        return Err(format!("still {} after the reload", worker.runtime().mode()));
    }
    titles(&[])?;
    call("session::create", json!({"title": "on postgres"}))?;
    titles(&["on postgres"])?;
    // A database that cannot be reached: the build fails, the postgres runtime stays.
    let mut unreachable = fresh_config(url);
    unreachable.url = "postgres://postgres@127.0.0.1:1/postgres".into();
    rt.block_on(session_manager::reload::apply(
        &worker,
        config(&AdapterConfig::Postgres(unreachable)),
    ));
    titles(&["on postgres"])?;
    rt.block_on(session_manager::reload::apply(&worker, config(&fs)));
    titles(&["on fs"])?;
    // The resyncs announced the sessions that appeared and disappeared with each swap.
    let deliveries = recorder.0.lock().unwrap_or_else(|p| p.into_inner()).len();
    if deliveries < 4 {
        return Err(format!("only {deliveries} events across two creates and two swaps"));
    }
    Ok(())
}

/// One admin query's rows (first column, as text).
fn admin(url: &str, sql: &str) -> Result<Vec<String>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        let rows = client.simple_query(sql).await.map_err(|e| e.to_string())?;
        Ok(rows
            .iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_string),
                _ => None,
            })
            .collect())
    })
}

fn call(store: &dyn Store, env: &Env<'_>, id: &str, payload: Value) -> Result<Value, String> {
    match dispatch(store, env, id, payload) {
        Some(Ok(outcome)) => Ok(outcome.response),
        other => Err(format!("{id}: {other:?}")),
    }
}

/// `session::append`'s round trips between the store and the database (issue 35), counted on the
/// wire by a relay (`common/relay.rs`) on the connection the calls use: one for an append this
/// instance decides alone (the checked write and `COMMIT` in one statement's transaction), two
/// while the session is written by another instance too (`BEGIN` + lock + catch-up, then the
/// writes + `COMMIT`), three for the one append that finds the session moved under its
/// decision. The followers' wake-up goes on a connection of its own, outside the calls.
fn append_round_trips(url: &str) -> Result<(), String> {
    let url = url.to_string();
    let mut config = fresh_config(&url);
    let direct = config.clone();
    let parsed: tokio_postgres::Config = url.parse().map_err(|e| format!("test url: {e}"))?;
    let host = match parsed.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        other => return Err(format!("a TCP test server, not {other:?}")),
    };
    let port = parsed.get_ports().first().copied().unwrap_or(5432);
    let (relay_port, connections) = common::relay::relay(format!("{host}:{port}"));
    config.url = url.replacen(&format!("{host}:{port}"), &format!("127.0.0.1:{relay_port}"), 1);
    if config.url == url {
        return Err("the store must connect through the relay".into());
    }
    // One connection for the calls (the first the relay sees): every call meets the statements
    // it prepared before.
    config.max_connections = 1;
    let store = PgStore::open(&config)?;
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let append = |store: &dyn Store, i: usize| {
        let message = json!({"role": "user", "content": [{"type": "text", "text": format!("m{i}")}], "timestamp": 1});
        call(store, &env, "session::append", json!({"session_id": "s", "message": message}))
    };
    let appends = |from: usize, n: usize| -> Result<Vec<usize>, String> {
        let mut counts = Vec::new();
        for i in from..from + n {
            let before = connections.turns(0);
            append(&store, i)?;
            counts.push(connections.turns(0) - before);
        }
        Ok(counts)
    };
    call(&store, &env, "session::ensure", json!({"session_id": "s"}))?;
    append(&store, 0)?;
    let alone = appends(1, 20)?;
    eprintln!("round trips per append decided alone: {alone:?}");
    if alone.iter().any(|&n| n != 1) {
        return Err(format!("an append decided alone, want 1 round trip each: {alone:?}"));
    }
    // Another instance writes the session: the next append finds it moved, the ones after it
    // lock first.
    let other = PgStore::open(&direct)?;
    append(&other, 21)?;
    let shared = appends(22, 5)?;
    eprintln!("round trips per append, the session written elsewhere: {shared:?}");
    if shared != [3, 2, 2, 2, 2] {
        return Err(format!("after a write elsewhere, want [3, 2, 2, 2, 2]: {shared:?}"));
    }
    if connections.opened() < 2 {
        return Err("the followers' wake-up has a connection of its own".into());
    }
    let meta = call(&store, &env, "session::get", json!({"session_id": "s"}))?;
    if meta["meta"]["message_count"] != 27 {
        return Err(format!("message_count after 27 appends: {meta}"));
    }
    Ok(())
}
