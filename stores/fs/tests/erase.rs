//! Issue 37's byte scan on the fs store: sessions holding a marker text everywhere a session can
//! hold text (messages, titles, metadata, attachments, drafts, deltas, updates), erased by a
//! metadata filter through `session::erase`, leave no byte of it in any file under the data_dir,
//! the journal and the catalog included, while the store runs and after it closed; the session
//! that was not erased is intact.

mod common;

use std::path::Path;

use serde_json::{json, Value};
use session_core::{catalog, Env, Limits, ManualClock, SeqIds};
use session_store_fs::{FsConfig, FsStore, SyncMode};

const MARKER: &str = "my SSN is 123-45-6789";

fn files_with_marker(dir: &Path) -> Vec<String> {
    common::files_holding(dir, MARKER)
}

#[test]
fn an_erased_tenant_leaves_no_byte_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Group)).expect("open");
    let (clock, ids) = (ManualClock::new(), SeqIds::new());
    let env = Env { clock: &clock, ids: &ids, limits: Limits::default() };
    let call = |id: &str, payload: Value| -> Value {
        catalog::dispatch(&store, &env, id, payload).expect("in catalog").expect(id).response
    };
    let message = |text: &str| json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1});
    let base64_marker = "bXkgU1NOIGlzIDEyMy00NS02Nzg5";
    for sid in ["t1", "t2", "t3"] {
        let metadata = json!({"owner": "u_1", "note": MARKER});
        call("session::ensure", json!({"session_id": sid, "title": MARKER, "metadata": metadata}));
        call(
            "session::append",
            json!({"session_id": sid, "entry_id": "m", "message": message(MARKER)}),
        );
        call(
            "session::append",
            json!({"session_id": sid, "entry_id": "r", "message": message("")}),
        );
        for _ in 0..3 {
            call(
                "session::append-delta",
                json!({"session_id": sid, "entry_id": "r", "text": MARKER}),
            );
        }
        let content = json!([{"type": "text", "text": format!("{MARKER} (edited)")}]);
        call(
            "session::update-message",
            json!({"session_id": sid, "entry_id": "m", "content": content}),
        );
        call("session::set-draft", json!({"session_id": sid, "draft": MARKER}));
        let put = json!({"session_id": sid, "name": "note.txt", "mime": "text/plain", "data": base64_marker});
        call("session::put-attachment", put);
    }
    // One of them in the trash, with an expiry: its parked meta is in its log and the catalog.
    call("session::set-expiry", json!({"session_id": "t3", "expires_at": 9_000_000_000_000i64}));
    call("session::trash", json!({"session_id": "t3"}));
    call("session::ensure", json!({"session_id": "kept", "metadata": {"owner": "u_2"}}));
    call(
        "session::append",
        json!({"session_id": "kept", "entry_id": "k", "message": message("fine")}),
    );
    let kept_before = call("session::messages", json!({"session_id": "kept"}));
    store.flush_catalog().expect("catalog written");
    assert!(!files_with_marker(dir.path()).is_empty(), "the test wrote the marker");

    let erased = call("session::erase", json!({"metadata": {"owner": "u_1"}}));
    assert_eq!(erased["erased"], 3, "{erased}");
    assert!(erased["bytes"].as_u64().unwrap_or(0) > 4 * MARKER.len() as u64, "{erased}");
    assert_eq!(files_with_marker(dir.path()), Vec::<String>::new(), "while the store runs");
    assert_eq!(call("session::messages", json!({"session_id": "kept"})), kept_before);
    drop(store);
    assert_eq!(files_with_marker(dir.path()), Vec::<String>::new(), "after it closed");
    let store = FsStore::open(FsConfig::new(dir.path()).sync(SyncMode::Group)).expect("reopen");
    let listed = catalog::dispatch(&store, &env, "session::list", json!({}))
        .expect("in catalog")
        .expect("list")
        .response;
    assert_eq!(listed["sessions"].as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed["sessions"][0]["session_id"], "kept");
}
