//! The postgres store against a real PostgreSQL server (`SESSION_MANAGER_TEST_PG_URL`; every
//! test is reported ignored without one): session-core's storage conformance suite on one
//! instance, across two instances (writes through one, reads through the other) and across
//! restarts; its two-instance races (`races::two_instances::*`: calls on both at once); the model
//! test with restarts and instance switches; migrations under concurrency and a newer schema
//! refused; two instances appending to one session at once; a terminated backend connection; a
//! cold instance reading pages from the entry rows (`postgres/cold_reads.rs`); writes decided over
//! a state another instance changed since (`postgres/decided_alone.rs`); an append's round trips;
//! a delete and an erasure that leave no row behind (`postgres/deleted.rs`); search through the
//! index across instances, over rows an older build wrote, and against the scan
//! (`postgres/searched.rs`).
//! The worker's postgres tests (hot reload, events across instances, migrate) are the worker's
//! (`host-native/tests/postgres.rs`).

#[path = "postgres/cold_reads.rs"]
mod cold_reads;
mod common;
#[path = "postgres/decided_alone.rs"]
mod decided_alone;
#[path = "postgres/deleted.rs"]
mod deleted;
#[path = "postgres/searched.rs"]
mod searched;

use std::sync::Arc;

use libtest_mimic::{Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};
use session_core::catalog::dispatch;
use session_core::conformance::races::RACES;
use session_core::conformance::{message_entry, sample_meta, CHECKS};
use session_core::meta_order::ListQuery;
use session_core::path::{PathSelect, PathSpot};
use session_core::search::index::{Found, SearchIndex, Wanted};
use session_core::search::Query;
use session_core::store::{Applied, ChangeSet};
use session_core::wire::{AttachmentMeta, FeedPage, SessionEntry, SessionMeta};
use session_core::{Env, Limits, ManualClock, SeqIds};
use session_core::{MemStore, Store, StoreError, Write};
use session_store_postgres::PgStore;

use common::pg::{admin, db_trials, fresh_config, fresh_store, run_trials, url, DbTest};
use common::{write_strategy, SESSIONS};

fn main() {
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
    let tests: [(&str, DbTest); 15] = [
        (
            "search_finds_writes_of_another_instance",
            searched::writes_are_found_through_another_instance,
        ),
        ("search_reads_rows_without_terms", searched::rows_without_terms_are_read),
        ("search_answers_as_the_scan", searched::the_index_answers_as_the_scan),
        ("search_tiers_are_migrated", searched::version_7_rows_get_their_tiers),
        ("search_pending_lists_stay_short", searched::the_pending_lists_stay_short),
        ("a_delete_leaves_no_row", deleted::a_delete_leaves_no_row),
        ("an_erased_tenant_leaves_no_row_behind", deleted::an_erased_tenant_leaves_no_row_behind),
        ("append_round_trips", append_round_trips),
        ("stale_decisions_are_taken_again", decided_alone::stale_decisions_are_taken_again),
        ("cold_instance_reads_rows", cold_reads::cold_instance_reads_rows),
        ("model_with_restarts_and_two_instances", model),
        ("migrations_run_once_under_concurrency", concurrent_migrations),
        ("newer_schema_is_refused", newer_schema_refused),
        ("two_instances_append_one_chain", concurrent_appends),
        ("terminated_backend_loses_nothing", terminated_backend),
    ];
    trials.extend(db_trials(&tests, &url));
    run_trials(trials, url)
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
    config: session_store_postgres::PostgresAdapterConfig,
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
            fn lifecycle(
                &self,
                sid: &str,
            ) -> Result<session_core::lifecycle::Lifecycle, StoreError> {
                let $s = self;
                $reader.lifecycle(sid)
            }
            fn list_lifecycles(
                &self,
            ) -> Result<Vec<(String, session_core::lifecycle::Lifecycle)>, StoreError> {
                let $s = self;
                $reader.list_lifecycles()
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
            fn usage(
                &self,
                sid: &str,
                leaf: Option<&str>,
            ) -> Result<(session_core::usage::Tally, session_core::usage::Tally), StoreError> {
                let $s = self;
                $reader.usage(sid, leaf)
            }
            fn list_page(&self, query: &ListQuery<'_>) -> Result<Vec<SessionMeta>, StoreError> {
                let $s = self;
                $reader.list_page(query)
            }
            fn search_index(&self) -> Option<&dyn SearchIndex> {
                Some(self)
            }
            fn apply(&self, $changes: &ChangeSet) -> Result<Applied, StoreError> {
                let $w = self;
                $write
            }
        }

        impl SearchIndex for $ty {
            fn find(&self, query: &Query, wanted: &Wanted<'_>) -> Result<Found<'_>, StoreError> {
                let $s = self;
                $reader.search_find(query, wanted)
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
    let want = session_store_postgres::SCHEMA_VERSION.to_string();
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
