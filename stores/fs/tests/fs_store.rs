//! FsStore behaviours beyond the conformance suite: crash atomicity at every byte, catalog
//! staleness, compaction, eviction, the delete trash, paths, group commit under concurrency, and
//! the named regressions found by the model test.

mod common;

use std::fs::{self, OpenOptions};
use std::path::Path;
use std::sync::Arc;

use common::{listed, visible};
use session_core::conformance::{attachment_meta, message_entry, sample_meta};
use session_core::wire::SessionEntry;
use session_core::{ChangeSet, MemStore, Store, Write};
use session_store_fs::{FsConfig, FsStore, SyncMode};

fn open(dir: &Path) -> FsStore {
    FsStore::open(FsConfig::new(dir).sync(SyncMode::Never)).expect("open")
}

fn apply(store: &dyn Store, sid: &str, writes: Vec<Write>) {
    store.apply(&ChangeSet { session_id: sid.into(), writes }).expect("apply");
}

fn commit(entry: SessionEntry, parent_explicit: bool) -> Vec<Write> {
    vec![Write::CommitAppend { entry, parent_explicit }]
}

fn append_many(sid: &str, n: usize) -> Vec<Write> {
    let mut writes: Vec<Write> = (0..n)
        .map(|i| {
            let parent = (i > 0).then(|| format!("m{}", i - 1));
            Write::PutEntry(message_entry(
                &format!("m{i}"),
                parent.as_deref(),
                10 + i as i64,
                "many",
            ))
        })
        .collect();
    writes.push(Write::SetActiveLeaf(format!("m{}", n - 1)));
    let mut meta = sample_meta(sid, 1);
    meta.message_count = n as u64;
    writes.push(Write::PutMeta(meta));
    writes
}

/// D8: an append-many (five records: a `begin` marker and five plain lines in one write) cut by a
/// crash at any byte is visible whole or not at all after a restart, and the next append's tail
/// repair cuts a partial group, so the file then replays with nothing skipped and nothing of the
/// partial group behind the new record.
#[test]
fn a_group_is_all_or_nothing_at_every_crash_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    {
        let store = open(dir.path());
        apply(&store, "s", vec![Write::PutMeta(sample_meta("s", 1))]);
    }
    let before = fs::read(&path).expect("read");
    {
        let store = open(dir.path());
        apply(&store, "s", append_many("s", 3));
    }
    let after = fs::read(&path).expect("read");
    let written = &after[before.len()..];
    assert!(written.starts_with(b"{\"type\":\"begin\",\"lines\":5}\n"), "a begin marker");
    assert_eq!(written.iter().filter(|b| **b == b'\n').count(), 6, "marker + five plain lines");
    let mut later = sample_meta("s", 50);
    later.title = "after the crash".into();
    for cut in before.len()..=after.len() {
        fs::write(&path, &after[..cut]).expect("write");
        let whole = cut + 1 >= after.len();
        let store = open(dir.path());
        let v = visible(&store, "s");
        assert_eq!(v.entries.len(), if whole { 3 } else { 0 }, "cut at {cut}");
        assert_eq!(v.leaf.is_some(), whole, "cut at {cut}");
        assert_eq!(
            v.meta.map(|m| m.message_count),
            Some(if whole { 3 } else { 0 }),
            "cut at {cut}"
        );
        apply(&store, "s", vec![Write::PutMeta(later.clone())]);
        drop(store);
        let bytes = fs::read(&path).expect("read");
        let kept = if whole { after.len() } else { before.len() };
        assert_eq!(&bytes[..kept], &after[..kept], "cut at {cut}: the repair kept the prefix");
        let (state, stats) = session_core::jsonl::replay(&bytes);
        assert_eq!(stats.skipped, 0, "cut at {cut}: nothing torn is left");
        assert_eq!(state.entries.len(), if whole { 3 } else { 0 }, "cut at {cut}");
        assert_eq!(state.meta.as_ref(), Some(&later), "cut at {cut}");
        let v = visible(&open(dir.path()), "s");
        assert_eq!(v.entries.len(), if whole { 3 } else { 0 }, "cut at {cut} after restart");
    }
}

#[test]
fn nothing_is_written_outside_data_dir() {
    let base = tempfile::tempdir().expect("tempdir");
    let data = base.path().join("data");
    let store = open(&data);
    for sid in ["../escape/chat 42:?", "a/b", "%", "..", ".", "", "nul\0", "ü/../../x"] {
        apply(&store, sid, vec![Write::PutMeta(sample_meta(sid, 1))]);
        for aid in ["../../../../etc/x", "..", "", "a/b"] {
            let put = Write::PutAttachment {
                meta: attachment_meta(sid, aid, b"x"),
                bytes: b"x".to_vec(),
            };
            apply(&store, sid, vec![put]);
        }
        apply(&store, sid, commit(message_entry("e", None, 2, "x"), false));
    }
    apply(&store, "..", vec![Write::DeleteEntries, Write::DeleteAttachments, Write::DeleteMeta]);
    drop(store);
    let outside: Vec<String> =
        common::tree(base.path()).into_iter().filter(|p| !p.starts_with("data")).collect();
    assert!(outside.is_empty(), "written outside data_dir: {outside:?}");
    assert_eq!(fs::read_dir(base.path()).expect("read").count(), 1);
    let store = open(&data);
    assert_eq!(store.list_attachments(".").expect("list").len(), 4, "`..` delete spared `.`");
}

#[test]
fn catalog_is_used_and_revalidated() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let store = open(dir.path());
        for i in 0..5 {
            apply(&store, &format!("s{i}"), vec![Write::PutMeta(sample_meta(&format!("s{i}"), i))]);
        }
        assert_eq!(listed(&store).len(), 5);
    }
    assert!(dir.path().join(session_store_fs::CATALOG_FILE).exists(), "saved on drop");
    // Another writer changes a file behind the catalog's back: its stamp no longer matches.
    let mut m = sample_meta("s1", 1);
    m.title = "changed behind the catalog".into();
    let line = serde_json::json!({"type": "meta", "meta": m}).to_string() + "\n";
    let mut file = OpenOptions::new().append(true).open(dir.path().join("s1.jsonl")).expect("open");
    std::io::Write::write_all(&mut file, line.as_bytes()).expect("write");
    fs::remove_file(dir.path().join("s3.jsonl")).expect("remove");
    let store = open(dir.path());
    let metas = store.list_metas().expect("list");
    assert_eq!(metas.len(), 4, "removed file not listed");
    assert!(metas.iter().any(|m| m.title == "changed behind the catalog"), "stale line re-read");
    drop(store);
    fs::write(dir.path().join(session_store_fs::CATALOG_FILE), b"garbage").expect("write");
    assert_eq!(listed(&open(dir.path())).len(), 4, "unreadable catalog is rebuilt");
}

#[test]
fn streaming_updates_are_compacted_to_within_twice_live() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    apply(&store, "s", vec![Write::PutMeta(sample_meta("s", 1))]);
    apply(&store, "s", commit(message_entry("e", None, 2, ""), false));
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str("tok ");
        let mut entry = message_entry("e", None, 2, &text);
        if let SessionEntry::Message { revision, .. } = &mut entry {
            *revision = i + 1;
        }
        let mut meta = sample_meta("s", 1);
        meta.message_count = 1;
        meta.updated_at = 3 + i as i64;
        apply(&store, "s", vec![Write::PutEntry(entry), Write::PutMeta(meta)]);
    }
    store.wait_for_compactions();
    let disk = fs::metadata(dir.path().join("s.jsonl")).expect("stat").len();
    let live = session_core::jsonl::encode_snapshot(
        &session_core::jsonl::replay(&fs::read(dir.path().join("s.jsonl")).expect("read")).0,
    )
    .len() as u64;
    assert!(disk <= 2 * live, "disk {disk} > 2 × live {live}");
    drop(store);
    let v = visible(&open(dir.path()), "s");
    assert_eq!(v.entries[0].revision(), 2000);
}

#[test]
fn idle_sessions_are_evicted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = FsConfig::new(dir.path()).sync(SyncMode::Never);
    cfg.max_cached_sessions = 8;
    let store = FsStore::open(cfg).expect("open");
    for i in 0..100 {
        let sid = format!("s{i}");
        apply(&store, &sid, vec![Write::PutMeta(sample_meta(&sid, i))]);
    }
    assert!(store.cached_sessions() <= 8, "cached {}", store.cached_sessions());
    for i in 0..100 {
        assert_eq!(store.get_meta(&format!("s{i}")).expect("get").map(|m| m.created_at), Some(i));
    }
}

#[test]
fn an_interrupted_delete_is_rolled_back_or_finished_on_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let store = open(dir.path());
        for sid in ["kept", "gone"] {
            apply(&store, sid, vec![Write::PutMeta(sample_meta(sid, 1))]);
            let put = Write::PutAttachment {
                meta: attachment_meta(sid, "a", b"x"),
                bytes: b"x".to_vec(),
            };
            apply(&store, sid, vec![put]);
        }
    }
    // Crash after the trash rename: "kept"'s log was never removed, "gone"'s was.
    let att = dir.path().join("attachments");
    fs::create_dir_all(att.join("%trash")).expect("mkdir");
    fs::rename(att.join("kept"), att.join("%trash/kept")).expect("rename");
    fs::rename(att.join("gone"), att.join("%trash/gone")).expect("rename");
    fs::remove_file(dir.path().join("gone.jsonl")).expect("remove");
    let store = open(dir.path());
    assert_eq!(store.list_attachments("kept").expect("list").len(), 1, "rolled back");
    assert_eq!(store.list_attachments("gone").expect("list").len(), 0, "finished");
    assert!(!att.join("%trash/gone").exists());
}

#[test]
fn concurrent_group_commit_appends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store =
        Arc::new(FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Group)).expect("open"));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let sid = format!("s{}", t % 4);
                apply(&*store, &sid, vec![Write::PutMeta(sample_meta(&sid, 1))]);
                for i in 0..25 {
                    let id = format!("t{t}-{i}");
                    apply(&*store, &sid, commit(message_entry(&id, None, i, "x"), false));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("join");
    }
    drop(store);
    let store = open(dir.path());
    for s in 0..4 {
        let sid = format!("s{s}");
        let v = visible(&store, &sid);
        assert_eq!(v.entries.len(), 50);
        // Every commit chained on the previous one: one root, one leaf.
        assert_eq!(v.entries.iter().filter(|e| e.parent_id().is_none()).count(), 1);
        let _ = v.meta.expect("meta");
    }
}

/// Model-test regression: a rewrite (here `DeleteMeta`) used to end the file with a bare `leaf`
/// line, so after a restart the next `meta` marked the active path committed and a later
/// `commit_append` of an uncommitted ancestor was answered `committed: false`.
#[test]
fn regression_rewrite_does_not_leave_a_pending_legacy_append() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mem = MemStore::new();
    let steps: Vec<Vec<Write>> = vec![
        vec![Write::PutMeta(sample_meta("s", 1))],
        commit(message_entry("e1", None, 2, "a"), false),
        vec![Write::PutEntry(message_entry("e2", Some("e1"), 3, "b"))],
        commit(message_entry("e3", Some("e2"), 4, "c"), true),
        vec![Write::DeleteMeta],
    ];
    {
        let store = open(dir.path());
        for writes in &steps {
            apply(&store, "s", writes.clone());
            apply(&mem, "s", writes.clone());
        }
    }
    let store = open(dir.path());
    for writes in [
        vec![Write::PutMeta(sample_meta("s", 5))],
        commit(message_entry("e2", None, 9, "b"), false),
    ] {
        let changes = ChangeSet { session_id: "s".into(), writes };
        assert_eq!(store.apply(&changes).expect("fs"), mem.apply(&changes).expect("mem"));
    }
}

/// Model-test regression: a change set that puts entries and then clears the leaf leaves a
/// pending legacy append without a leaf, which a rewrite cannot (and need not) preserve.
#[test]
fn regression_pending_legacy_append_without_leaf_is_harmless() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mem = MemStore::new();
    let writes = vec![
        Write::SetActiveLeaf("e0".into()),
        Write::PutEntry(message_entry("e0", None, 0, "")),
        Write::DeleteActiveLeaf,
    ];
    apply(&open(dir.path()), "s", writes.clone());
    apply(&mem, "s", writes);
    let store = open(dir.path());
    for writes in
        [vec![Write::PutMeta(sample_meta("s", 5))], commit(message_entry("e0", None, 9, ""), false)]
    {
        let changes = ChangeSet { session_id: "s".into(), writes };
        assert_eq!(store.apply(&changes).expect("fs"), mem.apply(&changes).expect("mem"));
    }
}

/// Full-size bench regression: a session whose file is larger than the whole cache budget was
/// evicted right after its own load, so every read of it replayed the whole file again (a
/// 100k-entry session answered each `messages-tail` in seconds). The session just loaded stays.
#[test]
fn regression_a_session_larger_than_the_cache_budget_stays_loaded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = FsConfig::new(dir.path()).sync(SyncMode::Never);
    cfg.cache_bytes = 1;
    let store = FsStore::open(cfg).expect("open");
    apply(&store, "big", vec![Write::PutMeta(sample_meta("big", 1))]);
    apply(&store, "small", vec![Write::PutMeta(sample_meta("small", 1))]);
    assert!(store.get_meta("big").expect("get").is_some());
    assert_eq!(store.cached_sessions(), 1, "the session just touched stays, the idle one goes");
    assert!(store.get_meta("big").expect("get").is_some());
    assert_eq!(store.cached_sessions(), 1);
}

/// Model-test regression (of an unreleased change): a change set that puts an attachment, then
/// deletes the entries and every attachment of a session with no meta (a session delete) must
/// leave no attachment: the put lands after the trash, so the final delete cannot be skipped.
#[test]
fn regression_put_then_delete_all_in_a_session_delete_leaves_no_attachment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let put = Write::PutAttachment { meta: attachment_meta("%", "a0", b""), bytes: Vec::new() };
    apply(&open(dir.path()), "%", vec![put, Write::DeleteEntries, Write::DeleteAttachments]);
    assert!(open(dir.path()).list_attachments("%").expect("list").is_empty());
}

/// Issue 37: `session::delete` removes the session's log and its attachment folder (as v1.0.32
/// does; no tombstone is kept for the feed), the session stays gone after a restart, and the
/// id created again starts a new feed epoch at seq 1.
#[test]
fn a_delete_removes_the_log_and_the_attachment_folder() {
    use serde_json::json;
    use session_core::{catalog, Env, Limits, ManualClock, SeqIds};
    let dir = tempfile::tempdir().expect("tempdir");
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let call = |store: &FsStore, id: &str, payload: serde_json::Value| {
        catalog::dispatch(store, &env, id, payload).expect("in catalog").expect(id).response
    };
    let log = dir.path().join("s.jsonl");
    let folder = dir.path().join("attachments").join(session_core::jsonl::attachment_dir_name("s"));
    {
        let store = open(dir.path());
        call(&store, "session::ensure", json!({"session_id": "s"}));
        let put = json!({"session_id": "s", "name": "a.txt", "mime": "text/plain", "data": "aGk="});
        call(&store, "session::put-attachment", put);
        assert!(log.exists() && folder.exists(), "the test wrote both");
        call(&store, "session::delete", json!({"session_id": "s"}));
        assert!(!log.exists(), "the log is removed");
        assert!(!folder.exists(), "the attachment folder is removed");
    }
    let store = open(dir.path());
    assert_eq!(call(&store, "session::list", json!({}))["sessions"], json!([]));
    assert!(!log.exists() && !folder.exists(), "still gone after a restart");
    call(&store, "session::ensure", json!({"session_id": "s"}));
    let feed = call(&store, "session::changes", json!({"session_id": "s"}));
    assert_eq!(feed["latest_seq"], 1, "a new epoch from seq 1: {feed}");
    assert!(feed["epoch"].is_string(), "{feed}");
}

/// After a crash (the catalog on disk is the one of the last clean close) the catalog is built
/// again from the files: a session's lifecycle is found even when its record lies far before the
/// 64 KiB a meta is read from, so the sweep still sees the expiry and the trash stays hidden.
#[test]
fn a_lifecycle_before_the_tail_survives_a_crash_and_a_stale_catalog() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let store = open(dir.path());
        for sid in ["expiring", "trashed", "plain"] {
            apply(&store, sid, vec![Write::PutMeta(sample_meta(sid, 1))]);
        }
        store.list_metas().expect("the catalog is built"); // and saved on this clean close
    }
    {
        let store = open(dir.path());
        apply(&store, "expiring", vec![Write::SetExpiry(Some(42))]);
        // Well past the 64 KiB tail: the expiry is only at the start of its file (a trashed
        // session takes no appends: its trash is the last record).
        for sid in ["expiring", "trashed"] {
            for i in 0..400 {
                let parent = (i > 0).then(|| format!("m{}", i - 1));
                let entry =
                    message_entry(&format!("m{i}"), parent.as_deref(), 10, &"x".repeat(200));
                apply(&store, sid, commit(entry, false));
            }
        }
        apply(&store, "trashed", vec![Write::Trash { at: 7 }]);
        std::mem::forget(store); // a crash: the catalog on disk still lists the old metas
    }
    for sid in ["expiring", "trashed"] {
        let len = fs::metadata(dir.path().join(format!("{sid}.jsonl"))).expect("stat").len();
        assert!(len > 128 * 1024, "{sid} is {len} bytes, not past the tail a meta is read from");
    }
    let store = open(dir.path());
    assert_eq!(listed(&store), vec!["expiring".to_string(), "plain".to_string()]);
    let mut lifecycles = store.list_lifecycles().expect("lifecycles");
    lifecycles.sort_by(|a, b| a.0.cmp(&b.0));
    let summary: Vec<(String, Option<i64>, Option<i64>)> = lifecycles
        .into_iter()
        .map(|(sid, l)| (sid, l.expires_at, l.trashed.map(|t| t.at)))
        .collect();
    assert_eq!(
        summary,
        vec![("expiring".into(), Some(42), None), ("trashed".into(), None, Some(7))],
        "the sweep's view after the crash"
    );
}
