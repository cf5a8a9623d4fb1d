//! The attachment functions: `put-attachment` (shape and size checked before the session),
//! `get-attachment`, `list-attachments` and `delete-attachment` (refused while referenced). All
//! event-silent and `updated_at`-neutral.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::{require_meta, stored_meta, Finish, Outcome, Plan};
use crate::env::Env;
use crate::error::{ErrorCode, Result, SessionError};
use crate::store::SessionView;
use crate::store::{ChangeSet, Store, Write};
use crate::wire::{
    visit_attachment_ids, AttachmentMeta, ContentBlock, DeleteAttachmentRequest,
    DeleteAttachmentResponse, GetAttachmentRequest, GetAttachmentResponse, ListAttachmentsRequest,
    ListAttachmentsResponse, PutAttachmentRequest, PutAttachmentResponse,
};

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The `file` block that references an attachment.
pub fn file_block(meta: &AttachmentMeta) -> ContentBlock {
    ContentBlock::File {
        attachment_id: meta.attachment_id.clone(),
        name: meta.name.clone(),
        mime: meta.mime.clone(),
        size: meta.size,
    }
}

pub fn put(
    view: &dyn SessionView,
    env: &Env<'_>,
    req: PutAttachmentRequest,
) -> Result<Plan<PutAttachmentResponse>> {
    let name = req.name.trim();
    if name.is_empty() {
        return Err(SessionError::invalid_request("attachment name must not be blank"));
    }
    let bytes = STANDARD
        .decode(req.data.as_bytes())
        .map_err(|e| SessionError::invalid_request(format!("data is not valid base64: {e}")))?;
    if bytes.len() as u64 > env.limits.max_attachment_bytes {
        return Err(SessionError::new(
            ErrorCode::AttachmentTooLarge,
            format!(
                "attachment is {} bytes; the limit is {} bytes",
                bytes.len(),
                env.limits.max_attachment_bytes
            ),
        ));
    }
    require_meta(view)?;
    let mime = match req.mime.trim() {
        "" => "application/octet-stream",
        mime => mime,
    };
    let meta = AttachmentMeta {
        attachment_id: env.ids.attachment_id(),
        session_id: req.session_id.clone(),
        name: name.into(),
        mime: mime.into(),
        size: bytes.len() as u64,
        sha256: sha256_hex(&bytes),
        created_at: env.clock.now_ms(),
    };
    let block = file_block(&meta);
    let changes =
        ChangeSet::new(req.session_id).with(Write::PutAttachment { meta: meta.clone(), bytes });
    Ok(Plan::write(changes, PutAttachmentResponse { attachment: meta, block }, Vec::new()))
}

pub fn get(store: &dyn Store, req: GetAttachmentRequest) -> Result<Option<GetAttachmentResponse>> {
    let response = if req.include_data.unwrap_or(true) {
        store.get_attachment(&req.session_id, &req.attachment_id)?.map(|(attachment, bytes)| {
            GetAttachmentResponse { attachment, data: Some(STANDARD.encode(bytes)) }
        })
    } else {
        store
            .get_attachment_meta(&req.session_id, &req.attachment_id)?
            .map(|attachment| GetAttachmentResponse { attachment, data: None })
    };
    if response.is_some() && super::trash::is_trashed(store, &req.session_id)? {
        return Ok(None);
    }
    Ok(response)
}

/// Every attachment of a session, sorted by `(created_at, attachment_id)`.
pub fn sorted_attachments(store: &dyn Store, session_id: &str) -> Result<Vec<AttachmentMeta>> {
    let mut attachments = store.list_attachments(session_id)?;
    crate::order::sort_by(&mut attachments, |a, b| {
        (a.created_at, &a.attachment_id).cmp(&(b.created_at, &b.attachment_id))
    });
    Ok(attachments)
}

pub fn list(store: &dyn Store, req: ListAttachmentsRequest) -> Result<ListAttachmentsResponse> {
    stored_meta(store, &req.session_id)?;
    Ok(ListAttachmentsResponse { attachments: sorted_attachments(store, &req.session_id)? })
}

pub fn delete(
    view: &dyn SessionView,
    req: DeleteAttachmentRequest,
) -> Result<Plan<DeleteAttachmentResponse>> {
    let mut meta = require_meta(view)?;
    let aid = req.attachment_id.as_str();
    for entry in view.entries()? {
        let mut in_use = false;
        if let Some(message) = entry.message() {
            visit_attachment_ids(message.content(), &mut |id| in_use |= id == aid);
        }
        if in_use {
            return Err(SessionError::new(
                ErrorCode::AttachmentInUse,
                format!("attachment {aid} is referenced by entry {}", entry.id()),
            ));
        }
    }
    let mut changes =
        ChangeSet::new(req.session_id.clone()).with(Write::DeleteAttachment(aid.into()));
    if let Some(parked) = &meta.draft_attachments {
        if parked.iter().any(|a| a.attachment_id == aid) {
            let rest: Vec<AttachmentMeta> =
                parked.iter().filter(|a| a.attachment_id != aid).cloned().collect();
            meta.draft_attachments = (!rest.is_empty()).then_some(rest);
            changes.push(Write::PutMeta(meta));
        }
    }
    let finish = Finish::after_apply(|applied: crate::store::Applied| {
        let deleted = applied.attachments_deleted.first().copied().unwrap_or(false);
        Ok(Outcome::silent(DeleteAttachmentResponse { deleted }))
    });
    Ok(Plan { changes: Some(changes), finish })
}
