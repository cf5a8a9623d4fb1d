//! `session::changes` (extension): one page of a session's change feed after a seq — how a
//! replica that missed deliveries catches up (or learns it must reload: `truncated`).

use crate::env::Env;
use crate::error::Result;
use crate::store::Store;
use crate::wire::{ChangesRequest, ChangesResponse};

pub fn decide(store: &dyn Store, env: &Env<'_>, req: ChangesRequest) -> Result<ChangesResponse> {
    page(store, env, req)
}

/// The page itself: `session::changes` is a read, so its plan is just this response (what a
/// host that pages the feed itself, like [`crate::replica::rebuild`]'s callers, calls directly).
pub fn page(store: &dyn Store, env: &Env<'_>, req: ChangesRequest) -> Result<ChangesResponse> {
    let limit = env.limits.page_size(req.limit);
    let after_seq = req.after_seq.unwrap_or(0);
    let page = store.changes(&req.session_id, after_seq, limit)?;
    let last = page.changes.last().map(|c| c.seq);
    let next_after_seq = last.filter(|&seq| seq < page.latest_seq);
    Ok(ChangesResponse {
        session_id: req.session_id,
        epoch: page.epoch,
        changes: page.changes,
        latest_seq: page.latest_seq,
        next_after_seq,
        truncated: page.truncated,
    })
}
