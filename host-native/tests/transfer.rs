//! `session_manager::transfer`: export → import → export round-trips byte for byte (log and
//! snapshot formats, attachments included) and rebuilds the same sessions; and the web bench's
//! fixture (`web-bench/tests/fixtures/`) is what this export code writes for the demo session
//! (`TRANSFER_FIXTURE_UPDATE=1` rewrites it).

use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use session_core::{catalog, Env, Limits, ManualClock, SeqIds, Store};
use session_manager::transfer::{export_all, export_session, import_files, Format};
use session_manager::{FsConfig, FsStore, SyncMode};

struct Host {
    store: FsStore,
    clock: ManualClock,
    ids: SeqIds,
}

impl Host {
    fn open(dir: &Path) -> Host {
        let store = FsStore::open(FsConfig::new(dir).sync(SyncMode::Never)).expect("open");
        Host { store, clock: ManualClock::new(), ids: SeqIds::new() }
    }

    fn call(&self, id: &str, req: Value) -> Value {
        self.clock.advance(1000);
        let env = Env { clock: &self.clock, ids: &self.ids, limits: Limits::default() };
        let outcome = catalog::dispatch(&self.store, &env, id, req).expect("in catalog");
        outcome.unwrap_or_else(|e| panic!("{id}: {e}")).response
    }
}

fn text(t: &str) -> Value {
    json!({ "type": "text", "text": t })
}

fn assistant(content: Value, stop: &str) -> Value {
    json!({ "role": "assistant", "content": content, "stop_reason": stop, "model": "claude-sonnet",
            "provider": "anthropic", "timestamp": 0, "usage": { "input": 1200, "output": 80 } })
}

fn call_block(id: &str, function_id: &str, arguments: Value) -> Value {
    json!({ "type": "function_call", "id": id, "function_id": function_id, "arguments": arguments })
}

fn result(call: &str, function_id: &str, out: &str) -> Value {
    json!({ "role": "function_result", "function_call_id": call, "function_id": function_id,
            "content": [text(out)], "details": { "exit": 0 }, "timestamp": 0 })
}

/// A 2×2 PNG (red, green, blue, white).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";

/// The demo session of the web bench: prose, thinking, a three-call tool run, a streamed answer,
/// an image and a file chip, a compaction entry, a second branch and a second session.
fn demo(host: &Host) {
    let sid = "s_001";
    let append = |message: Value| {
        host.call("session::append", json!({ "session_id": sid, "message": message }))
    };
    host.call(
        "session::create",
        json!({ "title": "Refactor the parser", "metadata": { "owner": "u_1" } }),
    );
    append(
        json!({ "role": "user", "content": [text("Please refactor parser.rs and run the tests.")], "timestamp": 0 }),
    ); // e_001
    append(assistant(
        json!([{ "type": "thinking", "text": "Read the file first, then run the suite." },
        text("Let me look at the parser."), call_block("c1", "fs::read", json!({ "path": "src/parser.rs" }))]),
        "function_call",
    ));
    append(result("c1", "fs::read", "fn parse(input: &str) -> Ast { /* 300 lines */ }"));
    append(assistant(
        json!([call_block("c2", "shell::run", json!({ "cmd": "cargo test -p parser" }))]),
        "function_call",
    ));
    append(result("c2", "shell::run", "test result: ok. 42 passed; 0 failed"));
    append(assistant(
        json!([call_block("c3", "fs::write", json!({ "path": "src/parser.rs", "bytes": 5120 }))]),
        "function_call",
    ));
    append(result("c3", "fs::write", "wrote 5120 bytes")); // e_007
    host.call(
        "session::set-status",
        json!({ "session_id": sid, "status": "working", "reason": "answering" }),
    );
    append(assistant(json!([]), "end")); // e_008, streamed
    for partial in [
        "Done.",
        "Done. The parser is split",
        "Done. The parser is split into lexer.rs and parser.rs; all 42 tests pass.",
    ] {
        host.call(
            "session::update-message",
            json!({ "session_id": sid, "entry_id": "e_008", "content": [text(partial)] }),
        );
    }
    let put = host.call(
        "session::put-attachment",
        json!({ "session_id": sid, "name": "diagram.png", "mime": "image/png", "data": PNG }),
    );
    let aid = put["attachment"]["attachment_id"].clone();
    append(
        json!({ "role": "user", "timestamp": 0, "content": [text("Here is the module diagram."),
        { "type": "image", "mime": "image/png", "data": PNG, "attachment_id": aid }, put["block"].clone()] }),
    ); // e_009
    host.call("session::append", json!({ "session_id": sid,
        "custom": { "custom_type": "compaction", "data": { "summary": "Refactor done; diagram received." } } })); // e_010
    append(assistant(json!([text("Thanks — the diagram matches the new layout.")]), "end")); // e_011
                                                                                             // A second branch from the last tool result, then back to the main line.
    host.call("session::set-active-leaf", json!({ "session_id": sid, "entry_id": "e_007" }));
    append(assistant(
        json!([text("Alternative answer: I would rather keep a single file.")]),
        "end",
    )); // e_012
    host.call("session::set-active-leaf", json!({ "session_id": sid, "entry_id": "e_011" }));
    host.call("session::set-status", json!({ "session_id": sid, "status": "done" }));
    host.call("session::create", json!({ "title": "Empty scratch session", "kind": "e2e" }));
}

fn read_dir_sorted(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for item in fs::read_dir(&d).expect("read dir") {
            let path = item.expect("item").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("inside").to_string_lossy().into_owned();
                out.push((rel, fs::read(&path).expect("read")));
            }
        }
    }
    out.sort();
    out
}

fn state(host: &Host, sid: &str) -> (Value, Vec<Value>, Option<String>, Vec<Value>) {
    let mut entries: Vec<Value> = host
        .store
        .list_entries(sid)
        .expect("entries")
        .iter()
        .map(|e| serde_json::to_value(e).expect("json"))
        .collect();
    entries.sort_by_key(|e| e["id"].as_str().unwrap_or_default().to_string());
    let mut attachments: Vec<Value> = host
        .store
        .list_attachments(sid)
        .expect("attachments")
        .iter()
        .map(|a| serde_json::to_value(a).expect("json"))
        .collect();
    attachments.sort_by_key(|a| a["attachment_id"].as_str().unwrap_or_default().to_string());
    let meta = serde_json::to_value(host.store.get_meta(sid).expect("meta")).expect("json");
    (meta, entries, host.store.get_active_leaf(sid).expect("leaf"), attachments)
}

fn round_trip(format: Format) {
    let (source, out, target, again) = (tempdir(), tempdir(), tempdir(), tempdir());
    let host = Host::open(source.path());
    demo(&host);
    let exported = export_all(source.path(), out.path(), format).expect("export");
    assert_eq!(
        exported.iter().map(|m| m.session_id.as_str()).collect::<Vec<_>>(),
        ["s_001", "s_002"]
    );
    assert_eq!(exported[0].attachment_files, 2);
    let files: Vec<_> = exported.iter().map(|m| m.file.clone()).collect();
    let imported = import_files(target.path(), &files, false).expect("import");
    assert_eq!(imported.len(), 2);
    assert!(
        import_files(target.path(), &files[..1], false).is_err(),
        "import never overwrites silently"
    );
    import_files(target.path(), &files[..1], true).expect("--replace overwrites");
    let reopened = Host::open(target.path());
    for sid in ["s_001", "s_002"] {
        assert_eq!(state(&reopened, sid), state(&host, sid), "{sid} after import ({format:?})");
    }
    export_all(target.path(), again.path(), format).expect("export again");
    assert_eq!(read_dir_sorted(again.path()), read_dir_sorted(out.path()), "{format:?} round trip");
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

#[test]
fn log_export_round_trips() {
    round_trip(Format::Log);
}

#[test]
fn snapshot_export_round_trips() {
    round_trip(Format::Snapshot);
}

#[test]
fn torn_tails_are_dropped_and_unknown_sessions_refused() {
    let (source, out) = (tempdir(), tempdir());
    let host = Host::open(source.path());
    host.call("session::create", json!({}));
    drop(host);
    let log = source.path().join("s_001.jsonl");
    let mut bytes = fs::read(&log).expect("log");
    let clean = bytes.clone();
    bytes.extend_from_slice(b"{\"type\":\"me");
    fs::write(&log, bytes).expect("tear");
    let moved = export_session(source.path(), "s_001", out.path(), Format::Log).expect("export");
    assert_eq!((moved.lines, moved.skipped), (4, 1));
    assert!(moved.to_string().starts_with("s_001 → "), "{moved}");
    assert!(moved.to_string().ends_with("(4 lines, 1 skipped, 0 attachment files)"), "{moved}");
    assert_eq!(fs::read(out.path().join("s_001.jsonl")).expect("exported"), clean);
    assert!(export_session(source.path(), "s_404", out.path(), Format::Log).is_err());
}

#[test]
fn web_bench_fixture_is_current() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web-bench/tests/fixtures");
    let (source, out) = (tempdir(), tempdir());
    demo(&Host::open(source.path()));
    export_all(source.path(), out.path(), Format::Log).expect("export");
    if std::env::var_os("TRANSFER_FIXTURE_UPDATE").is_some() {
        let _ = fs::remove_dir_all(&fixture);
        export_all(source.path(), &fixture, Format::Log).expect("write fixture");
    }
    assert_eq!(
        read_dir_sorted(&fixture),
        read_dir_sorted(out.path()),
        "TRANSFER_FIXTURE_UPDATE=1 refreshes it"
    );
}
