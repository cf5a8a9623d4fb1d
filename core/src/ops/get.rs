//! `session::get`: one session's meta, `null` when unknown.

use crate::error::Result;
use crate::store::Store;
use crate::wire::{GetRequest, GetResponse};

pub fn decide(store: &dyn Store, req: GetRequest) -> Result<Option<GetResponse>> {
    Ok(store.get_meta(&req.session_id)?.map(|meta| GetResponse { meta }))
}
