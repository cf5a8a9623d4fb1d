//! `session::get-message`: one entry of any branch, `null` when the session or entry is unknown
//! (or the session is in the trash).

use crate::error::Result;
use crate::store::Store;
use crate::view;
use crate::wire::{GetMessageRequest, GetMessageResponse};

pub fn decide(store: &dyn Store, req: GetMessageRequest) -> Result<Option<GetMessageResponse>> {
    let include_images = req.include_image_data.unwrap_or(true);
    let entry = store.get_entry(&req.session_id, &req.entry_id)?;
    if entry.is_some() && super::trash::is_trashed(store, &req.session_id)? {
        return Ok(None);
    }
    Ok(entry.map(|e| GetMessageResponse { entry: view::entry_view(&e, include_images) }))
}
