//! The worker's postgres tests against a real PostgreSQL server (`SESSION_MANAGER_TEST_PG_URL`;
//! every test is reported ignored without one): hot reload fs → postgres → fs, events across two
//! instances delivered once, and the `migrate` command's round trip. The store's own suite
//! (conformance, races, model, migrations, round trips) is `stores/postgres/tests/postgres.rs`.

mod common;

use std::sync::Arc;

use session_core::conformance::{message_entry, sample_meta};
use session_core::store::ChangeSet;
use session_core::{Store, Write};

use common::pg::{admin, db_trials, fresh_config, run_trials, url, DbTest};

fn main() {
    let tests: [(&str, DbTest); 4] = [
        ("hot_reload_fs_postgres_fs", hot_reload),
        ("two_instances_deliver_every_event_once", events_across_instances),
        ("migrate_fs_postgres_fs_is_byte_identical", migrate_round_trip),
        ("import_export_cli_on_postgres", import_export_cli),
    ];
    let url = url();
    run_trials(db_trials(&tests, &url), url)
}

/// `import --from claude-code --postgres-url …` (issue 40): the transcript imports whole, a rerun
/// writes nothing, `export --to claude-code --postgres-url …` gives every line back.
fn import_export_cli(url: &str) -> Result<(), String> {
    let schema = fresh_config(url).schema;
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../web-bench/tests/other-agents/claude-code.jsonl");
    let out = tempfile::tempdir().map_err(|e| e.to_string())?;
    let run = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_session-manager"))
            .args(args)
            .args(["--postgres-url", url, "--schema", &schema])
            .output()
            .map_err(|e| e.to_string())?;
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        match output.status.success() {
            true => Ok(said),
            false => Err(format!("{args:?}: {said}")),
        }
    };
    let path = file.to_str().ok_or("a UTF-8 path")?;
    let first = run(&["import", "--from", "claude-code", path])?;
    if !first.contains("created") {
        return Err(format!("first import: {first}"));
    }
    let again = run(&["import", "--from", "claude-code", path])?;
    if !again.contains("unchanged") {
        return Err(format!("rerun: {again}"));
    }
    let sid = "7f3c2a10-5b6e-4d2f-9a41-0c8e2b7d9e11";
    let out_dir = out.path().to_str().ok_or("a UTF-8 path")?;
    run(&["export", "--to", "claude-code", "--session", sid, "--out", out_dir])?;
    let parse = |text: &str| -> Result<Vec<serde_json::Value>, String> {
        let mut lines: Vec<serde_json::Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        lines.sort_by_key(|v| v.to_string());
        Ok(lines)
    };
    let written = std::fs::read_to_string(out.path().join(format!("{sid}.jsonl")))
        .map_err(|e| e.to_string())?;
    let original = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    match parse(&written)? == parse(&original)? {
        true => Ok(()),
        false => Err(format!("the export differs from the transcript:\n{written}")),
    }
}

/// A data_dir of v1.0.32 files (torn, legacy, malformed lines among them) and sessions the fs
/// store wrote (hostile ids, attachments, streamed deltas, a fork) goes to postgres and back
/// through the `migrate` command with its entry rows current; `export --snapshot` of both
/// data_dirs is byte-identical, and a second run copies nothing.
fn migrate_round_trip(url: &str) -> Result<(), String> {
    use session_core::wire::MessageDelta;
    use session_manager::transfer::{export_all, Format};
    let source = common::fixture("v1_0_32");
    {
        let fs = session_manager::FsStore::open(session_manager::FsConfig::new(source.path()))
            .map_err(|e| e.to_string())?;
        for sid in ["../escape/chat 42:?", "nul\0byte", "ünï €", "plain"] {
            let apply = |w: Vec<Write>| fs.apply(&ChangeSet { session_id: sid.into(), writes: w });
            apply(vec![Write::PutMeta(sample_meta(sid, 1))]).map_err(|e| e.to_string())?;
            for (i, parent) in [(0, None), (1, Some("e0")), (2, Some("e0"))] {
                let entry = message_entry(&format!("e{i}"), parent, i, "text");
                apply(vec![Write::CommitAppend { entry, parent_explicit: parent.is_some() }])
                    .map_err(|e| e.to_string())?;
            }
            let bytes = sid.as_bytes().to_vec();
            let meta = session_core::conformance::attachment_meta(sid, "../a 1", &bytes);
            apply(vec![Write::PutAttachment { meta, bytes }]).map_err(|e| e.to_string())?;
            let delta = MessageDelta {
                session_id: sid.into(),
                entry_id: "e2".into(),
                revision: 1,
                block_index: 0,
                text: Some(" more".into()),
                thinking: None,
            };
            apply(vec![Write::AppendDelta { delta, at: 9 }]).map_err(|e| e.to_string())?;
        }
        // A lifecycle goes along: a trashed session and an expiring one.
        let lifecycle = |sid: &str, write| {
            fs.apply(&ChangeSet { session_id: sid.into(), writes: vec![write] })
                .map_err(|e| e.to_string())
        };
        lifecycle("plain", Write::Trash { at: 11 })?;
        lifecycle("ünï €", Write::SetExpiry(Some(4_000_000_000_000)))?;
    }
    let config = fresh_config(url);
    let back = tempfile::tempdir().map_err(|e| e.to_string())?;
    let bin = env!("CARGO_BIN_EXE_session-manager");
    let run = |from: &str, to: &str| -> Result<String, String> {
        let out = std::process::Command::new(bin)
            .args(["migrate", "--from", from, "--to", to, "--schema", &config.schema])
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            return Err(format!("migrate failed: {text}{}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(text)
    };
    let dir = |d: &tempfile::TempDir| d.path().to_string_lossy().into_owned();
    let first = run(&dir(&source), url)?;
    let again = run(&dir(&source), url)?;
    if !again.contains("(0 copied") || !first.contains("verified") {
        return Err(format!("not idempotent: {first} then {again}"));
    }
    // The lifecycles are in postgres's own table (what its sweep reads).
    let pg = session_manager::pg::PgStore::open(&config).map_err(|e| e.to_string())?;
    let mut lifecycles = pg.list_lifecycles().map_err(|e| e.to_string())?;
    lifecycles.sort_by(|a, b| a.0.cmp(&b.0));
    let summary: Vec<(&str, Option<i64>, Option<i64>)> = lifecycles
        .iter()
        .map(|(sid, l)| (sid.as_str(), l.expires_at, l.trashed.as_ref().map(|t| t.at)))
        .collect();
    if summary != [("plain", None, Some(11)), ("ünï €", Some(4_000_000_000_000), None)] {
        return Err(format!("lifecycles after the migration: {summary:?}"));
    }
    // Migrated sessions are read from their entry rows at once (no replay on first read).
    let schema = &config.schema;
    let stale = admin(
        url,
        &format!("SELECT count(*)::text FROM {schema}.sessions WHERE projected <> version"),
    )?;
    if stale != ["0"] {
        return Err(format!("migrated sessions without current entry rows: {stale:?}"));
    }
    run(url, &dir(&back))?;
    let (want, got) = (
        tempfile::tempdir().map_err(|e| e.to_string())?,
        tempfile::tempdir().map_err(|e| e.to_string())?,
    );
    let exported =
        export_all(source.path(), want.path(), Format::Snapshot).map_err(|e| e.to_string())?;
    export_all(back.path(), got.path(), Format::Snapshot).map_err(|e| e.to_string())?;
    if exported.len() < 8 {
        return Err(format!("only {} sessions exported", exported.len()));
    }
    let (want_tree, got_tree) = (common::tree(want.path()), common::tree(got.path()));
    if want_tree != got_tree {
        return Err(format!("exported files differ: {want_tree:?} vs {got_tree:?}"));
    }
    for name in &want_tree {
        let (a, b) = (want.path().join(name), got.path().join(name));
        if a.is_dir() {
            continue;
        }
        if std::fs::read(a).map_err(|e| e.to_string())?
            != std::fs::read(b).map_err(|e| e.to_string())?
        {
            return Err(format!("{name} differs after fs → postgres → fs"));
        }
    }
    Ok(())
}

/// Every delivery an emitter made.
#[derive(Debug, Default)]
struct Recorder(std::sync::Mutex<Vec<session_manager::emitter::Delivery>>);

#[async_trait::async_trait]
impl session_manager::emitter::Sink for Recorder {
    async fn deliver(&self, delivery: session_manager::emitter::Delivery) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(delivery);
    }
}

/// Each recorder's store-events envelopes as `(session, epoch, seq, type)`, sorted.
fn seen(recorder: &Recorder) -> Vec<(String, Option<String>, u64, String)> {
    let deliveries = recorder.0.lock().unwrap_or_else(|p| p.into_inner());
    let mut seen: Vec<_> = deliveries
        .iter()
        .filter_map(|d| {
            let e: session_core::wire::EventEnvelope =
                serde_json::from_value(d.payload.clone()).ok()?;
            let sid = e.payload.get("session_id")?.as_str()?.to_string();
            let change = e.change?;
            Some((sid, change.epoch, change.seq, e.trigger_type))
        })
        .collect();
    seen.sort();
    seen
}

/// Two workers on one schema, mutations through both: every instance's subscribers receive
/// every event of every mutation once, whichever instance made it, also after the instances'
/// database connections were terminated mid-way, and also the events committed while instance 1
/// was stopped (it goes on where it had delivered when it starts again under its name), and a
/// session id deleted through one instance and created again through the other (the deletion
/// delivered though the feed went with it, the new epoch's seqs from 1 again).
fn events_across_instances(url: &str) -> Result<(), String> {
    use serde_json::json;
    use session_manager::config::AdapterConfig;
    use session_manager::emitter::Emitter;
    use session_manager::runtime::Runtime;
    use session_manager::worker::Worker;
    let mut config = fresh_config(url);
    config.url = format!("{url}?application_name={}", config.schema);
    let app = config.schema.clone();
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let adapter = AdapterConfig::Postgres(config);
    let recorders = [Arc::new(Recorder::default()), Arc::new(Recorder::default())];
    // Instance `i` on its own engine URL (its lasting name), recording into `recorders[i]`.
    let start = |i: usize| -> Result<Worker, String> {
        let emitter = Emitter::new(recorders[i].clone());
        emitter
            .subscriptions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .bind(session_core::events::STORE_EVENTS, "feed", "feed", &json!({}))
            .map_err(|e| e.to_string())?;
        let own = format!("ws://instance-{i}");
        let runtime = rt.block_on(async {
            let (adapter, emitter) = (adapter.clone(), emitter.clone());
            tokio::task::spawn_blocking(move || {
                Runtime::build(&adapter, &own, Default::default(), &emitter)
            })
            .await
        });
        let runtime = runtime.map_err(|e| e.to_string())??;
        let limits = session_core::Limits::default();
        Ok(Worker::new(None, "ws://x".into(), runtime, limits, emitter))
    };
    let mut workers = [Some(start(0)?), Some(start(1)?)];
    // Give both followers time to read the outbox head (they deliver what comes after it).
    std::thread::sleep(std::time::Duration::from_millis(300));
    let call = |worker: &Option<Worker>, id: &str, payload: serde_json::Value| {
        let op = session_core::catalog::operation(id).ok_or("no such op")?;
        let worker = worker.as_ref().ok_or("that instance is down")?;
        rt.block_on(worker.call(op, payload)).map_err(|e| format!("{id}: {e}"))
    };
    let mut expected = 0;
    for round in 0..2 {
        // Round 1 runs while instance 1 is down: all through instance 0.
        let through: [usize; 3] = if round == 0 { [0, 1, 0] } else { [0, 0, 0] };
        for (k, at) in through.into_iter().enumerate() {
            let other = if round == 0 { 1 - at } else { 0 };
            let created = call(&workers[at], "session::create", json!({"title": format!("t{k}")}))?;
            let sid = created["session_id"].as_str().ok_or("no session_id")?.to_string();
            let message = json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1});
            call(
                &workers[other],
                "session::append",
                json!({"session_id": sid, "message": message}),
            )?;
            call(
                &workers[at],
                "session::set-status",
                json!({"session_id": sid, "status": "working"}),
            )?;
            expected += 3;
        }
        if round == 0 {
            let killed = admin(url, &format!(
                "SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_activity WHERE application_name = '{app}'"
            ))?;
            if killed == ["0"] {
                return Err("no backend to terminate".into());
            }
            std::thread::sleep(std::time::Duration::from_millis(300));
            // Instance 1 stops (its follower saves how far it delivered) …
            workers[1] = None;
            std::thread::sleep(std::time::Duration::from_millis(400));
        }
    }
    // … and starts again under the same name: it delivers what was committed meanwhile.
    workers[1] = Some(start(1)?);
    let message =
        json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1});
    let again = json!({"session_id": "again"});
    let append = json!({"session_id": "again", "message": message});
    for (at, id, payload) in [
        (0, "session::ensure", &again),
        (1, "session::append", &append),
        (1, "session::delete", &again),
        (0, "session::ensure", &again),
        (1, "session::append", &append),
    ] {
        // Each once both instances delivered the one before: changes of an epoch that ended
        // before an instance's follower read them are not delivered there (only the deletion).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while seen(&recorders[0]).len().min(seen(&recorders[1]).len()) < expected {
            if std::time::Instant::now() > deadline {
                return Err(format!("{id}: the events before it were not delivered in 10 s"));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        call(&workers[at], id, payload.clone())?;
        expected += 1;
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (a, b) = (seen(&recorders[0]), seen(&recorders[1]));
        if a.len() >= expected && b.len() >= expected {
            let mut once = a.clone();
            once.dedup();
            let epochs: std::collections::BTreeSet<_> =
                a.iter().filter(|e| e.0 == "again").map(|e| e.1.clone()).collect();
            if a != b || once.len() != a.len() || a.len() != expected || epochs.len() != 2 {
                return Err(format!(
                    "instance 0 saw {a:?}\ninstance 1 saw {b:?}\n(want {expected} each, once)"
                ));
            }
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "after 10 s: instance 0 saw {} of {expected}, instance 1 {}: {a:?} / {b:?}",
                a.len(),
                b.len()
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A worker on fs hot-reloads onto postgres and back: each store serves what was written to it,
/// subscribers get the resync's events, and a bad postgres config keeps the last good runtime.
fn hot_reload(url: &str) -> Result<(), String> {
    use serde_json::json;
    use session_manager::config::{AdapterConfig, FsAdapterConfig, WorkerConfig};
    use session_manager::emitter::Emitter;
    use session_manager::runtime::Runtime;
    use session_manager::worker::Worker;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let fs = AdapterConfig::Fs(FsAdapterConfig {
        data_dir: dir.path().to_string_lossy().into_owned(),
        fsync: session_manager::SyncMode::Never,
    });
    let pg = AdapterConfig::Postgres(fresh_config(url));
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let recorder = Arc::new(Recorder::default());
    let emitter = Emitter::new(recorder.clone());
    emitter
        .subscriptions
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .bind(session_core::events::STORE_EVENTS, "feed", "feed", &json!({}))
        .map_err(|e| e.to_string())?;
    let runtime = Runtime::build(&fs, "ws://x", Default::default(), &emitter)?;
    let worker =
        Worker::new(None, "ws://x".into(), runtime, session_core::Limits::default(), emitter);
    let call = |id: &str, payload: serde_json::Value| -> Result<serde_json::Value, String> {
        let op = session_core::catalog::operation(id).ok_or("no such op")?;
        rt.block_on(worker.call(op, payload)).map_err(|e| format!("{id}: {e}"))
    };
    let titles = |expect: &[&str]| -> Result<(), String> {
        let listed = call("session::list", json!({}))?;
        let mut got: Vec<String> = listed["sessions"]
            .as_array()
            .ok_or("no sessions")?
            .iter()
            .filter_map(|m| m["title"].as_str().map(String::from))
            .collect();
        got.sort();
        if got != expect {
            return Err(format!("listed {got:?}, want {expect:?}"));
        }
        Ok(())
    };
    let config = |adapter: &AdapterConfig| WorkerConfig {
        adapter: adapter.clone(),
        ..WorkerConfig::default()
    };
    call("session::create", json!({"title": "on fs"}))?;
    rt.block_on(session_manager::reload::apply(&worker, config(&pg)));
    if worker.runtime().mode() != "postgres" {
        return Err(format!("still {} after the reload", worker.runtime().mode()));
    }
    titles(&[])?;
    call("session::create", json!({"title": "on postgres"}))?;
    titles(&["on postgres"])?;
    // A database that cannot be reached: the build fails, the postgres runtime stays.
    let mut unreachable = fresh_config(url);
    unreachable.url = "postgres://postgres@127.0.0.1:1/postgres".into();
    rt.block_on(session_manager::reload::apply(
        &worker,
        config(&AdapterConfig::Postgres(unreachable)),
    ));
    titles(&["on postgres"])?;
    rt.block_on(session_manager::reload::apply(&worker, config(&fs)));
    titles(&["on fs"])?;
    // The resyncs announced the sessions that appeared and disappeared with each swap.
    let deliveries = recorder.0.lock().unwrap_or_else(|p| p.into_inner()).len();
    if deliveries < 4 {
        return Err(format!("only {deliveries} events across two creates and two swaps"));
    }
    Ok(())
}
