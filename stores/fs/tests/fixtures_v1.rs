//! A data_dir in the formats the original v1.0.32 worker wrote (`tests/fixtures/v1_0_32`: legacy
//! three-line appends, `append`/`commit` records, torn tail, malformed lines, a percent-encoded
//! id, a file without meta, an undecodable name, a stray tmp file) replays to the expected state.

mod common;

use std::fs;

use common::{fixture, listed, visible};
use session_core::conformance::message_entry;
use session_core::jsonl;
use session_core::{ChangeSet, Store, Write};
use session_store_fs::{FsConfig, FsStore, SyncMode};

fn open(dir: &tempfile::TempDir) -> FsStore {
    FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Never)).expect("open")
}

fn committed(dir: &tempfile::TempDir, file: &str) -> Vec<String> {
    let bytes = fs::read(dir.path().join(file)).expect("read");
    jsonl::replay(&bytes).0.committed.into_iter().collect()
}

#[test]
fn lists_exactly_the_sessions_with_a_meta() {
    let dir = fixture("v1_0_32");
    let store = open(&dir);
    assert_eq!(
        listed(&store),
        ["../escape/chat 42:?", "s_append", "s_legacy", "s_malformed", "s_torn"],
        "no-meta file, undecodable name, tmp file and attachments/ are not sessions"
    );
    assert_eq!(store.get_meta("s_nometa").expect("get"), None);
    assert_eq!(store.list_entries("s_nometa").expect("entries").len(), 1);
}

#[test]
fn legacy_three_line_appends() {
    let dir = fixture("v1_0_32");
    let store = open(&dir);
    let v = visible(&store, "s_legacy");
    assert_eq!(v.meta.as_ref().map(|m| (m.message_count, m.updated_at)), Some((2, 1002)));
    assert_eq!(v.entries.len(), 3);
    assert_eq!(v.leaf.as_deref(), Some("e_2"));
    assert_eq!(committed(&dir, "s_legacy.jsonl"), ["e_1", "e_2"]);
    // The half-written third append is completed, not duplicated, by a retry.
    let retry = message_entry("e_3", None, 5000, "retried");
    let applied = store
        .apply(
            &ChangeSet::new("s_legacy")
                .with(Write::CommitAppend { entry: retry, parent_explicit: false }),
        )
        .expect("commit");
    let outcome = applied.commit.expect("outcome");
    assert!(outcome.committed);
    assert_eq!((outcome.entry.parent_id(), outcome.entry.timestamp()), (Some("e_2"), 1003));
    assert_eq!(outcome.meta.message_count, 3);
    let again = store
        .apply(&ChangeSet::new("s_legacy").with(Write::CommitAppend {
            entry: message_entry("e_1", None, 1, "x"),
            parent_explicit: false,
        }))
        .expect("commit");
    assert!(!again.commit.expect("outcome").committed, "legacy e_1 is committed");
}

#[test]
fn append_and_commit_records() {
    let dir = fixture("v1_0_32");
    let store = open(&dir);
    let v = visible(&store, "s_append");
    let meta = v.meta.expect("meta");
    assert_eq!((meta.message_count, meta.updated_at), (1, 1003));
    assert_eq!(serde_json::to_value(meta.status).expect("json"), "working");
    assert_eq!(v.leaf.as_deref(), Some("e_1"));
    assert_eq!(
        v.entries.iter().map(|e| (e.id(), e.revision())).collect::<Vec<_>>(),
        [("e_0", 0), ("e_1", 1)]
    );
    assert_eq!(committed(&dir, "s_append.jsonl"), ["e_0", "e_1"]);
    assert_eq!(v.attachments, [("a_1".to_string(), b"attached bytes".to_vec())]);
}

#[test]
fn percent_encoded_id() {
    let dir = fixture("v1_0_32");
    let store = open(&dir);
    let sid = "../escape/chat 42:?";
    let v = visible(&store, sid);
    assert_eq!(v.meta.map(|m| m.session_id).as_deref(), Some(sid));
    assert_eq!(v.leaf.as_deref(), Some("e_1"));
    store.apply(&ChangeSet::new(sid).with(Write::SetActiveLeaf("e_1".into()))).expect("write");
    assert!(dir.path().join("..%2Fescape%2Fchat%2042%3A%3F.jsonl").exists());
    assert!(!dir.path().parent().expect("parent").join("escape").exists());
}

#[test]
fn torn_tail_is_skipped_then_repaired() {
    let dir = fixture("v1_0_32");
    let before = fs::read(dir.path().join("s_torn.jsonl")).expect("read");
    let (state, stats) = jsonl::replay(&before);
    assert_eq!((stats.lines, stats.skipped), (3, 1));
    assert_eq!(state.entries.len(), 1);
    let store = open(&dir);
    let v = visible(&store, "s_torn");
    assert_eq!(v.meta.map(|m| m.message_count), Some(1));
    store
        .apply(&ChangeSet::new("s_torn").with(Write::CommitAppend {
            entry: message_entry("e_2", None, 1002, "retried"),
            parent_explicit: false,
        }))
        .expect("commit");
    let after = fs::read(dir.path().join("s_torn.jsonl")).expect("read");
    let (state, stats) = jsonl::replay(&after);
    assert_eq!(stats.skipped, 0, "the fragment was cut before appending");
    assert_eq!(state.meta.map(|m| m.message_count), Some(2));
    assert_eq!(state.leaf.as_deref(), Some("e_2"));
}

#[test]
fn malformed_lines_are_skipped_and_counted() {
    let dir = fixture("v1_0_32");
    let bytes = fs::read(dir.path().join("s_malformed.jsonl")).expect("read");
    let (_, stats) = jsonl::replay(&bytes);
    assert_eq!((stats.lines, stats.skipped), (5, 3));
    let store = open(&dir);
    let v = visible(&store, "s_malformed");
    assert_eq!(v.meta.map(|m| m.message_count), Some(1));
    assert_eq!(v.leaf.as_deref(), Some("e_1"));
}

#[test]
fn a_restart_replays_to_the_same_state() {
    let dir = fixture("v1_0_32");
    let ids = ["../escape/chat 42:?", "s_append", "s_legacy", "s_malformed", "s_torn"];
    let before: Vec<_> = {
        let store = open(&dir);
        ids.iter().map(|sid| visible(&store, sid)).collect()
    };
    let store = open(&dir);
    let after: Vec<_> = ids.iter().map(|sid| visible(&store, sid)).collect();
    assert_eq!(before, after);
    assert_eq!(listed(&store), ids);
}
