//! `session-manager`: the iii worker binary (CLI in [`session_manager::cli`]).

use clap::Parser;
use session_manager::cli::{Cli, Command};
use session_manager::config::{default_data_dir, resolve_data_dir};
use session_manager::{boot, erase, manifest, migrate, transfer};

/// Runs an offline export / import and prints one line per session moved.
fn run_offline(command: Command) -> ! {
    let dir = |d: Option<String>| {
        let dir = resolve_data_dir(&d.unwrap_or_else(default_data_dir));
        // What a crash left only in the journal goes back into the session files first.
        if let Err(e) = session_manager::fs::recover_journal(&dir) {
            eprintln!("session-manager: {e}");
            std::process::exit(1)
        }
        dir
    };
    let moved = match command {
        Command::Export { data_dir, session, out, snapshot } => {
            let format = if snapshot { transfer::Format::Snapshot } else { transfer::Format::Log };
            match session {
                Some(id) => {
                    transfer::export_session(&dir(data_dir), &id, &out, format).map(|m| vec![m])
                }
                None => transfer::export_all(&dir(data_dir), &out, format),
            }
        }
        Command::Import { data_dir, replace, files } => {
            transfer::import_files(&dir(data_dir), &files, replace)
        }
        Command::Migrate { from, to, schema } => run_migration(&from, &to, &schema),
        Command::Erase { session, metadata, all, data_dir, postgres_url, schema } => {
            run_erase(session, &metadata, all, data_dir, postgres_url, &schema)
        }
    };
    match moved {
        Ok(moved) => {
            moved.iter().for_each(|m| println!("{m}"));
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("session-manager: {e}");
            std::process::exit(1)
        }
    }
}

/// `erase`: prints what it erased, exits 1 with the reason when it could not.
fn run_erase(
    session: Option<String>,
    metadata: &[String],
    all: bool,
    data_dir: Option<String>,
    postgres_url: Option<String>,
    schema: &str,
) -> ! {
    let erased = (|| {
        let req = erase::request(session, metadata, all)?;
        let dir = data_dir.unwrap_or_else(default_data_dir);
        let store = erase::open(&dir, postgres_url.as_deref(), schema)?;
        erase::run(&*store, &req, false)
    })();
    match erased {
        Ok(done) => {
            println!("session-manager: erased {done}");
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("session-manager: {e}");
            std::process::exit(1)
        }
    }
}

/// `migrate`: prints what it did, exits 1 with the reason when it could not.
fn run_migration(from: &str, to: &str, schema: &str) -> ! {
    let migrated = (|| {
        let (from, to) = (migrate::End::open(from, schema)?, migrate::End::open(to, schema)?);
        println!("session-manager: migrating {from} → {to}");
        migrate::migrate(&from, &to)
    })();
    match migrated {
        Ok(done) => {
            println!("session-manager: migrated {done}");
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("session-manager: migrate: {e}");
            std::process::exit(1)
        }
    }
}

#[tokio::main]
async fn main() {
    let mut cli = Cli::parse();
    session_manager::open_files::raise_open_file_limit();
    if let Some(command) = cli.command.take() {
        run_offline(command);
    }
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
