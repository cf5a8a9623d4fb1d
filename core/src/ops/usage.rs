//! `session::usage` (extension, issue 38): the token, cost and message totals of the branch
//! ending at a leaf (default: the active leaf) and of the whole session, from the totals the
//! store keeps ([`crate::usage`]).

use alloc::string::String;

use super::{stored_entry, stored_meta};
use crate::error::Result;
use crate::store::Store;
use crate::wire::{UsageRequest, UsageResponse};

pub fn decide(store: &dyn Store, req: UsageRequest) -> Result<UsageResponse> {
    let sid = &req.session_id;
    stored_meta(store, sid)?;
    let leaf = match &req.leaf {
        Some(leaf) => Some(String::from(stored_entry(store, sid, leaf)?.id())),
        None => store.get_active_leaf(sid)?,
    };
    let (branch, session) = store.usage(sid, leaf.as_deref())?;
    Ok(UsageResponse {
        session_id: sid.clone(),
        leaf,
        branch: branch.totals(),
        session: session.totals(),
    })
}
