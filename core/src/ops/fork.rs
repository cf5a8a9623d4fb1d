//! `session::fork`: copy the root → entry path into a new, independent session (fresh ids,
//! original timestamps, revisions reset, bookkeeping anchors remapped, referenced attachments
//! copied); fires only `session::created`.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde_json::Value;

use super::create::{created_event, new_meta, NewSession};
use super::{require_entry, require_meta, Plan};
use crate::env::Env;
use crate::error::Result;
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{visit_attachment_ids, ForkRequest, ForkResponse, SessionEntry};

/// Rewrites `value` (a string entry id) to its copy's id when it names a copied entry.
fn remap_id(value: &mut Value, ids: &BTreeMap<String, String>) {
    if let Value::String(id) = value {
        if let Some(new_id) = ids.get(id.as_str()) {
            *id = new_id.clone();
        }
    }
}

/// Remaps the entry-id anchors of known bookkeeping custom entries (`compaction`,
/// `message_order`); other data is copied verbatim.
fn remap_custom_data(custom_type: &str, data: &mut Value, ids: &BTreeMap<String, String>) {
    let Value::Object(map) = data else { return };
    match custom_type {
        "compaction" => {
            if let Some(v) = map.get_mut("tail_start_entry_id") {
                remap_id(v, ids);
            }
        }
        "message_order" => {
            if let Some(v) = map.get_mut("after") {
                remap_id(v, ids);
            }
            if let Some(Value::Array(moved)) = map.get_mut("moved") {
                moved.iter_mut().for_each(|v| remap_id(v, ids));
            }
        }
        _ => {}
    }
}

pub fn decide(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: ForkRequest,
) -> Result<Plan<ForkResponse>> {
    let source = require_meta(view)?;
    require_entry(view, &req.entry_id)?;
    let path = view.path_to(&req.entry_id)?;
    let new_sid = env.ids.session_id();
    // Inserted one by one (in path order, as the new ids are drawn): `collect` would sort them
    // first (the bundle's size).
    let mut ids = BTreeMap::new();
    for entry in &path {
        ids.insert(String::from(entry.id()), env.ids.entry_id());
    }
    let mut changes = ChangeSet::new(new_sid.clone());
    let mut attachment_ids: Vec<&str> = Vec::new();
    let mut message_count = 0u64;
    for entry in &path {
        let mut copy = entry.clone();
        let new_parent = entry.parent_id().and_then(|p| ids.get(p)).cloned();
        match &mut copy {
            SessionEntry::Message { id, parent_id, revision, .. } => {
                *id = ids[entry.id()].clone();
                *parent_id = new_parent;
                *revision = 0;
                message_count += 1;
            }
            SessionEntry::Custom { id, parent_id, revision, custom_type, data, .. } => {
                *id = ids[entry.id()].clone();
                *parent_id = new_parent;
                *revision = 0;
                remap_custom_data(custom_type, data, &ids);
            }
        }
        if let Some(message) = entry.message() {
            visit_attachment_ids(message.content(), &mut |id| {
                if !attachment_ids.contains(&id) {
                    attachment_ids.push(id);
                }
            });
        }
        changes.push(Write::PutEntry(copy));
    }
    changes.push(Write::SetActiveLeaf(ids[req.entry_id.as_str()].clone()));
    for id in attachment_ids {
        if let Some((mut meta, bytes)) = view.attachment(id)? {
            meta.session_id = new_sid.clone();
            changes.push(Write::PutAttachment { meta, bytes });
        }
    }
    let fields = NewSession {
        title: Some(req.title.unwrap_or(source.title)),
        description: Some(source.description),
        metadata: source.metadata,
        kind: Some(source.kind),
    };
    let mut meta = new_meta(new_sid.clone(), fields, env.clock.now_ms());
    meta.forked_from = Some(req.session_id);
    meta.message_count = message_count;
    changes.push(Write::PutMeta(meta.clone()));
    let events = vec![created_event(&meta)];
    Ok(Plan::write(changes, ForkResponse { session_id: new_sid, meta }, events))
}
