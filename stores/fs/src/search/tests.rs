//! The index's own promises: an erased session's terms leave the index files, a write is
//! unindexed until a commit read it, and only a search of few postings runs on the caller's
//! thread.

use serde_json::{json, Value};
use session_core::{catalog, Env, Limits, ManualClock, SeqIds};

use crate::{FsConfig, FsStore, SyncMode};

/// Whether any segment's term dictionary of the body still holds `term` (deleted documents
/// included: what is on disk, not what searches see).
fn on_disk(store: &FsStore, term: &str) -> bool {
    let search = store.search.as_ref().expect("index");
    let searcher = search.reader.searcher();
    searcher.segment_readers().iter().any(|seg| {
        let inv = seg.inverted_index(search.fields.body).expect("inverted index");
        inv.terms().term_ord(term.as_bytes()).expect("term dictionary").is_some()
    })
}

#[test]
fn an_erased_session_leaves_no_term_in_the_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("open");
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let call = |id: &str, payload: Value| -> Value {
        catalog::dispatch(&store, &env, id, payload).expect("in catalog").expect(id).response
    };
    for (sid, word) in [("gone", "zanzibarite"), ("kept", "quokkaland")] {
        call("session::ensure", json!({"session_id": sid, "metadata": {"owner": sid}}));
        let message =
            json!({"role": "user", "content": [{"type": "text", "text": word}], "timestamp": 1});
        call("session::append", json!({"session_id": sid, "message": message}));
    }
    store.index_pending().expect("index");
    assert!(on_disk(&store, "zanzibarite") && on_disk(&store, "quokkaland"));
    call("session::erase", json!({"metadata": {"owner": "gone"}}));
    assert!(!on_disk(&store, "zanzibarite"), "an erased session's term is still in the index");
    assert!(on_disk(&store, "quokkaland"));
    let hits = call("session::search", json!({"query": "quokkaland"}));
    assert_eq!(hits["hits"][0]["session_id"], "kept");
}

#[test]
fn only_a_search_of_few_postings_with_nothing_pending_runs_on_the_callers_thread() {
    use session_core::Backend;
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("open");
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let search = catalog::operation("session::search").expect("in catalog");
    let here = |query: &str| store.runs_here_alone(search, &json!({"query": query}));
    let messages: Vec<Value> = (0..300)
        .map(|i| {
            let text = if i == 7 { "common rare" } else { "common" };
            json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": i})
        })
        .collect();
    let ensure = json!({"session_id": "s"});
    catalog::dispatch(&store, &env, "session::ensure", ensure)
        .expect("in catalog")
        .expect("ensure");
    let payload = json!({"session_id": "s", "messages": messages});
    catalog::dispatch(&store, &env, "session::append-many", payload)
        .expect("in catalog")
        .expect("append");
    assert!(!here("rare"), "a write waits to be indexed: the search reads the store");
    store.index_pending().expect("index");
    assert!(here("rare") && here("ra*"));
    assert!(!here("\"common rare\""), "a phrase reads every term's postings");
    assert!(!here("common"), "300 postings");
    assert!(!here("co*"), "a prefix counts the postings of every term it opens");
    assert!(!here(""), "a query refused is answered from a blocking thread like any other");
    let list = catalog::operation("session::list").expect("in catalog");
    assert!(!store.runs_here_alone(list, &json!({"query": "rare"})), "only searches");
}
