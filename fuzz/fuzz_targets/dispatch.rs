//! Fuzz target `dispatch`: up to eight calls per input, one per line — the first byte picks a
//! function of the catalog, seed or extension (`function_at`; past the end: an unknown id), the rest of the line is its JSON payload
//! (not JSON: sent as a string). Over the seeded store, no call may panic, every error must be a
//! `session/*` code and leave the store exactly as it was, and every session the calls leave must
//! replay from its snapshot to the same state.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use session_fuzz::{check_error, check_snapshots_replay, dump, function_at, Fixture};

fuzz_target!(|data: &[u8]| {
    let fixture = Fixture::new();
    for line in data.split(|b| *b == b'\n').take(8) {
        let Some((&pick, json)) = line.split_first() else { continue };
        let id = function_at(pick);
        let payload = serde_json::from_slice::<Value>(json)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(json).into_owned()));
        let before = dump(&fixture.store);
        match fixture.call(id, payload) {
            Ok(outcome) => {
                serde_json::to_vec(&outcome.response).expect("a response encodes");
                for emitted in &outcome.events {
                    serde_json::to_vec(&emitted.to_envelope()).expect("an event encodes");
                }
            }
            Err(error) => {
                check_error(&error);
                assert!(
                    dump(&fixture.store) == before,
                    "{id} failed ({error}) but changed the store"
                );
            }
        }
        fixture.clock.advance(1);
    }
    check_snapshots_replay(&fixture.store);
});
