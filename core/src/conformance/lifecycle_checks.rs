//! Conformance checks of a session's lifecycle (`lifecycle_*`): a trash that hides the meta and
//! keeps everything else, a restore that gives it back, an expiry, both listed by
//! `list_lifecycles`, and a delete that clears them. A bridge to a seed main keeps no lifecycle
//! and is expected to fail these with `StoreError::Unsupported`.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{apply, attachment_meta, commit, eq, message_entry, sample_meta, st, Make};
use crate::lifecycle::{Lifecycle, Trashed};
use crate::store::{Store, Write};
use crate::wire::{AttachmentMeta, SessionEntry, SessionMeta};

/// What a session holds, as its reads see it.
type Held = (Option<SessionMeta>, Vec<SessionEntry>, Option<String>, Vec<AttachmentMeta>);

fn held(store: &dyn Store, sid: &str) -> Result<Held, String> {
    let mut entries = st(store.list_entries(sid))?;
    entries.sort_by(|a, b| a.id().cmp(b.id()));
    let mut attachments = st(store.list_attachments(sid))?;
    attachments.sort_by(|a, b| a.attachment_id.cmp(&b.attachment_id));
    Ok((st(store.get_meta(sid))?, entries, st(store.get_active_leaf(sid))?, attachments))
}

fn listed(store: &dyn Store) -> Result<Vec<(String, Lifecycle)>, String> {
    let mut all = st(store.list_lifecycles())?;
    all.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(all)
}

pub fn check_lifecycle_trash_and_restore(make: Make<'_>) -> Result<(), String> {
    let s = make();
    let meta = sample_meta("s", 1);
    apply(&*s, "s", vec![Write::PutMeta(meta.clone())])?;
    apply(&*s, "s", commit(message_entry("e1", None, 2, "hi"), false))?;
    let bytes = b"abc".to_vec();
    let put = Write::PutAttachment { meta: attachment_meta("s", "a1", &bytes), bytes };
    apply(&*s, "s", vec![put])?;
    apply(&*s, "t", vec![Write::PutMeta(sample_meta("t", 1))])?;
    let before = held(&*s, "s")?;
    eq(st(s.lifecycle("s"))?, Lifecycle::default(), "a plain session has no lifecycle")?;
    eq(listed(&*s)?, vec![], "nothing listed before")?;

    apply(&*s, "s", vec![Write::Trash { at: 7 }])?;
    eq(st(s.get_meta("s"))?, None, "a trashed session's meta is hidden")?;
    let ids: Vec<String> = st(s.list_metas())?.into_iter().map(|m| m.session_id).collect();
    eq(ids, vec!["t".into()], "a trashed session is not listed")?;
    let trashed = Lifecycle {
        trashed: Some(Box::new(Trashed { at: 7, meta: before.0.clone().unwrap_or(meta) })),
        expires_at: None,
    };
    eq(st(s.lifecycle("s"))?, trashed.clone(), "the trash keeps its meta")?;
    eq(listed(&*s)?, vec![("s".into(), trashed)], "listed with its lifecycle")?;
    eq(st(s.list_entries("s"))?.len(), 1, "its entries are kept")?;

    apply(&*s, "s", vec![Write::Restore])?;
    eq(held(&*s, "s")?, before, "a restore gives everything back")?;
    eq(st(s.lifecycle("s"))?, Lifecycle::default(), "and empties the lifecycle")?;
    eq(listed(&*s)?, vec![], "nothing listed after")
}

pub fn check_lifecycle_expiry_and_delete(make: Make<'_>) -> Result<(), String> {
    let s = make();
    apply(&*s, "s", vec![Write::PutMeta(sample_meta("s", 1))])?;
    apply(&*s, "s", vec![Write::SetExpiry(Some(50))])?;
    let expiring = Lifecycle { trashed: None, expires_at: Some(50) };
    eq(st(s.lifecycle("s"))?, expiring.clone(), "the expiry is kept")?;
    eq(listed(&*s)?, vec![("s".into(), expiring)], "and listed")?;
    ensure_meta(&*s, "s")?;
    apply(&*s, "s", vec![Write::SetExpiry(None)])?;
    eq(listed(&*s)?, vec![], "a cleared expiry is not listed")?;
    // A trashed session with an expiry, then deleted: nothing is left of it.
    apply(&*s, "s", vec![Write::SetExpiry(Some(60)), Write::Trash { at: 9 }])?;
    eq(listed(&*s)?.len(), 1, "trashed and expiring")?;
    apply(&*s, "s", crate::ops::delete::deletion("s").writes)?;
    eq(st(s.lifecycle("s"))?, Lifecycle::default(), "a delete clears the lifecycle")?;
    eq(listed(&*s)?, vec![], "nothing listed after the delete")?;
    eq(st(s.get_meta("s"))?, None, "nothing left")
}

fn ensure_meta(store: &dyn Store, sid: &str) -> Result<(), String> {
    match st(store.get_meta(sid))? {
        Some(_) => Ok(()),
        None => Err(alloc::format!("{sid}: an expiring session keeps its meta")),
    }
}
