//! `session-manager import --from … / export --to …` (issue 40) on a data_dir: a pi file pi wrote
//! and a Claude Code transcript import whole, a rerun imports nothing twice, the export gives
//! every line back; a torn file or a file of another format is refused naming the line or the
//! format it looks like, and leaves nothing behind. (The same commands on postgres:
//! `tests/postgres.rs`.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../web-bench/tests/other-agents").join(name)
}

fn run(args: &[&str], data_dir: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_session-manager"));
    command.args(args).arg("--data-dir").arg(data_dir);
    command.output().expect("session-manager runs")
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The JSON lines of a JSONL text, keyed by `key` (lines without it under their line number).
fn lines_by(text: &str, key: &str) -> BTreeMap<String, Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let value: Value = serde_json::from_str(line).expect("a JSON line");
            let id = value.get(key).and_then(Value::as_str).map_or(format!("#{i}"), String::from);
            (id, value)
        })
        .collect()
}

#[test]
fn pi_and_claude_code_files_import_once_and_export_back_line_for_line() {
    let data = tempfile::tempdir().expect("tempdir");
    let out = tempfile::tempdir().expect("tempdir");
    for (format, file, key) in
        [("pi", "pi-session.jsonl", "id"), ("claude-code", "claude-code.jsonl", "uuid")]
    {
        let file = fixture(file);
        let file = file.to_str().expect("utf-8 path");
        let first = run(&["import", "--from", format, file], data.path());
        assert!(first.status.success(), "{}", said(&first));
        assert!(said(&first).contains("created"), "{}", said(&first));
        let again = run(&["import", "--from", format, file], data.path());
        assert!(again.status.success(), "{}", said(&again));
        assert!(said(&again).contains("already imported, unchanged"), "{}", said(&again));

        let session = match format {
            "pi" => "01a25087-4ccc-73b6-a622-ea97b3c02370",
            _ => "7f3c2a10-5b6e-4d2f-9a41-0c8e2b7d9e11",
        };
        let out_dir = out.path().to_str().expect("utf-8");
        let exported =
            run(&["export", "--to", format, "--session", session, "--out", out_dir], data.path());
        assert!(exported.status.success(), "{}", said(&exported));
        let written =
            std::fs::read_to_string(out.path().join(format!("{session}.jsonl"))).expect("written");
        let original = std::fs::read_to_string(file).expect("fixture");
        assert_eq!(lines_by(&written, key), lines_by(&original, key), "{format}: every line back");
    }
}

#[test]
fn bad_files_are_refused_with_the_line_or_the_format_and_leave_nothing() {
    let data = tempfile::tempdir().expect("tempdir");
    let files = tempfile::tempdir().expect("tempdir");
    let pi = std::fs::read_to_string(fixture("pi-session.jsonl")).expect("fixture");
    let torn_file = files.path().join("torn.jsonl");
    std::fs::write(&torn_file, &pi[..pi.trim_end().len() - 30]).expect("write");
    let torn = run(&["import", "--from", "pi", torn_file.to_str().expect("utf-8")], data.path());
    assert!(!torn.status.success(), "a torn file is refused: {}", said(&torn));
    let lines = pi.trim_end().lines().count();
    assert!(said(&torn).contains(&format!("line {lines}")), "{}", said(&torn));

    let pi_file = fixture("pi-session.jsonl");
    let pi_file = pi_file.to_str().expect("utf-8");
    let named_wrong = run(&["import", "--from", "claude-code", pi_file], data.path());
    assert!(!named_wrong.status.success());
    assert!(said(&named_wrong).contains("looks like pi"), "{}", said(&named_wrong));
    let own_format = run(&["import", pi_file], data.path());
    assert!(!own_format.status.success());
    assert!(said(&own_format).contains("pass --from pi"), "{}", said(&own_format));

    let stored: Vec<_> = std::fs::read_dir(data.path())
        .expect("data_dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert!(stored.is_empty(), "nothing is left of the refused files: {stored:?}");
}

#[test]
fn metadata_pairs_tag_the_imported_session_for_its_tenant() {
    let data = tempfile::tempdir().expect("tempdir");
    let files = tempfile::tempdir().expect("tempdir");
    let file = files.path().join("chat_5.json");
    std::fs::write(&file, r#"[{"type":"message","role":"user","content":"Hi"}]"#).expect("write");
    let file = file.to_str().expect("utf-8");
    let args =
        ["import", "--from", "openai", "--metadata", "owner=u_1", "--metadata", "team=7", file];
    let done = run(&args, data.path());
    assert!(done.status.success(), "{}", said(&done));
    let again = run(&args, data.path());
    assert!(said(&again).contains("unchanged"), "the same pairs again: {}", said(&again));
    let store =
        session_manager::FsStore::open(session_manager::FsConfig::new(data.path())).expect("open");
    let meta = session_core::Store::get_meta(&store, "chat_5").expect("read").expect("imported");
    let metadata = serde_json::to_value(meta.metadata).expect("json");
    assert_eq!(metadata, serde_json::json!({"owner": "u_1", "team": 7}));
}
