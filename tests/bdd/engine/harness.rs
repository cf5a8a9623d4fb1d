//! A fresh engine + session-manager worker + client worker per scenario: a temp dir, a free
//! port, the `iii` binary from `III_BIN`, the worker binary built from this workspace, and a
//! client (iii-sdk) that calls functions and registers handler functions recording deliveries.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use iii_sdk::protocol::TriggerRequest;
use iii_sdk::{register_worker, Error, IIIClient, InitOptions, RegisterFunction};
use serde_json::{json, Value};
use session_manager::functions::READY_PROBE;

/// Deliveries recorded per handler name.
pub type Inbox = Arc<Mutex<HashMap<String, Vec<Value>>>>;

/// One scenario's engine, worker and client.
pub struct Harness {
    pub dir: PathBuf,
    pub port: u16,
    engine: Child,
    worker: Option<Child>,
    /// Extra arguments of the worker process (e.g. `--seed-only`).
    pub worker_args: Vec<String>,
    /// `--config` seed of the worker (bridge topologies).
    pub seed: Option<PathBuf>,
    pub client: IIIClient,
    pub inbox: Inbox,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness").field("dir", &self.dir).field("port", &self.port).finish()
    }
}

/// The session-manager binary: `SESSION_MANAGER_BIN`, else `cargo build`s it once into this
/// workspace's target directory.
fn worker_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("SESSION_MANAGER_BIN") {
            return PathBuf::from(bin);
        }
        let root = repo_root();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "session-manager", "--bin", "session-manager"])
            .current_dir(root)
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building session-manager failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        target.join("debug").join("session-manager")
    })
    .clone()
}

/// The workspace root: this repository's checkout.
pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root")
}

/// Polls `child` until it exits or `within` passes; `None`: still running.
pub fn wait_exit(child: &mut Child, within: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

pub fn read(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let _ = f.read_to_string(&mut text);
    }
    text
}

fn fresh_dir() -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("sm-engine-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Starts the engine; retries on another port when the address is taken.
fn start_engine(iii: &str, dir: &Path) -> (Child, u16) {
    for _ in 0..5 {
        if let Some(child) = spawn_engine(iii, dir, free_port()) {
            return child;
        }
    }
    panic!("the engine did not start; see {}", dir.join("engine.log").display());
}

/// Starts the engine on `port`; `None` when it did not come up (e.g. the port is taken).
fn spawn_engine(iii: &str, dir: &Path, port: u16) -> Option<(Child, u16)> {
    let config = format!(
        "workers:\n  - name: iii-worker-manager\n    config:\n      host: 127.0.0.1\n      port: {port}\n  - name: configuration\n    config:\n      adapter:\n        name: fs\n        config:\n          directory: ./config\n  - name: iii-observability\n    config:\n      enabled: false\n"
    );
    std::fs::write(dir.join("config.yaml"), config).expect("engine config");
    let log = dir.join("engine.log");
    // A restart appends to the log: only what this process writes counts.
    let skip = read(&log).len();
    let out = std::fs::OpenOptions::new().create(true).append(true).open(&log).expect("engine log");
    let mut child = Command::new(iii)
        .args(["--config", "config.yaml", "--no-update-check"])
        .current_dir(dir)
        .env("III_TELEMETRY_ENABLED", "false")
        .stdin(Stdio::null())
        .stdout(out.try_clone().expect("log"))
        .stderr(out)
        .spawn()
        .expect("spawn iii (III_BIN)");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let text = read(&log).get(skip..).unwrap_or_default().to_string();
        if text.contains("Engine listening on address") {
            return Some((child, port));
        }
        if text.contains("already in use") || child.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

impl Harness {
    /// Engine, worker and client, ready to call.
    pub async fn start(iii: &str) -> Harness {
        Harness::start_with(iii, None).await
    }

    /// [`Harness::start`] with a `--config` seed (YAML text) for the worker.
    pub async fn start_with(iii: &str, seed_yaml: Option<&str>) -> Harness {
        let mut h = Harness::engine_only(iii);
        h.seed = seed_yaml.map(|yaml| {
            let path = h.dir.join("seed.yaml");
            std::fs::write(&path, yaml).expect("seed");
            path
        });
        h.start_worker().await;
        h
    }

    /// Engine and client, no worker (something else starts it, e.g. `iii compose`).
    pub fn engine_only(iii: &str) -> Harness {
        let dir = fresh_dir();
        let (engine, port) = start_engine(iii, &dir);
        let url = format!("ws://127.0.0.1:{port}");
        let meta =
            iii_sdk::runtime::WorkerMetadata { name: "bdd-client".into(), ..Default::default() };
        let client = register_worker(
            &url,
            InitOptions {
                metadata: Some(meta),
                identity: iii_sdk::WorkerIdentityMode::Explicit,
                ..Default::default()
            },
        );
        Harness {
            dir,
            port,
            engine,
            worker: None,
            worker_args: Vec::new(),
            seed: None,
            client,
            inbox: Inbox::default(),
        }
    }

    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    /// The worker binary pointed at this engine, run in `dir`, with no inherited compose variables
    /// and stdin closed.
    fn worker_command(&self, dir: &Path) -> Command {
        let mut command = Command::new(worker_bin());
        command
            .args(["--url", &self.url()])
            .current_dir(dir)
            .env_remove("III_COMPOSE_DIR")
            .env_remove("III_WORKER_NAME")
            .env_remove("III_NAMESPACE")
            .stdin(Stdio::null());
        command
    }

    /// Runs one more worker process with the same name against this engine (in a directory of its
    /// own) and waits at most `within` for it to exit: its exit code (`None`: still running, then
    /// killed) and everything it printed.
    pub fn run_duplicate_worker(&self, within: Duration) -> (Option<i32>, String) {
        let dir = fresh_dir();
        let mut child = self
            .worker_command(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the second session-manager");
        let status = wait_exit(&mut child, within);
        if status.is_none() {
            let _ = child.kill();
        }
        let output = child.wait_with_output().expect("second worker output");
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        let _ = std::fs::remove_dir_all(&dir);
        (status.and_then(|s| s.code()), text)
    }

    /// Starts the worker process and waits until it answers.
    pub async fn start_worker(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("worker.log"))
            .expect("worker log");
        let mut command = self.worker_command(&self.dir);
        command.args(&self.worker_args);
        if let Some(seed) = &self.seed {
            command.arg("--config").arg(seed);
        }
        let child = command
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("spawn session-manager");
        self.worker = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let status = self.call_once(READY_PROBE, json!({}), 1000).await;
            if status.is_ok() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "worker did not come up: {status:?}; see {}",
                self.dir.join("worker.log").display()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL of the engine (the worker stays and reconnects when it is back).
    pub fn kill_engine(&mut self) {
        let _ = self.engine.kill();
        let _ = self.engine.wait();
    }

    /// Starts the engine again on the same port and directory.
    pub fn restart_engine(&mut self, iii: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some((child, _)) = spawn_engine(iii, &self.dir, self.port) {
                self.engine = child;
                return;
            }
            assert!(Instant::now() < deadline, "the engine did not restart on {}", self.port);
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The worker process's id (`None` while it is not running).
    pub fn worker_pid(&self) -> Option<u32> {
        self.worker.as_ref().map(Child::id)
    }

    /// SIGKILL: no shutdown, no flush.
    pub async fn kill_worker(&mut self) {
        if let Some(mut child) = self.worker.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        // Let the engine notice the disconnect and free the worker name.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.call_once(READY_PROBE, json!({}), 300).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn call_once(
        &self,
        function_id: &str,
        payload: Value,
        timeout_ms: u64,
    ) -> Result<Value, Error> {
        self.call_once_in(None, function_id, payload, timeout_ms).await
    }

    async fn call_once_in(
        &self,
        namespace: Option<&str>,
        function_id: &str,
        payload: Value,
        timeout_ms: u64,
    ) -> Result<Value, Error> {
        let request = TriggerRequest {
            function_id: function_id.into(),
            payload,
            action: None,
            timeout_ms: Some(timeout_ms),
        };
        match namespace {
            Some(ns) => self.client.trigger(request.namespace(ns)).await,
            None => self.client.trigger(request).await,
        }
    }

    /// A call with a bounded timeout; idempotent calls are retried on a timeout.
    pub async fn call(
        &self,
        function_id: &str,
        payload: Value,
        idempotent: bool,
    ) -> Result<Value, Error> {
        self.call_in(None, function_id, payload, idempotent).await
    }

    /// [`Harness::call`] naming a namespace (`None`: the engine's default).
    pub async fn call_in(
        &self,
        namespace: Option<&str>,
        function_id: &str,
        payload: Value,
        idempotent: bool,
    ) -> Result<Value, Error> {
        let attempts = if idempotent { 3 } else { 1 };
        let mut last = Err(Error::Timeout);
        for _ in 0..attempts {
            last = self.call_once_in(namespace, function_id, payload.clone(), 5000).await;
            if !matches!(last, Err(Error::Timeout)) {
                break;
            }
        }
        last
    }

    /// Registers the client function `bdd::<name>` that records what it receives.
    pub fn handler(&self, name: &str) -> String {
        let function_id = format!("bdd::{name}");
        let inbox = self.inbox.clone();
        let key = name.to_string();
        inbox.lock().unwrap().entry(key.clone()).or_default();
        self.client.register_function(
            function_id.clone(),
            RegisterFunction::new_async(move |payload: Value| {
                let (inbox, key) = (inbox.clone(), key.clone());
                async move {
                    inbox.lock().unwrap().entry(key).or_default().push(payload);
                    Ok::<Value, Error>(json!({"ok": true}))
                }
            }),
        );
        function_id
    }

    pub fn received(&self, name: &str) -> Vec<Value> {
        self.inbox.lock().unwrap().get(name).cloned().unwrap_or_default()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.client.shutdown();
        if let Some(mut child) = self.worker.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = self.engine.kill();
        let _ = self.engine.wait();
        if std::env::var_os("KEEP_ENGINE_DIRS").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
