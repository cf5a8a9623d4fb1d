//! Boot (contract §6.2): connect, configuration, trigger types, runtime, functions, reload
//! binding; then run until SIGTERM / Ctrl-C and flush.

use std::sync::Arc;

use iii_sdk::runtime::WorkerMetadata;
use iii_sdk::{register_worker, InitOptions};

use crate::cli::Cli;
use crate::config_worker;
use crate::emitter::{Emitter, EngineSink};
use crate::engine_wait;
use crate::functions;
use crate::manifest::DESCRIPTION;
use crate::runtime::Runtime;
use crate::seed;
use crate::triggers;
use crate::worker::Worker;

/// Runs the worker until a shutdown signal. `Err` is a fatal boot failure.
pub async fn run(cli: Cli) -> Result<(), String> {
    let seed = cli.config.as_deref().and_then(seed::load);
    let metadata = WorkerMetadata {
        name: "session-manager".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        description: Some(DESCRIPTION.into()),
        ..WorkerMetadata::default()
    };
    let options = InitOptions { metadata: Some(metadata), ..Default::default() };
    let iii = register_worker(&cli.url, crate::telemetry::with_telemetry(options));
    crate::nodelay::spawn_keeper();
    tokio::select! {
        registered = engine_wait::until_registered(&iii, &cli.url) => registered?,
        _ = shutdown_signal() => {
            iii.shutdown_async().await;
            return Ok(());
        }
    }
    let config = config_worker::boot(&iii, seed).await?;
    let emitter = Emitter::new(Arc::new(EngineSink(iii.clone())));
    triggers::register_all(&iii, &emitter.subscriptions, cli.seed_only);
    let adapter = config.adapter.with_postgres_url(cli.postgres_url.as_deref());
    let (url, sync, local) = (cli.url.clone(), cli.fs_flags(), emitter.clone());
    let runtime = tokio::task::spawn_blocking(move || Runtime::build(&adapter, &url, sync, &local))
        .await
        .map_err(|e| e.to_string())??;
    tracing::info!("session-manager: {} adapter ready", runtime.mode());
    let mut worker =
        Worker::new(Some(iii.clone()), cli.url.clone(), runtime, config.limits(), emitter);
    worker.fs_flags = cli.fs_flags();
    worker.postgres_url = cli.postgres_url.clone();
    let worker = Arc::new(worker);
    functions::register_all(&iii, &worker, cli.seed_only);
    crate::sweeper::spawn(&worker);
    if let Err(e) = config_worker::bind_reload(&iii) {
        tracing::warn!("binding the configuration trigger failed: {e}");
    }
    tracing::info!("session-manager: serving on {}", cli.url);
    shutdown_signal().await;
    tracing::info!("session-manager: shutting down");
    let runtime = worker.runtime();
    runtime.close().await;
    let _ = tokio::task::spawn_blocking(move || runtime.flush()).await;
    iii.shutdown_async().await;
    Ok(())
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
