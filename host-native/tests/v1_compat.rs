//! Going back to v1.0.32: the files this store writes replay under v1.0.32's rules (`v1_rules`, an
//! independent replayer of contract §5.4) to the state our replay rebuilds, for random sequences
//! of public calls with compaction and restarts; no `group` line is written any more; and the
//! three documented exceptions, each with its way back: a group torn by a crash (until our next
//! append, or an export), files written by earlier builds (`group` lines: `export --snapshot`),
//! and an uncommitted leaf left by `session::store::delete-entries` (finish the delete).
//! `PROPTEST_CASES` overrides the default of 32 cases.

mod common;
#[path = "../../stores/fs/tests/v1_rules/mod.rs"]
mod v1_rules;

use std::fs;
use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Value};
use session_core::conformance::{message_entry, sample_meta};
use session_core::jsonl;
use session_core::{catalog, ChangeSet, Env, Limits, ManualClock, SeqIds, Store, Write};
use session_manager::transfer::{export_session, Format};
use session_manager::{FsConfig, FsStore, SyncMode};

fn open(dir: &Path) -> FsStore {
    let mut cfg = FsConfig::new(dir).sync(SyncMode::Never);
    cfg.compact_min_bytes = 512; // compaction rewrites within short sequences
    FsStore::open(cfg).expect("open")
}

/// Lines v1.0.32 skips in the files we write: our markers, feed changes and `settle`.
fn extension_lines(bytes: &[u8]) -> usize {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| {
            l.starts_with("{\"type\":\"begin\",")
                || l.starts_with("{\"type\":\"change\",")
                || *l == "{\"type\":\"settle\"}"
        })
        .count()
}

fn has_group_line(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes).lines().any(|l| l.starts_with("{\"type\":\"group\""))
}

/// Every session file of `dir` replays under v1.0.32's rules to our state, skipping exactly our
/// extension lines; none holds a `group` line.
fn check_dir(dir: &Path) -> Result<usize, String> {
    let mut files = 0;
    for entry in fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        files += 1;
        let bytes = fs::read(&path).expect("read");
        let name = path.display();
        if has_group_line(&bytes) {
            return Err(format!("{name}: a group line"));
        }
        let (ours, stats) = jsonl::replay(&bytes);
        if stats.skipped != 0 {
            return Err(format!("{name}: we skipped {} lines", stats.skipped));
        }
        let v1 = v1_rules::replay(&bytes);
        if let Some(why) = v1_rules::differs(&v1, &ours) {
            return Err(format!("{name}: {why}"));
        }
        if v1.skipped != extension_lines(&bytes) {
            return Err(format!("{name}: v1.0.32 skipped {} lines", v1.skipped));
        }
    }
    Ok(files)
}

struct Host {
    store: FsStore,
    clock: ManualClock,
    ids: SeqIds,
}

impl Host {
    fn call(&self, id: &str, payload: Value) -> Option<Value> {
        self.clock.advance(3);
        let env = Env { clock: &self.clock, ids: &self.ids, limits: Limits::default() };
        catalog::call(&self.store, &env, id, payload).ok().map(|o| o.response)
    }

    fn entry_id(&self, sid: &str, pick: usize) -> String {
        let mut entries: Vec<String> = self
            .store
            .list_entries(sid)
            .unwrap_or_default()
            .iter()
            .map(|e| e.id().into())
            .collect();
        entries.sort();
        if entries.is_empty() {
            "e_none".into()
        } else {
            entries[pick % entries.len()].clone()
        }
    }
}

fn message(role: &str, text: &str) -> Value {
    match role {
        "user" => {
            json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
        }
        _ => json!({"role": "assistant", "content": [{"type": "text", "text": text}],
            "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 1}),
    }
}

#[derive(Debug, Clone)]
enum Op {
    Append { s: usize, custom: bool, text: String },
    AppendMany { s: usize, n: usize, parent: Option<usize> },
    Fork { s: usize, e: usize },
    Update { s: usize, e: usize, text: String },
    SetLeaf { s: usize, e: usize },
    SetStatus { s: usize, working: bool },
    AttachToDraft { s: usize },
    DeleteAttachment { s: usize, a: usize },
    Delete { s: usize },
    Restart,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let s = 0usize..4;
    let e = 0usize..8;
    prop_oneof![
        4 => (s.clone(), any::<bool>(), "[a-z ]{0,60}")
            .prop_map(|(s, custom, text)| Op::Append { s, custom, text }),
        3 => (s.clone(), 1usize..5, proptest::option::of(e.clone()))
            .prop_map(|(s, n, parent)| Op::AppendMany { s, n, parent }),
        1 => (s.clone(), e.clone()).prop_map(|(s, e)| Op::Fork { s, e }),
        3 => (s.clone(), e.clone(), "[a-z ]{0,80}").prop_map(|(s, e, text)| Op::Update { s, e, text }),
        2 => (s.clone(), e).prop_map(|(s, e)| Op::SetLeaf { s, e }),
        1 => (s.clone(), any::<bool>()).prop_map(|(s, working)| Op::SetStatus { s, working }),
        1 => s.clone().prop_map(|s| Op::AttachToDraft { s }),
        1 => (s.clone(), 0usize..3).prop_map(|(s, a)| Op::DeleteAttachment { s, a }),
        1 => s.prop_map(|s| Op::Delete { s }),
        1 => Just(Op::Restart),
    ]
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut host = Host { store: open(dir.path()), clock: ManualClock::new(), ids: SeqIds::new() };
    let mut sessions: Vec<String> = vec!["s0".into(), "s1".into()];
    for sid in &sessions {
        host.call("session::ensure", json!({"session_id": sid}));
    }
    for (step, op) in ops.into_iter().enumerate() {
        let sid = |s: usize| sessions[s % sessions.len()].clone();
        match op.clone() {
            Op::Append { s, custom, text } => {
                let payload = if custom {
                    json!({"session_id": sid(s), "custom": {"custom_type": "t", "data": text}})
                } else {
                    json!({"session_id": sid(s), "message": message("user", &text)})
                };
                host.call("session::append", payload);
            }
            Op::AppendMany { s, n, parent } => {
                let sid = sid(s);
                let messages: Vec<Value> =
                    (0..n).map(|i| message(["user", "assistant"][i % 2], "many")).collect();
                let mut payload = json!({"session_id": sid, "messages": messages});
                if let Some(p) = parent {
                    payload["parent_id"] = json!(host.entry_id(&sid, p));
                }
                host.call("session::append-many", payload);
            }
            Op::Fork { s, e } => {
                let sid = sid(s);
                let payload = json!({"session_id": sid, "entry_id": host.entry_id(&sid, e)});
                if let Some(new) = host.call("session::fork", payload) {
                    sessions.push(new["session_id"].as_str().expect("new id").into());
                }
            }
            Op::Update { s, e, text } => {
                let sid = sid(s);
                let payload = json!({"session_id": sid, "entry_id": host.entry_id(&sid, e),
                    "content": [{"type": "text", "text": text}]});
                host.call("session::update-message", payload);
            }
            Op::SetLeaf { s, e } => {
                let sid = sid(s);
                let payload = json!({"session_id": sid, "entry_id": host.entry_id(&sid, e)});
                host.call("session::set-active-leaf", payload);
            }
            Op::SetStatus { s, working } => {
                let status = if working { "working" } else { "idle" };
                host.call("session::set-status", json!({"session_id": sid(s), "status": status}));
            }
            Op::AttachToDraft { s } => {
                let sid = sid(s);
                let put = json!({"session_id": sid, "name": "n.txt", "mime": "text/plain",
                    "data": "aGk="});
                if let Some(put) = host.call("session::put-attachment", put) {
                    let mut ids: Vec<Value> = host
                        .store
                        .get_meta(&sid)
                        .ok()
                        .flatten()
                        .and_then(|m| m.draft_attachments)
                        .map(|d| d.into_iter().map(|a| Value::from(a.attachment_id)).collect())
                        .unwrap_or_default();
                    ids.push(put["attachment"]["attachment_id"].clone());
                    host.call(
                        "session::set-draft",
                        json!({"session_id": sid, "draft": "unsent", "attachment_ids": ids}),
                    );
                }
            }
            Op::DeleteAttachment { s, a } => {
                let sid = sid(s);
                let mut ids: Vec<String> = host
                    .store
                    .list_attachments(&sid)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|m| m.attachment_id)
                    .collect();
                ids.sort();
                if !ids.is_empty() {
                    let aid = ids[a % ids.len()].clone();
                    host.call(
                        "session::delete-attachment",
                        json!({"session_id": sid, "attachment_id": aid}),
                    );
                }
            }
            Op::Delete { s } => {
                let sid = sid(s);
                host.call("session::delete", json!({"session_id": sid}));
                host.call("session::ensure", json!({"session_id": sid}));
            }
            Op::Restart => {
                let Host { store, clock, ids } = host;
                drop(store);
                host = Host { store: open(dir.path()), clock, ids };
            }
        }
        host.store.wait_for_compactions();
        check_dir(dir.path())
            .map_err(|e| TestCaseError::fail(format!("step {step} {op:?}: {e}")))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(32),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn v1_rules_replay_our_files_to_our_state(ops in proptest::collection::vec(op_strategy(), 1..40)) {
        run(ops)?;
    }
}

/// Every multi-record call writes a `begin` marker and plain lines, never a `group` line, and the
/// files replay under v1.0.32's rules to our state.
#[test]
fn no_group_line_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = Host { store: open(dir.path()), clock: ManualClock::new(), ids: SeqIds::new() };
    host.call("session::ensure", json!({"session_id": "s"})).expect("ensure");
    let two = [message("user", "a"), message("assistant", "b")];
    host.call("session::append-many", json!({"session_id": "s", "messages": two})).expect("many");
    let e = host.entry_id("s", 1);
    host.call(
        "session::update-message",
        json!({"session_id": "s", "entry_id": e,
        "content": [{"type": "text", "text": "c"}]}),
    )
    .expect("update");
    host.call("session::fork", json!({"session_id": "s", "entry_id": e})).expect("fork");
    let put = json!({"session_id": "s", "name": "n", "mime": "text/plain", "data": "aGk="});
    let aid = host.call("session::put-attachment", put).expect("put")["attachment"]
        ["attachment_id"]
        .clone();
    host.call(
        "session::set-draft",
        json!({"session_id": "s", "draft": "d", "attachment_ids": [aid]}),
    )
    .expect("draft");
    host.call("session::delete-attachment", json!({"session_id": "s", "attachment_id": aid}))
        .expect("delete-attachment");
    let bytes = fs::read(dir.path().join("s.jsonl")).expect("read");
    assert!(!has_group_line(&bytes));
    assert!(extension_lines(&bytes) >= 2, "append-many and update-message are groups");
    assert_eq!(check_dir(dir.path()), Ok(2), "the session and its fork");
}

/// The independent replayer agrees with ours on the files v1.0.32 itself wrote (legacy three-line
/// appends, `append`/`commit`, torn tail, malformed lines).
#[test]
fn v1_rules_replay_the_v1_fixtures_as_we_do() {
    let dir = common::fixture("v1_0_32");
    let mut checked = 0;
    for entry in fs::read_dir(dir.path()).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let bytes = fs::read(&path).expect("read");
        let (ours, stats) = jsonl::replay(&bytes);
        let v1 = v1_rules::replay(&bytes);
        assert_eq!(v1_rules::differs(&v1, &ours), None, "{}", path.display());
        assert_eq!(v1.skipped, stats.skipped, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 5);
}

fn append_many_writes(sid: &str) -> Vec<Write> {
    let mut meta = sample_meta(sid, 5);
    meta.message_count = 2;
    vec![
        Write::PutEntry(message_entry("m1", None, 3, "a")),
        Write::PutEntry(message_entry("m2", Some("m1"), 4, "b")),
        Write::SetActiveLeaf("m2".into()),
        Write::PutMeta(meta),
    ]
}

/// Exception 1: a crash inside a group leaves its complete lines, which v1.0.32 applies (half a
/// change set) while we drop them. Our next append cuts them (tail repair), and `export` (log or
/// snapshot) writes the repaired file; either way v1.0.32 then reads our state.
#[test]
fn a_torn_group_is_v1_readable_after_our_next_append_or_an_export() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    {
        let store = open(dir.path());
        store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 1)))).expect("meta");
        store
            .apply(&ChangeSet { session_id: "s".into(), writes: append_many_writes("s") })
            .expect("many");
    }
    let full = fs::read(&path).expect("read");
    // Lines: meta, begin, m1, m2, leaf, meta. The crash keeps the first four.
    let cut = full.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(3).expect("lines").0 + 1;
    fs::write(&path, &full[..cut]).expect("crash");
    let torn = fs::read(&path).expect("read");
    let (ours, _) = jsonl::replay(&torn);
    assert!(ours.entries.is_empty(), "we drop the torn group");
    let v1 = v1_rules::replay(&torn);
    assert_eq!(v1.entries.len(), 2, "v1.0.32 applies its complete lines");
    for format in [Format::Log, Format::Snapshot] {
        let out = tempfile::tempdir().expect("tempdir");
        export_session(dir.path(), "s", out.path(), format).expect("export");
        let exported = fs::read(out.path().join("s.jsonl")).expect("read");
        assert_eq!(v1_rules::differs(&v1_rules::replay(&exported), &ours), None, "{format:?}");
    }
    let store = open(dir.path());
    store.apply(&ChangeSet::new("s").with(Write::PutMeta(sample_meta("s", 9)))).expect("append");
    drop(store);
    assert_eq!(check_dir(dir.path()), Ok(1), "after our next append");
}

/// Exception 2: files written by earlier builds hold `group` lines, which v1.0.32 skips whole;
/// `session-manager export --snapshot` rewrites them as plain records it reads.
#[test]
fn old_group_lines_come_back_to_v1_through_export_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records: Vec<Value> = [
        json!({"type": "entry", "entry": message_entry("m1", None, 3, "a")}),
        json!({"type": "leaf", "entry_id": "m1"}),
        json!({"type": "meta", "meta": sample_meta("s", 4)}),
    ]
    .into();
    let old = format!(
        "{}\n{}\n",
        json!({"type": "meta", "meta": sample_meta("s", 1)}),
        json!({"type": "group", "records": records})
    );
    fs::write(dir.path().join("s.jsonl"), &old).expect("write");
    let (ours, stats) = jsonl::replay(old.as_bytes());
    assert_eq!((stats.skipped, ours.entries.len()), (0, 1), "we still read the group line");
    assert!(v1_rules::differs(&v1_rules::replay(old.as_bytes()), &ours).is_some());
    let out = tempfile::tempdir().expect("tempdir");
    export_session(dir.path(), "s", out.path(), Format::Snapshot).expect("export");
    let exported = fs::read(out.path().join("s.jsonl")).expect("read");
    assert_eq!(v1_rules::differs(&v1_rules::replay(&exported), &ours), None);
}

/// Exception 3: `delete_entries` alone (the store protocol's `session::store::delete-entries`)
/// leaves a leaf that is neither committed nor pending, which no v1.0.32 record can express: the
/// snapshot ends with `settle`. v1.0.32 reads the snapshot itself as we do, but a later `meta`
/// marks the leaf committed for it and not for us; deleting the leaf (finishing the delete)
/// brings the two back together.
#[test]
fn an_uncommitted_leaf_after_delete_entries_is_the_one_state_v1_cannot_express() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let store = open(dir.path());
    let apply = |writes: Vec<Write>| {
        store.apply(&ChangeSet { session_id: "s".into(), writes }).expect("apply");
    };
    apply(vec![Write::PutMeta(sample_meta("s", 1))]);
    apply(vec![Write::CommitAppend {
        entry: message_entry("e1", None, 2, "a"),
        parent_explicit: false,
    }]);
    apply(vec![Write::DeleteEntries]);
    let bytes = fs::read(&path).expect("read");
    assert!(String::from_utf8_lossy(&bytes).ends_with("{\"type\":\"settle\"}\n"));
    let (ours, _) = jsonl::replay(&bytes);
    assert_eq!(v1_rules::differs(&v1_rules::replay(&bytes), &ours), None, "the snapshot itself");
    apply(vec![Write::PutMeta(sample_meta("s", 3))]);
    let bytes = fs::read(&path).expect("read");
    let (ours, _) = jsonl::replay(&bytes);
    let v1 = v1_rules::replay(&bytes);
    assert!(ours.committed.is_empty());
    assert_eq!(v1.committed.iter().collect::<Vec<_>>(), ["e1"], "v1.0.32 marks the leaf");
    apply(vec![Write::DeleteActiveLeaf]);
    drop(store);
    assert_eq!(check_dir(dir.path()), Ok(1), "after delete-active-leaf");
}

/// The way back to v1.0.32 for a data_dir that holds what it cannot replay (`delta` records of
/// `append-delta`): `session-manager export --snapshot` writes each session's replayed snapshot
/// (whole entries, no delta records) in the data_dir layout, and that folder replays under
/// v1.0.32's rules to the state we serve. The raw log does not: v1.0.32 drops the streamed text.
#[test]
fn export_snapshot_is_the_way_back_for_append_delta() {
    let (dir, out) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
    let host = Host { store: open(dir.path()), clock: ManualClock::new(), ids: SeqIds::new() };
    host.call("session::ensure", json!({"session_id": "s"})).expect("ensure");
    host.call(
        "session::append",
        json!({"session_id": "s", "entry_id": "a",
        "message": message("assistant", "")}),
    )
    .expect("append");
    for chunk in ["Hel", "lo, ", "world"] {
        host.call(
            "session::append-delta",
            json!({"session_id": "s", "entry_id": "a", "text": chunk}),
        )
        .expect("delta");
    }
    host.call(
        "session::append-delta",
        json!({"session_id": "s", "entry_id": "a", "thinking": "t"}),
    )
    .expect("thinking delta");
    host.call("session::ensure", json!({"session_id": "gone"})).expect("ensure");
    host.call("session::delete", json!({"session_id": "gone"})).expect("delete");
    drop(host);

    let raw = fs::read(dir.path().join("s.jsonl")).expect("log");
    let (ours, _) = jsonl::replay(&raw);
    assert!(
        v1_rules::differs(&v1_rules::replay(&raw), &ours).is_some(),
        "v1.0.32 cannot replay the delta records (else this way back is not needed)"
    );
    let content = &ours.entries["a"];
    assert_eq!(
        serde_json::to_value(content).expect("json")["message"]["content"],
        json!([{"type": "text", "text": "Hello, world"}, {"type": "thinking", "text": "t"}])
    );

    let moved = session_manager::transfer::export_all(
        dir.path(),
        out.path(),
        session_manager::transfer::Format::Snapshot,
    )
    .expect("export");
    assert!(!moved.is_empty());
    let snapshot = fs::read(out.path().join("s.jsonl")).expect("exported");
    assert!(!String::from_utf8_lossy(&snapshot).contains("\"type\":\"delta\""), "no delta records");
    let (replayed, _) = jsonl::replay(&snapshot);
    assert_eq!(replayed.entries, ours.entries, "the snapshot serves what the log served");
    assert_eq!(replayed.meta, ours.meta);
    // The deleted session left no file to export; every exported file replays under v1.0.32's
    // rules to our state, skipping only our extension lines.
    assert!(!dir.path().join("gone.jsonl").exists() && !out.path().join("gone.jsonl").exists());
    assert!(check_dir(out.path()).expect("v1.0.32 replays the export") >= 1);
}
