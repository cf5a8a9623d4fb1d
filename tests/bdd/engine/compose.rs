//! Steps of the `iii compose` scenario (`engine_compose.feature`): an engine without a worker, then
//! `iii compose up` over a temp project whose `worker-compose.yaml` points at this repository with
//! `path://`, so compose starts the worker with `iii.worker.yaml`'s `scripts.start`. The processes
//! compose spawned are found through `/proc` (their `III_URL` names this scenario's engine) to check
//! the start command and that stopping compose leaves none of them behind. Linux only.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use cucumber::codegen::{LocalBoxFuture, Regex};
use cucumber::step::Context;
use cucumber::{then, when};
use serde_json::json;

use super::harness::{read, repo_root, wait_exit, Harness};
use super::{engine_state, EngineState, III_BIN};
use crate::world::SessionWorld;

/// How long compose may take to bring the worker up: `cargo run --release` rebuilds the worker
/// when `target/release` is stale, which takes minutes on a small machine.
const UP_WITHIN: Duration = Duration::from_secs(600);

/// How long compose may take to exit after SIGTERM (its own stop grace is 10 s).
const DOWN_WITHIN: Duration = Duration::from_secs(30);

/// `Given a running engine without session-manager`.
pub fn engine_only_regex() -> Regex {
    Regex::new("^a running engine without session-manager$").expect("regex")
}

/// Engine and client only; registered, like the other start steps, only when `III_BIN` is set.
pub fn engine_only_step<'a>(world: &'a mut SessionWorld, _ctx: Context) -> LocalBoxFuture<'a, ()> {
    Box::pin(async move {
        let bin = std::env::var(III_BIN).expect("III_BIN");
        world.engine = Some(engine_state(Harness::engine_only(&bin)));
    })
}

/// One scenario's `iii compose up` daemon and its project.
#[derive(Debug)]
pub struct Compose {
    daemon: Child,
    /// The compose project directory (holds `worker-compose.yaml`).
    pub project: PathBuf,
    log: PathBuf,
    /// The engine URL compose hands its children as `III_URL`.
    url: String,
}

impl Compose {
    /// SIGTERM (what a supervisor sends), then waits for the daemon to exit. `None`: still running.
    fn stop(&mut self) -> Option<ExitStatus> {
        if let Ok(Some(status)) = self.daemon.try_wait() {
            return Some(status);
        }
        let _ = Command::new("kill").args(["-TERM", &self.daemon.id().to_string()]).status();
        wait_exit(&mut self.daemon, DOWN_WITHIN)
    }
}

impl Drop for Compose {
    fn drop(&mut self) {
        if self.stop().is_none() {
            let _ = self.daemon.kill();
            let _ = self.daemon.wait();
        }
        // A failed scenario must not leave its worker running.
        for p in spawned_by_compose(&self.url) {
            let _ = Command::new("kill").args(["-KILL", &p.pid.to_string()]).status();
        }
    }
}

/// A live process compose spawned (directly or below).
#[derive(Debug)]
struct Proc {
    pid: u32,
    cmdline: Vec<String>,
    exe: Option<PathBuf>,
}

/// Live (not zombie) processes whose environment holds `III_URL=<url>`: compose sets it on every
/// child, the start command's processes inherit it, and nothing else in a scenario has it.
fn spawned_by_compose(url: &str) -> Vec<Proc> {
    let needle = format!("III_URL={url}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let split = |bytes: &[u8]| -> Vec<String> {
        bytes
            .split(|b| *b == 0)
            .filter(|part| !part.is_empty())
            .map(|part| String::from_utf8_lossy(part).into_owned())
            .collect()
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            if !split(&environ).contains(&needle) || zombie(pid) {
                return None;
            }
            let cmdline = split(&std::fs::read(format!("/proc/{pid}/cmdline")).ok()?);
            let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
            Some(Proc { pid, cmdline, exe })
        })
        .collect()
}

/// Whether `pid` has exited and waits to be reaped (the state letter after the command name).
fn zombie(pid: u32) -> bool {
    let stat = read(Path::new(&format!("/proc/{pid}/stat")));
    stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
}

/// `scripts.start` of the repository's `iii.worker.yaml`.
fn manifest_start() -> String {
    let path = repo_root().join("iii.worker.yaml");
    let manifest: serde_yaml::Value =
        serde_yaml::from_str(&read(&path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    manifest["scripts"]["start"].as_str().expect("scripts.start in iii.worker.yaml").to_string()
}

/// The namespaces the engine lists a worker named `name` in.
async fn worker_namespaces(h: &Harness, name: &str) -> Vec<String> {
    let Ok(reply) = h.call("engine::workers::list", json!({}), true).await else {
        return Vec::new();
    };
    reply["workers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|w| w["name"] == name)
        .filter_map(|w| w["namespace"].as_str().map(str::to_string))
        .collect()
}

fn st(w: &mut SessionWorld) -> &mut EngineState {
    w.engine
        .as_mut()
        .expect("no engine: start with `Given a running engine without session-manager`")
}

fn compose(state: &mut EngineState) -> &mut Compose {
    state.compose.as_mut().expect("no compose: run `When iii compose brings up a project …` first")
}

/// The README's compose file, with this checkout's absolute path: no `run:`, so compose starts
/// the worker with the manifest's `scripts.start`.
/// With `namespace`, the file declares it (`namespace: <ns>`), and compose starts the worker there.
fn compose_file(key: &str, root: &Path, namespace: Option<&str>) -> String {
    let declared = namespace.map(|ns| format!("namespace: {ns}\n")).unwrap_or_default();
    format!(
        "{declared}startup_timeout: 10m\ncontainers:\n  {key}:\n    worker: path://{}\n    environment:\n      III_COMPOSE_DIR: ${{PWD}}\n",
        root.display()
    )
}

#[when(
    regex = r#"^iii compose brings up a project whose container "([^"]+)" points at this repository$"#
)]
async fn compose_up_default(w: &mut SessionWorld, key: String) {
    compose_up(st(w), &key, None).await;
}

/// The project declares `namespace:`; the client's later calls name it.
#[when(
    regex = r#"^iii compose brings up a project in namespace "([^"]+)" whose container "([^"]+)" points at this repository$"#
)]
async fn compose_up_in(w: &mut SessionWorld, namespace: String, key: String) {
    let state = st(w);
    compose_up(state, &key, Some(&namespace)).await;
    state.namespace = Some(namespace);
}

/// Writes the project, runs `iii compose up` in it and waits until the engine lists the worker
/// under the container key in the project's namespace and compose reports it ready; fails early
/// when compose exits.
async fn compose_up(state: &mut EngineState, key: &str, namespace: Option<&str>) {
    let key = key.to_string();
    let bin = std::env::var(III_BIN).expect("III_BIN");
    let h = &state.harness;
    let project = h.dir.join("compose-project");
    std::fs::create_dir_all(&project).expect("project dir");
    std::fs::write(project.join("worker-compose.yaml"), compose_file(&key, repo_root(), namespace))
        .expect("worker-compose.yaml");
    let log = h.dir.join("compose.log");
    let out = std::fs::File::create(&log).expect("compose log");
    let daemon = Command::new(&bin)
        .args(["compose", "up", "--engine", &h.url(), "--namespace", &format!("sm-bdd-{}", h.port)])
        .current_dir(&project)
        // What a shell started in the project directory passes: the file's `${PWD}`.
        .env("PWD", &project)
        .env("III_COMPOSE_STATE_DIR", h.dir.join("compose-state"))
        .env("III_TELEMETRY_ENABLED", "false")
        .env_remove("III_URL")
        .env_remove("III_NAMESPACE")
        .env_remove("III_WORKER_NAME")
        .env_remove("III_COMPOSE_DIR")
        .stdin(Stdio::null())
        .stdout(out.try_clone().expect("log"))
        .stderr(out)
        .spawn()
        .expect("spawn iii compose (III_BIN)");
    let mut c = Compose { daemon, project, log, url: h.url() };
    let deadline = Instant::now() + UP_WITHIN;
    let expected = namespace.unwrap_or("default");
    // Listed by the engine, and counted ready by compose (its own check also looks at where the
    // functions landed; a SIGTERM before that kills compose mid-start instead of stopping it).
    let ready = format!("{key} ready");
    while !worker_namespaces(h, &key).await.iter().any(|ns| ns == expected)
        || !read(&c.log).contains(&ready)
    {
        if let Ok(Some(status)) = c.daemon.try_wait() {
            panic!("iii compose exited ({status}) before {key} was ready:\n{}", read(&c.log));
        }
        assert!(Instant::now() < deadline, "{key} not up after {UP_WITHIN:?}:\n{}", read(&c.log));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    state.compose = Some(c);
}

#[then(regex = r#"^the engine lists a worker named "([^"]+)" in namespace "([^"]+)"$"#)]
async fn lists_worker(w: &mut SessionWorld, name: String, namespace: String) {
    let found = worker_namespaces(&st(w).harness, &name).await;
    assert!(found.contains(&namespace), "{name} is registered in {found:?}");
}

#[then(regex = r#"^compose started the worker with the scripts.start of iii.worker.yaml$"#)]
fn started_by_manifest(w: &mut SessionWorld) {
    let start = manifest_start();
    let procs = spawned_by_compose(&compose(st(w)).url);
    let shell = ["sh".to_string(), "-c".to_string(), start.clone()];
    assert!(procs.iter().any(|p| p.cmdline == shell), "no `sh -c {start}` in {procs:#?}");
    // `(deleted)` follows the name when the binary was rebuilt meanwhile.
    let is_worker = |p: &Proc| {
        let name = p.exe.as_deref().and_then(Path::file_name);
        name.is_some_and(|n| n.to_string_lossy().starts_with("session-manager"))
    };
    assert!(procs.iter().any(is_worker), "no session-manager process in {procs:#?}");
}

#[then(regex = r#"^the compose project's data dir "([^"]+)" holds (\d+) session files?$"#)]
fn project_files(w: &mut SessionWorld, dir: String, n: usize) {
    super::steps::assert_session_files(&compose(st(w)).project.join(dir), n);
}

#[when(regex = r#"^iii compose is stopped with SIGTERM$"#)]
fn compose_stop(w: &mut SessionWorld) {
    let c = compose(st(w));
    let status = c.stop();
    assert!(
        status.is_some_and(|s| s.success()),
        "iii compose did not exit cleanly ({status:?}):\n{}",
        read(&c.log)
    );
}

#[then(regex = r#"^no process that compose started is left$"#)]
async fn none_left(w: &mut SessionWorld) {
    let url = compose(st(w)).url.clone();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = spawned_by_compose(&url);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "left behind: {left:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
