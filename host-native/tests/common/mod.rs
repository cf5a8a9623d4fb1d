//! Helpers shared by the fs store integration tests: fixture copies and state comparison.
#![allow(dead_code)]

use std::fs;
use std::path::Path;

use session_core::wire::{SessionEntry, SessionMeta};
use session_core::Store;

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

/// A fresh copy of `tests/fixtures/<name>` in a temp dir.
pub fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
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
