//! Helpers shared by the store integration tests (the fs store's here, the postgres suite and the
//! worker's tests include this file by path): fixture copies and state comparison.
#![allow(dead_code)]

use std::fs;
use std::path::Path;

use proptest::prelude::*;
use session_core::conformance::{attachment_meta, custom_entry, message_entry, sample_meta};
use session_core::wire::{SessionEntry, SessionMeta};
use session_core::{Store, Write};

/// Every file under `dir` (recursively) whose bytes hold `marker`: what an erasure must leave
/// none of.
pub fn files_holding(dir: &Path, marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in fs::read_dir(&at).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                todo.push(path);
            } else if fs::read(&path)
                .is_ok_and(|b| b.windows(marker.len()).any(|w| w == marker.as_bytes()))
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

/// Copies a directory tree (fixtures are copied before a store may repair or compact them).
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create");
    for entry in fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// `stores/fs/tests/fixtures`, found from whichever crate includes this file: `file!()` names it
/// from the workspace root, an ancestor of the including crate's manifest dir.
fn fixtures_dir() -> std::path::PathBuf {
    let this = Path::new(file!());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join(this).is_file())
        .expect("the workspace root holds this file");
    root.join(this).parent().and_then(Path::parent).expect("tests/").join("fixtures")
}

/// A fresh copy of `stores/fs/tests/fixtures/<name>` in a temp dir.
pub fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = fixtures_dir().join(name);
    copy_dir(&src, dir.path());
    dir
}

/// What a reader of one session can see through the `Store` trait.
#[derive(Debug, PartialEq)]
pub struct Visible {
    pub meta: Option<SessionMeta>,
    pub entries: Vec<SessionEntry>,
    pub leaf: Option<String>,
    pub attachments: Vec<(String, Vec<u8>)>,
}

pub fn visible(store: &dyn Store, sid: &str) -> Visible {
    let mut entries = store.list_entries(sid).expect("list_entries");
    entries.sort_by(|a, b| a.id().cmp(b.id()));
    let mut attachments: Vec<(String, Vec<u8>)> = store
        .list_attachments(sid)
        .expect("list_attachments")
        .into_iter()
        .map(|m| {
            let (_, bytes) =
                store.get_attachment(sid, &m.attachment_id).expect("get").expect("present");
            (m.attachment_id, bytes)
        })
        .collect();
    attachments.sort();
    Visible {
        meta: store.get_meta(sid).expect("get_meta"),
        entries,
        leaf: store.get_active_leaf(sid).expect("leaf"),
        attachments,
    }
}

/// Session ids listed, sorted.
pub fn listed(store: &dyn Store) -> Vec<String> {
    let mut ids: Vec<String> =
        store.list_metas().expect("list").into_iter().map(|m| m.session_id).collect();
    ids.sort();
    ids
}

/// Every path under `root`, relative, sorted.
pub fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            out.push(path.strip_prefix(root).expect("prefix").to_string_lossy().into_owned());
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The issue-12 oracle after a model step: `store`'s indexed reads of `sid` (path windows,
/// positions, list pages) agree with walking the chain and sorting every meta; and, when the
/// state is at hand (`MemStore`), its incrementally kept path index equals one built from scratch.
pub fn indexed_reads_agree(
    store: &dyn Store,
    state: Option<&session_core::record::SessionState>,
    sid: &str,
) -> Result<(), String> {
    use session_core::conformance::{indexed_reads_agree, Probe};
    indexed_reads_agree(store, sid, Probe::Sample)?;
    if let Some(state) = state {
        let rebuilt =
            session_core::path_index::PathIndex::build(state.leaf.as_deref(), &state.entries);
        if *state.path_index() != rebuilt {
            return Err(format!(
                "{sid}: path index {:?} differs from a rebuilt {rebuilt:?}",
                state.path_index()
            ));
        }
    }
    Ok(())
}

/// The reads a store may answer without replaying a session (the fs store's cold views after a
/// restart): its meta, its leaf, each of `ids`, and its active path read whole, forward and
/// backward, for every entry and for messages only. Call before any read that replays.
pub fn page_reads(store: &dyn Store, sid: &str, ids: &[String]) -> String {
    use session_core::path::PathSelect;
    use session_core::path_index::EntryClasses;
    let leaf = store.get_active_leaf(sid);
    let mut out = format!("{:?} {leaf:?}", store.get_meta(sid));
    for id in ids {
        out += &format!("\n{id}: {:?}", store.get_entry(sid, id));
    }
    if let Ok(Some(leaf)) = leaf {
        out += &format!("\nlocate {:?}", store.path_locate(sid, &leaf, ids.first().map(|s| &**s)));
        for classes in [EntryClasses::ALL, EntryClasses::MESSAGES] {
            let windows = [(0, false, 1), (0, false, 9), (1, false, 2), (usize::MAX, true, 1)];
            for (from, backward, limit) in windows.into_iter().chain([(2, true, 2), (9, true, 9)]) {
                let query = PathSelect { classes, from, backward, limit };
                out += &format!("\n{query:?}: {:?}", store.path_select(sid, &leaf, &query));
            }
        }
    }
    out
}

/// The sessions the model tests write: plain, hostile and one-character ids.
pub const SESSIONS: &[&str] = &["s0", "../s 1", "%"];
/// The entry ids the model tests use (few, so writes collide).
pub const ENTRIES: &[&str] = &["e0", "e1", "e2", "e3"];

/// One random write to session `sid`: any kind the `Store` trait takes.
pub fn write_strategy(sid: &'static str) -> impl Strategy<Value = Write> {
    let eid = proptest::sample::select(ENTRIES);
    let parent = proptest::option::of(proptest::sample::select(ENTRIES));
    prop_oneof![
        3 => (0i64..50, "[a-z]{0,3}").prop_map(move |(at, title)| {
            let mut m = sample_meta(sid, at);
            m.title = title;
            Write::PutMeta(m)
        }),
        3 => (eid.clone(), parent.clone(), 0i64..100, "[a-z]{0,40}", any::<bool>()).prop_map(
            |(e, p, ts, text, custom)| Write::PutEntry(if custom {
                custom_entry(e, p, ts)
            } else {
                message_entry(e, p, ts, &text)
            })
        ),
        2 => eid.clone().prop_map(|e| Write::SetActiveLeaf(e.into())),
        6 => (eid, parent, 0i64..100, any::<bool>()).prop_map(|(e, p, ts, explicit)| {
            Write::CommitAppend { entry: message_entry(e, p, ts, "c"), parent_explicit: explicit }
        }),
        1 => Just(Write::DeleteEntries),
        1 => Just(Write::DeleteActiveLeaf),
        1 => Just(Write::DeleteMeta),
        1 => (0usize..2, proptest::collection::vec(any::<u8>(), 0..8)).prop_map(move |(a, bytes)| {
            let aid = ["a0", "../a1"][a];
            Write::PutAttachment { meta: attachment_meta(sid, aid, &bytes), bytes }
        }),
        1 => (0usize..2).prop_map(|a| Write::DeleteAttachment(["a0", "../a1"][a].into())),
        1 => Just(Write::DeleteAttachments),
    ]
}

/// `impl Store for $ty` for a test wrapper that holds a store and reaches it through its own
/// `fn read<R>(&self, f: impl FnOnce(&S) -> R) -> R`: every read goes through `read`; the
/// wrapper's writes (`apply`) and anything else it adds are the `$extra` items. (Not every test
/// crate that includes this file uses it.)
#[allow(unused_macros)]
macro_rules! store_reads_through {
    ($ty:ty, { $($extra:item)* }) => {
        impl session_core::Store for $ty {
            fn get_meta(&self, sid: &str) -> Result<Option<session_core::wire::SessionMeta>, session_core::StoreError> {
                self.read(|s| s.get_meta(sid))
            }
            fn list_metas(&self) -> Result<Vec<session_core::wire::SessionMeta>, session_core::StoreError> {
                self.read(|s| s.list_metas())
            }
            fn get_entry(&self, sid: &str, eid: &str) -> Result<Option<session_core::wire::SessionEntry>, session_core::StoreError> {
                self.read(|s| s.get_entry(sid, eid))
            }
            fn list_entries(&self, sid: &str) -> Result<Vec<session_core::wire::SessionEntry>, session_core::StoreError> {
                self.read(|s| s.list_entries(sid))
            }
            fn get_active_leaf(&self, sid: &str) -> Result<Option<String>, session_core::StoreError> {
                self.read(|s| s.get_active_leaf(sid))
            }
            fn get_attachment(
                &self,
                sid: &str,
                aid: &str,
            ) -> Result<Option<(session_core::wire::AttachmentMeta, Vec<u8>)>, session_core::StoreError> {
                self.read(|s| s.get_attachment(sid, aid))
            }
            fn get_attachment_meta(
                &self,
                sid: &str,
                aid: &str,
            ) -> Result<Option<session_core::wire::AttachmentMeta>, session_core::StoreError> {
                self.read(|s| s.get_attachment_meta(sid, aid))
            }
            fn list_attachments(&self, sid: &str) -> Result<Vec<session_core::wire::AttachmentMeta>, session_core::StoreError> {
                self.read(|s| s.list_attachments(sid))
            }
            fn changes(&self, sid: &str, after: u64, limit: usize) -> Result<session_core::wire::FeedPage, session_core::StoreError> {
                self.read(|s| s.changes(sid, after, limit))
            }
            fn path_locate(
                &self,
                sid: &str,
                leaf: &str,
                id: Option<&str>,
            ) -> Result<session_core::path::PathSpot, session_core::StoreError> {
                self.read(|s| s.path_locate(sid, leaf, id))
            }
            fn path_select(
                &self,
                sid: &str,
                leaf: &str,
                query: &session_core::path::PathSelect,
            ) -> Result<Vec<(usize, session_core::wire::SessionEntry)>, session_core::StoreError> {
                self.read(|s| s.path_select(sid, leaf, query))
            }
            fn usage(
                &self,
                sid: &str,
                leaf: Option<&str>,
            ) -> Result<(session_core::usage::Tally, session_core::usage::Tally), session_core::StoreError> {
                self.read(|s| s.usage(sid, leaf))
            }
            fn list_page(
                &self,
                query: &session_core::meta_order::ListQuery<'_>,
            ) -> Result<Vec<session_core::wire::SessionMeta>, session_core::StoreError> {
                self.read(|s| s.list_page(query))
            }
            fn lifecycle(&self, sid: &str) -> Result<session_core::lifecycle::Lifecycle, session_core::StoreError> {
                self.read(|s| s.lifecycle(sid))
            }
            fn list_lifecycles(
                &self,
            ) -> Result<Vec<(String, session_core::lifecycle::Lifecycle)>, session_core::StoreError> {
                self.read(|s| s.list_lifecycles())
            }
            $($extra)*
        }
    };
}
#[allow(unused_imports)]
pub(crate) use store_reads_through;
