//! `session-manager`: the iii worker binary (CLI in [`session_manager::cli`]).

use clap::Parser;
use session_manager::{boot, cli::Cli, manifest};

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    if cli.manifest {
        println!("{}", serde_json::to_string_pretty(&manifest::manifest()).unwrap_or_default());
        return;
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::INFO)
        .init();
    if let Err(e) = boot::run(cli).await {
        tracing::error!("session-manager failed to start: {e}");
        std::process::exit(1);
    }
}
