//! The short crash loop in CI: `session-crashloop` SIGKILLs its child (the worker's handler layer
//! over the fs store) 20 times under load and checks every acknowledged mutation after each
//! restart, with a session per client and with six clients on two shared sessions; and its
//! checker catches an acknowledged write that never reached the disk.

use std::process::Command;
use std::time::Instant;

fn crashloop(dir: &std::path::Path, extra: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_session-crashloop"))
        .args(["--data-dir", dir.to_str().unwrap(), "--seed", "42"])
        .args(extra)
        .output()
        .expect("run session-crashloop");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// 20 kill -9 cycles with `extra` options: nothing acknowledged lost, only torn tails skipped.
fn twenty_cycles(dir: &std::path::Path, extra: &[&str]) {
    let start = Instant::now();
    let args = [&["--cycles", "20", "--max-delay-ms", "150", "--rotate", "4"][..], extra].concat();
    let (ok, stdout, stderr) = crashloop(dir, &args);
    println!("{stdout}");
    assert!(ok, "crash loop failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("cycles=20 ") && stdout.contains(" lost=0 "), "{stdout}");
    assert!(stdout.contains("unexplained_skips=0 "), "{stdout}");
    assert!(!stdout.contains("acked=0 "), "no load: {stdout}");
    assert!(start.elapsed().as_secs() < 60, "took {:?}", start.elapsed());
}

#[test]
fn twenty_kill_9_cycles_lose_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    twenty_cycles(dir.path(), &[]);
}

#[test]
fn twenty_kill_9_cycles_on_shared_sessions_lose_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    twenty_cycles(dir.path(), &["--clients", "6", "--shared-sessions", "2"]);
    // The six clients wrote two sessions per generation, none of their own.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for name in ["crash-s0-g0.jsonl", "crash-s1-g0.jsonl"] {
        assert!(names.iter().any(|n| n == name), "no {name} in {names:?}");
    }
    assert!(
        !names.iter().any(|n| n.starts_with("crash-s2-") || n.starts_with("crash-c")),
        "{names:?}"
    );
}

#[test]
fn the_checker_reports_an_acknowledged_write_missing_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = crashloop(dir.path(), &["--cycles", "3", "--sabotage"]);
    assert!(!ok, "a fake acknowledgement went unnoticed:\n{stdout}");
    assert!(stdout.contains(" lost=1 ") && stdout.contains("FAILED"), "{stdout}");
    assert!(stderr.contains("never-written"), "{stderr}");
}
