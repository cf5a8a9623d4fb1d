//! `session::set-draft`: park or clear unsent composer text and attachments. Event-silent and
//! `updated_at`-neutral, so keystroke-rate saves neither reorder `list` nor wake subscribers.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{require_meta, Plan};
use crate::error::{Result, SessionError};
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{AttachmentMeta, SetDraftRequest, SetDraftResponse};

pub fn decide(view: &dyn SessionView, req: SetDraftRequest) -> Result<Plan<SetDraftResponse>> {
    let mut meta = require_meta(view)?;
    let text = req.draft.filter(|d| !d.trim().is_empty());
    let parked: Option<Vec<AttachmentMeta>> = match req.attachment_ids {
        None => meta.draft_attachments.clone(),
        Some(ids) => {
            let mut resolved: Vec<AttachmentMeta> = Vec::new();
            let mut seen: Vec<&String> = Vec::new();
            for id in &ids {
                if seen.contains(&id) {
                    continue;
                }
                seen.push(id);
                let found = view.attachment_meta(id)?.ok_or_else(|| {
                    SessionError::invalid_request(format!(
                        "attachment {id} does not exist in session {}",
                        req.session_id
                    ))
                })?;
                resolved.push(found);
            }
            (!resolved.is_empty()).then_some(resolved)
        }
    };
    let response =
        SetDraftResponse { draft: text.clone(), attachments: parked.clone().unwrap_or_default() };
    if meta.draft == text && meta.draft_attachments == parked {
        return Ok(Plan::no_write(response));
    }
    meta.draft = text;
    meta.draft_attachments = parked;
    let changes = ChangeSet::new(req.session_id).with(Write::PutMeta(meta));
    Ok(Plan::write(changes, response, Vec::new()))
}
