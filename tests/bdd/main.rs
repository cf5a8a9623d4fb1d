//! The Cucumber BDD suite: `cargo test --test bdd [-- --tags @pure]`. Every `@pure` scenario runs
//! twice, with a manual clock and sequential ids: once on the core's catalog dispatcher over an
//! in-memory store ("core over memory"), then through the worker's `Worker::call` over an fs
//! store in a temp data_dir ("worker over fs"). `@engine` scenarios run once, in the first run;
//! they need a running engine and are reported skipped without one.

mod engine;
mod features;
mod host;
mod json;
mod steps;
mod world;

use cucumber::writer::Stats as _;
use cucumber::World as _;
use host::HostKind;
use world::SessionWorld;

fn main() {
    let features = concat!(env!("CARGO_MANIFEST_DIR"), "/features");
    // The engine client (iii-sdk) and the worker need a tokio runtime around the steps.
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let mut failures = Vec::new();
    for kind in HostKind::ALL {
        if kind == HostKind::Postgres && host::pg_url().is_none() {
            println!("[Run: {}] skipped: {} is not set", kind.label(), host::PG_URL_VAR);
            continue;
        }
        host::select(kind);
        println!("[Run: {}]", kind.label());
        let mut cucumber =
            SessionWorld::cucumber::<&str>().with_parser::<_, &str>(features::Labelled(kind));
        // `@engine` scenarios start with this step; without III_BIN it stays undefined, so they
        // are reported skipped.
        if std::env::var_os(engine::III_BIN).is_some() {
            cucumber = cucumber
                .given(engine::start_regex(), engine::start_step)
                .given(engine::topology_regex(), engine::topology_step)
                .given(engine::engine_only_regex(), engine::engine_only_step);
            if host::pg_url().is_some() {
                cucumber = cucumber
                    .given(engine::postgres_topology_regex(), engine::postgres_topology_step);
            }
        }
        let writer = runtime.block_on(
            cucumber
                // A skipped step in a pure scenario means a step with no definition: fail on it.
                .fail_on_skipped_with(|_, _, scenario| !scenario.tags.iter().any(|t| t == "engine"))
                .run(features),
        );
        if writer.execution_has_failed() {
            failures.push(format!(
                "{}: {} failed steps, {} parsing errors, {} hook errors",
                kind.label(),
                writer.failed_steps(),
                writer.parsing_errors(),
                writer.hook_errors()
            ));
        }
    }
    if let Some(url) = host::pg_url() {
        drop_schemas(&url, &host::PG_SCHEMAS);
    }
    assert!(failures.is_empty(), "{}", failures.join("; "));
}

/// Drops the schemas the postgres run made (identifiers of our own making).
fn drop_schemas(url: &str, schemas: &std::sync::Mutex<Vec<String>>) {
    let schemas = std::mem::take(&mut *schemas.lock().unwrap_or_else(|p| p.into_inner()));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
    runtime.block_on(async {
        let Ok((client, connection)) = tokio_postgres::connect(url, tokio_postgres::NoTls).await
        else {
            return;
        };
        tokio::spawn(connection);
        for schema in schemas {
            client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await.ok();
        }
    });
}
