//! `session::set-active-leaf`: switch branches by moving the leaf to any entry. Event-silent and
//! `updated_at`-neutral.

use alloc::vec::Vec;

use super::{require_entry, require_meta, Plan};
use crate::error::Result;
use crate::store::SessionView;
use crate::store::{ChangeSet, Write};
use crate::wire::{SetActiveLeafRequest, SetActiveLeafResponse};

pub fn decide(
    view: &dyn SessionView,
    req: SetActiveLeafRequest,
) -> Result<Plan<SetActiveLeafResponse>> {
    require_meta(view)?;
    require_entry(view, &req.entry_id)?;
    let changes = ChangeSet::new(req.session_id).with(Write::SetActiveLeaf(req.entry_id.clone()));
    Ok(Plan::write(changes, SetActiveLeafResponse { active_leaf: req.entry_id }, Vec::new()))
}
