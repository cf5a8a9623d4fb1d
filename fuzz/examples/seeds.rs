//! Writes the seed corpora of the three targets into `seeds/<target>/`: one valid request per
//! catalog function over the fixture's ids, a few cursors the core issued, and the fixture's
//! sessions as logs (snapshot and call-by-call). Run: `cargo run --example seeds` (in `fuzz/`).

use std::fs;
use std::path::Path;

use serde_json::json;
use session_fuzz::{pick_of, Fixture, SESSION};

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    fs::create_dir_all(dir).expect("seed dir");
    fs::write(dir.join(name), bytes).expect("seed file");
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let text =
        |t: &str| json!({"role": "user", "content": [{"type": "text", "text": t}], "timestamp": 1});
    let s = SESSION;
    let requests = [
        ("session::create", json!({"title": "x", "metadata": {"a": 1}, "kind": "agent"})),
        ("session::ensure", json!({"session_id": "s2", "metadata": {"owner": "u2"}})),
        ("session::get", json!({"session_id": s})),
        ("session::list", json!({"status": "idle", "metadata": {"owner": "u1"}, "limit": 1})),
        ("session::set-meta", json!({"session_id": s, "title": "n", "metadata": {"x": [1]}})),
        ("session::set-status", json!({"session_id": s, "status": "error", "reason": "r"})),
        ("session::set-draft", json!({"session_id": s, "draft": "d", "attachment_ids": []})),
        ("session::delete", json!({"session_id": "s_001"})),
        (
            "session::append",
            json!({"session_id": s, "message": text("a"), "entry_id": "e9", "parent_id": "e_002"}),
        ),
        ("session::append-many", json!({"session_id": s, "messages": [text("b"), text("c")]})),
        (
            "session::update-message",
            json!({"session_id": s, "entry_id": "e_003", "content": [], "expected_revision": 0, "details": {"d": 1}}),
        ),
        ("session::get-message", json!({"session_id": s, "entry_id": "e_002"})),
        ("session::messages", json!({"session_id": s, "limit": 2, "include_custom": true})),
        (
            "session::messages-range",
            json!({"session_id": s, "from_entry_id": "e_001", "to_entry_id": "e_004"}),
        ),
        ("session::messages-tail", json!({"session_id": s, "limit": 2})),
        ("session::fork", json!({"session_id": s, "entry_id": "e_003", "title": "f"})),
        ("session::set-active-leaf", json!({"session_id": s, "entry_id": "e_006"})),
        (
            "session::put-attachment",
            json!({"session_id": s, "name": "n", "mime": "", "data": "AAEC"}),
        ),
        (
            "session::get-attachment",
            json!({"session_id": s, "attachment_id": "a_001", "include_data": false}),
        ),
        ("session::list-attachments", json!({"session_id": s})),
        ("session::delete-attachment", json!({"session_id": s, "attachment_id": "a_001"})),
        (
            "session::store::commit-append",
            json!({"session_id": s, "parent_explicit": false,
            "entry": {"kind": "custom", "id": "c9", "parent_id": null, "timestamp": 5, "custom_type": "t"}}),
        ),
        (
            "session::store::put-meta",
            json!({"meta": {"session_id": "s3", "title": "", "description": "",
            "status": "idle", "created_at": 1, "updated_at": 1, "message_count": 0}}),
        ),
        (
            "session::store::apply",
            json!({"session_id": s, "writes": [
                {"type": "put_entry", "entry": {"kind": "custom", "id": "c8", "parent_id": null,
                    "timestamp": 5, "custom_type": "t"}},
                {"type": "set_active_leaf", "entry_id": "c8"},
                {"type": "delete_attachment", "attachment_id": "a_none"}]}),
        ),
        (
            "session::store::publish-events",
            json!({"events": [{"trigger_type": "session::deleted",
            "payload": {"session_id": s, "timestamp": 1}}]}),
        ),
    ];
    for (id, payload) in &requests {
        let mut bytes = vec![pick_of(id)];
        bytes.extend_from_slice(payload.to_string().as_bytes());
        write(&root.join("dispatch"), &id.replace("::", "_"), &bytes);
    }
    let fixture = Fixture::new();
    for (name, id, payload) in [
        ("list", "session::list", json!({"limit": 1})),
        ("messages", "session::messages", json!({"session_id": s, "limit": 1})),
        (
            "range",
            "session::messages-range",
            json!({"session_id": s, "entry_ids": ["e_001", "e_002"], "limit": 1}),
        ),
    ] {
        let response = fixture.call(id, payload).expect("seed call").response;
        let cursor = response["next_cursor"].as_str().expect("a cursor").to_string();
        write(&root.join("cursor"), name, &[&[0u8][..], cursor.as_bytes()].concat());
    }
    write(&root.join("cursor"), "json", b"\x01{\"o\":\"created_desc\",\"k\":-1,\"id\":\"s1\"}");
    for sid in fixture.store.session_ids() {
        let bytes = fixture.store.export_jsonl(&sid).expect("export");
        write(&root.join("jsonl_replay"), &format!("{sid}.snapshot"), &bytes);
    }
    let legacy = concat!(
        "{\"type\":\"meta\",\"meta\":{\"session_id\":\"s\",\"title\":\"\",\"description\":\"\",\"status\":\"idle\",\"created_at\":1,\"updated_at\":1,\"message_count\":0}}\n",
        "{\"type\":\"entry\",\"entry\":{\"kind\":\"custom\",\"id\":\"e1\",\"parent_id\":null,\"timestamp\":1,\"custom_type\":\"x\"}}\n",
        "{\"type\":\"leaf\",\"entry_id\":\"e1\"}\n",
        "{\"type\":\"group\",\"records\":[{\"type\":\"commit\",\"entry_id\":\"e1\"},{\"type\":\"settle\"}]}\n",
        "{\"type\":\"meta\",\"me"
    );
    write(&root.join("jsonl_replay"), "legacy", legacy.as_bytes());
}
