//! `session::get-message`: one entry of any branch, `null` when the session or entry is unknown.

use crate::error::Result;
use crate::store::Store;
use crate::view;
use crate::wire::{GetMessageRequest, GetMessageResponse};

pub fn decide(store: &dyn Store, req: GetMessageRequest) -> Result<Option<GetMessageResponse>> {
    let include_images = req.include_image_data.unwrap_or(true);
    let entry = store.get_entry(&req.session_id, &req.entry_id)?;
    Ok(entry.map(|e| GetMessageResponse { entry: view::entry_view(&e, include_images) }))
}
