//! Fuzz target `cursor`: arbitrary cursors through `session::list` (every order),
//! `session::messages` and `session::messages-range` (span and list selectors) over the seeded
//! store. The first byte picks the form: odd → the rest is base64-encoded first (so the fuzzer
//! reaches the JSON inside a well-formed cursor), even → the rest is the cursor text itself. No
//! panic; a refused cursor is `session/invalid_cursor` and nothing else; a cursor that decodes
//! re-encodes to one that decodes to the same position.
#![no_main]

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use session_core::cursor::{self, EntryCursor, ListCursor};
use session_core::ErrorCode;
use session_fuzz::{check_error, Fixture, SESSION};

fuzz_target!(|data: &[u8]| {
    let Some((&form, rest)) = data.split_first() else { return };
    let cursor = if form & 1 == 1 {
        STANDARD.encode(rest)
    } else {
        String::from_utf8_lossy(rest).into_owned()
    };
    if let Ok(c) = cursor::decode::<ListCursor>(&cursor) {
        assert_eq!(cursor::decode::<ListCursor>(&cursor::encode(&c)).ok(), Some(c));
    }
    if let Ok(c) = cursor::decode::<EntryCursor>(&cursor) {
        assert_eq!(cursor::decode::<EntryCursor>(&cursor::encode(&c)).ok(), Some(c));
    }
    let fixture = Fixture::new();
    let calls = [
        ("session::list", json!({ "cursor": cursor })),
        ("session::list", json!({ "cursor": cursor, "order": "created_asc" })),
        ("session::list", json!({ "cursor": cursor, "order": "updated_desc", "limit": 1 })),
        ("session::messages", json!({ "session_id": SESSION, "cursor": cursor })),
        (
            "session::messages",
            json!({ "session_id": SESSION, "cursor": cursor, "roles": ["user"] }),
        ),
        (
            "session::messages-range",
            json!({ "session_id": SESSION, "cursor": cursor,
            "from_entry_id": "e_001", "to_entry_id": "e_004", "limit": 1 }),
        ),
        (
            "session::messages-range",
            json!({ "session_id": SESSION, "cursor": cursor,
            "entry_ids": ["e_004", "e_001", "e_003"], "limit": 1 }),
        ),
    ];
    for (id, payload) in calls {
        if let Err(error) = fixture.call(id, payload) {
            check_error(&error);
            assert_eq!(error.code, ErrorCode::InvalidCursor, "{id}: {error}");
        }
    }
});
