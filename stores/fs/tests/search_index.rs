//! The fs store's search index (issue 39) holds every backend's hits: the conformance check
//! `search_hits` with the index settled after every write, with the store restarted, with the
//! index deleted and with it damaged before each reopen; and a property test against the scan
//! (the memory store) on generated corpora and queries.

mod common;

use std::path::Path;
use std::sync::RwLock;

use session_core::conformance::check_search_hits;
use session_core::search::index::{Found, SearchIndex, Wanted};
use session_core::search::Query;
use session_core::store::{Applied, ChangeSet};
use session_core::wire::SessionMeta;
use session_core::{Store, StoreError};
use session_store_fs::{FsConfig, FsStore, SyncMode, SEARCH_INDEX_DIR};

/// What happens to the store after each write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// The index takes the write before the next call.
    Settle,
    /// The index takes the write, the store is closed and reopened.
    Restart,
    /// Closed, the index deleted, reopened: searches scan what the rebuild has not read.
    DeleteIndex,
    /// Closed, every file of the index damaged, reopened and settled.
    DamageIndex,
}

#[derive(Debug)]
struct Indexed {
    store: RwLock<Option<FsStore>>,
    dir: tempfile::TempDir,
    after: After,
}

fn config(dir: &Path) -> FsConfig {
    FsConfig::new(dir).sync(SyncMode::Never)
}

impl Indexed {
    fn new(after: After) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = FsStore::open(config(dir.path())).expect("open");
        Indexed { store: RwLock::new(Some(store)), dir, after }
    }

    fn read<R>(&self, f: impl FnOnce(&FsStore) -> R) -> R {
        f(self.store.read().expect("lock").as_ref().expect("open"))
    }

    fn after_write(&self) {
        let mut slot = self.store.write().expect("lock");
        slot.as_ref().expect("open").index_pending().expect("index");
        if self.after == After::Settle {
            return;
        }
        *slot = None;
        let index = self.dir.path().join(SEARCH_INDEX_DIR);
        match self.after {
            After::DeleteIndex => std::fs::remove_dir_all(&index).expect("delete the index"),
            After::DamageIndex => damage(&index),
            After::Settle | After::Restart => {}
        }
        let store = FsStore::open(config(self.dir.path())).expect("reopen");
        if self.after == After::DamageIndex {
            store.index_pending().expect("rebuild");
        }
        *slot = Some(store);
    }
}

/// Flips a byte in the middle of every segment file of the index (not its format mark).
fn damage(index: &Path) {
    for file in std::fs::read_dir(index).expect("index dir") {
        let path = file.expect("entry").path();
        if path.file_name().is_some_and(|n| n == "format" || n == "meta.json") {
            continue;
        }
        let mut bytes = std::fs::read(&path).expect("read");
        let middle = bytes.len() / 2;
        if let Some(b) = bytes.get_mut(middle) {
            *b ^= 0x5a;
            std::fs::write(&path, bytes).expect("write");
        }
    }
}

common::store_reads_through!(Indexed, {
    fn apply(&self, changes: &ChangeSet) -> Result<Applied, StoreError> {
        let applied = self.read(|s| s.apply(changes));
        self.after_write();
        applied
    }
    fn listed_meta(&self, sid: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.read(|s| s.listed_meta(sid))
    }
    fn search_index(&self) -> Option<&dyn SearchIndex> {
        Some(self)
    }
});

impl SearchIndex for Indexed {
    fn find(&self, query: &Query, wanted: &Wanted<'_>) -> Result<Found<'_>, StoreError> {
        self.read(|s| s.search_find(query, wanted)).expect("the store keeps an index")
    }
}

fn checked(after: After) {
    let make = || Box::new(Indexed::new(after)) as Box<dyn Store>;
    if let Err(e) = check_search_hits(&make) {
        panic!("search_hits with {after:?}: {e}");
    }
}

#[test]
fn hits_with_the_index_settled() {
    checked(After::Settle);
}

#[test]
fn hits_across_restarts() {
    checked(After::Restart);
}

#[test]
fn hits_with_the_index_deleted() {
    checked(After::DeleteIndex);
}

#[test]
fn hits_with_the_index_damaged() {
    checked(After::DamageIndex);
}

mod against_the_scan {
    //! The fs store with its index (settled at random points, so some sessions are searched
    //! through it and some as unindexed) answers every query page by page exactly as the memory
    //! store's scan does, after appends, edits, retitles, trash and deletes. `PROPTEST_CASES`
    //! overrides the default of 24 cases.

    use proptest::prelude::*;
    use serde_json::{json, Value};
    use session_core::mem_store::MemStore;
    use session_core::{catalog, Env, Limits, ManualClock, SeqIds, Store};
    use session_store_fs::{FsConfig, FsStore, SyncMode};

    const WORDS: &[&str] = &[
        "alpha",
        "beta",
        "gamma",
        "parser",
        "parse",
        "fs/mod.rs",
        "camelCase",
        "snake_case",
        "東京都",
        "京都",
        "Straße",
        "café",
        "CAFE",
        "alphabet",
    ];

    #[derive(Debug, Clone)]
    enum Op {
        Append { session: u8, parent_back: u8, text: String },
        Update { session: u8, nth: u8, text: String },
        Retitle { session: u8, text: String },
        Trash { session: u8 },
        Delete { session: u8 },
        Settle,
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(WORDS), 1..6).prop_map(|w| w.join(" "))
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u8..4, 0u8..3, text()).prop_map(|(session, parent_back, text)| Op::Append { session, parent_back, text }),
            2 => (0u8..4, any::<u8>(), text()).prop_map(|(session, nth, text)| Op::Update { session, nth, text }),
            1 => (0u8..4, text()).prop_map(|(session, text)| Op::Retitle { session, text }),
            1 => (0u8..4).prop_map(|session| Op::Trash { session }),
            1 => (0u8..4).prop_map(|session| Op::Delete { session }),
            2 => Just(Op::Settle),
        ]
    }

    fn query() -> impl Strategy<Value = (String, usize, bool)> {
        let one = prop_oneof![
            prop::sample::select(WORDS).prop_map(String::from),
            prop::sample::select(WORDS).prop_map(|w| format!("{}*", &w[..w.len().min(3)])),
            (prop::sample::select(WORDS), prop::sample::select(WORDS))
                .prop_map(|(a, b)| format!("\"{a} {b}\"")),
        ];
        (prop::collection::vec(one, 1..3), 1usize..4, any::<bool>())
            .prop_map(|(items, limit, active)| (items.join(" "), limit, active))
    }

    fn dispatch(
        store: &dyn Store,
        env: &Env<'_>,
        id: &str,
        payload: Value,
    ) -> Result<Value, String> {
        match catalog::dispatch(store, env, id, payload).expect("in catalog") {
            Ok(done) => Ok(done.response),
            Err(e) => Err(format!("{:?}", e.code)),
        }
    }

    /// Every page of `query`'s hits.
    fn pages(
        store: &dyn Store,
        env: &Env<'_>,
        query: &str,
        limit: usize,
        active: bool,
    ) -> Vec<Value> {
        let mut out = Vec::new();
        let mut cursor = Value::Null;
        loop {
            let mut req = json!({"query": query, "limit": limit, "cursor": cursor});
            if active {
                req["branch"] = json!("active");
            }
            let page = dispatch(store, env, "session::search", req).expect("search");
            cursor = page["next_cursor"].clone();
            out.push(page);
            if cursor.is_null() || out.len() > 64 {
                return out;
            }
        }
    }

    /// Found by CI: three hits with one timestamp, pages of one; the cursor's ties are kept.
    #[test]
    fn ties_with_the_cursor_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fs = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("open");
        let mem = MemStore::new();
        let (c0, c1, i0, i1) =
            (ManualClock::new(), ManualClock::new(), SeqIds::new(), SeqIds::new());
        let envs = [
            Env { clock: &c0, ids: &i0, limits: Limits::default() },
            Env { clock: &c1, ids: &i1, limits: Limits::default() },
        ];
        let stores: [&dyn Store; 2] = [&mem, &fs];
        for (step, text) in ["café café", "café café", "café"].iter().enumerate() {
            for (store, env) in stores.iter().zip(&envs) {
                let _ = dispatch(
                    *store,
                    env,
                    "session::ensure",
                    json!({"session_id": "s0", "title": "t0"}),
                );
                let mut req = json!({"session_id": "s0", "entry_id": format!("e{step}"), "message": {"role": "user", "timestamp": step, "content": [{"type": "text", "text": text}]}});
                if step > 0 {
                    req["parent_id"] = json!(format!("e{}", step - 1));
                }
                dispatch(*store, env, "session::append", req).expect("append");
            }
        }
        fs.index_pending().expect("index");
        assert_eq!(pages(&fs, &envs[1], "caf*", 1, false), pages(&mem, &envs[0], "caf*", 1, false));
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(24),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn the_index_answers_as_the_scan(ops in prop::collection::vec(op(), 1..40),
                                         queries in prop::collection::vec(query(), 1..8)) {
            let dir = tempfile::tempdir().expect("tempdir");
            let fs = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("open");
            let mem = MemStore::new();
            let clocks = [ManualClock::new(), ManualClock::new()];
            let ids = [SeqIds::new(), SeqIds::new()];
            let envs = [
                Env { clock: &clocks[0], ids: &ids[0], limits: Limits::default() },
                Env { clock: &clocks[1], ids: &ids[1], limits: Limits::default() },
            ];
            let stores: [&dyn Store; 2] = [&mem, &fs];
            let mut appended: Vec<Vec<String>> = vec![Vec::new(); 4];
            for (step, op) in ops.iter().enumerate() {
                let (id, payload) = match op {
                    Op::Settle => {
                        fs.index_pending().expect("index");
                        continue;
                    }
                    Op::Append { session, parent_back, text } => {
                        let sid = format!("s{session}");
                        let ensure = json!({"session_id": sid, "title": format!("t{session}")});
                        for (store, env) in stores.iter().zip(&envs) {
                            let _ = dispatch(*store, env, "session::ensure", ensure.clone());
                        }
                        let mine = &mut appended[*session as usize];
                        let eid = format!("e{step}");
                        let mut req = json!({"session_id": sid, "entry_id": eid,
                            "message": {"role": "user", "timestamp": step,
                                "content": [{"type": "text", "text": text}]}});
                        if let Some(parent) = mine.len().checked_sub(1 + *parent_back as usize) {
                            req["parent_id"] = json!(mine[parent]);
                        }
                        mine.push(eid);
                        ("session::append", req)
                    }
                    Op::Update { session, nth, text } => {
                        let mine = &appended[*session as usize];
                        let Some(eid) = mine.get(*nth as usize % mine.len().max(1)) else { continue };
                        ("session::update-message", json!({"session_id": format!("s{session}"),
                            "entry_id": eid, "content": [{"type": "text", "text": text}]}))
                    }
                    Op::Retitle { session, text } => ("session::set-meta",
                        json!({"session_id": format!("s{session}"), "title": text})),
                    Op::Trash { session } => ("session::trash", json!({"session_id": format!("s{session}")})),
                    Op::Delete { session } => {
                        appended[*session as usize].clear();
                        ("session::delete", json!({"session_id": format!("s{session}")}))
                    }
                };
                let answers: Vec<Result<(), String>> = stores
                    .iter()
                    .zip(&envs)
                    .map(|(store, env)| dispatch(*store, env, id, payload.clone()).map(|_| ()))
                    .collect();
                prop_assert_eq!(&answers[0], &answers[1], "{} {}", id, payload);
            }
            for (query, limit, active) in &queries {
                let want = pages(&mem, &envs[0], query, *limit, *active);
                let got = pages(&fs, &envs[1], query, *limit, *active);
                prop_assert_eq!(got, want, "{}", query);
            }
        }
    }
}
