//! Opaque pagination cursors (contract §7): standard padded base64 of a compact JSON object.

use alloc::string::String;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::error::{Result, SessionError};
use crate::wire::ListOrder;

/// `session::list` position: order tag, sort key and session id of the last returned session.
/// `session::search` uses it too (one decoder in the browser bundle, not two): order `search`,
/// the hit's timestamp and session id, and its score and entry id, which list cursors leave out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListCursor {
    pub o: String,
    pub k: i64,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e: Option<String>,
}

/// `session::messages` / `messages-range` position: the last returned entry id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryCursor {
    pub id: String,
}

/// Encodes a cursor value.
pub fn encode<T: Serialize>(cursor: &T) -> String {
    let json = serde_json::to_vec(cursor).unwrap_or_default();
    STANDARD.encode(json)
}

/// Decodes a cursor; anything malformed is `session/invalid_cursor`.
pub fn decode<T: DeserializeOwned>(cursor: &str) -> Result<T> {
    let bytes = decode_base64(cursor)?;
    serde_json::from_slice(&bytes)
        .map_err(|_| SessionError::invalid_cursor("cursor does not decode to a known position"))
}

/// The JSON bytes of a cursor: the part of [`decode`] that does not depend on the cursor type
/// (written once, not once per type).
fn decode_base64(cursor: &str) -> Result<alloc::vec::Vec<u8>> {
    crate::limits::check_cursor(cursor)?;
    STANDARD.decode(cursor).map_err(|_| SessionError::invalid_cursor("cursor is not valid base64"))
}

impl ListCursor {
    /// Decodes a list cursor and checks it was issued for `order`.
    pub fn decode_for(cursor: &str, order: ListOrder) -> Result<ListCursor> {
        Self::decode_tagged(cursor, order.as_str())
    }

    /// Decodes a cursor and checks it was issued with order tag `order`.
    pub fn decode_tagged(cursor: &str, order: &str) -> Result<ListCursor> {
        let c: ListCursor = decode(cursor)?;
        if c.o != order {
            return Err(SessionError::invalid_cursor(alloc::format!(
                "cursor was issued for order {} but the request uses {}",
                c.o,
                order
            )));
        }
        Ok(c)
    }
}
