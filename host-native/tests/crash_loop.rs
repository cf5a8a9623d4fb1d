//! The short crash loop in CI: `session-crashloop` SIGKILLs its child (the worker's handler layer
//! over the fs store) 20 times under load and checks every acknowledged mutation after each
//! restart; and its checker catches an acknowledged write that never reached the disk.

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

#[test]
fn twenty_kill_9_cycles_lose_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let (ok, stdout, stderr) =
        crashloop(dir.path(), &["--cycles", "20", "--max-delay-ms", "150", "--rotate", "4"]);
    println!("{stdout}");
    assert!(ok, "crash loop failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("cycles=20 ") && stdout.contains(" lost=0 "), "{stdout}");
    assert!(stdout.contains("unexplained_skips=0 "), "{stdout}");
    assert!(!stdout.contains("acked=0 "), "no load: {stdout}");
    assert!(start.elapsed().as_secs() < 60, "took {:?}", start.elapsed());
}

#[test]
fn the_checker_reports_an_acknowledged_write_missing_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr) = crashloop(dir.path(), &["--cycles", "3", "--sabotage"]);
    assert!(!ok, "a fake acknowledgement went unnoticed:\n{stdout}");
    assert!(stdout.contains(" lost=1 ") && stdout.contains("FAILED"), "{stdout}");
    assert!(stderr.contains("never-written"), "{stderr}");
}
