//! The worker binary with no engine to reach: it says so in one plain line of its own, keeps
//! waiting instead of giving up, and a SIGTERM while it waits ends it cleanly.

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::{kill_process, Pid, Signal};
use session_manager::engine_wait::waiting_line;

/// A loopback URL nobody listens on: a port the kernel handed out and we closed again.
fn unreachable_url() -> String {
    let port = TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    format!("ws://127.0.0.1:{port}")
}

#[test]
fn waits_for_the_engine_with_one_plain_line_and_stops_on_sigterm() {
    let url = unreachable_url();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_session-manager"))
        .args(["--url", &url])
        .current_dir(dir.path())
        .env_remove("III_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the worker");
    let (lines_tx, lines) = mpsc::channel();
    let stderr = child.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let expected = waiting_line(&url);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while !seen.iter().any(|l| l == &expected) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("no line {expected:?} within 20 s; stderr: {seen:#?}"),
        }
    }
    // A few seconds later it is still there: it does not give up after its grace period.
    std::thread::sleep(Duration::from_secs(3));
    assert!(child.try_wait().expect("poll").is_none(), "the worker gave up: {seen:#?}");
    let pid = Pid::from_child(&child);
    kill_process(pid, Signal::TERM).expect("SIGTERM");
    let stopped = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll") {
            break status;
        }
        assert!(Instant::now() < stopped, "still running 10 s after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status:?}");
    seen.extend(lines.try_iter());
    let waiting = seen.iter().filter(|l| **l == expected).count();
    assert_eq!(waiting, 1, "the waiting line is said once: {seen:#?}");
    assert!(!dir.path().join("data").exists(), "nothing was written before the engine answered");
}
