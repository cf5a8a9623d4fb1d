//! `session-manager`: the iii worker binary (CLI in [`session_manager::cli`]).

use clap::Parser;
use session_core::formats::Format;
use session_manager::cli::{Cli, Command};
use session_manager::config::{default_data_dir, resolve_data_dir};
use session_manager::{boot, erase, formats, manifest, migrate, offline, transfer};

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
        Command::Export { to: Some(to), data_dir, session, out, postgres_url, schema, .. } => {
            run_export(to, data_dir, session, &out, postgres_url, &schema)
        }
        Command::Import {
            from: Some(from),
            data_dir,
            postgres_url,
            schema,
            replace,
            metadata,
            files,
        } => run_import(from, data_dir, postgres_url, &schema, replace, &metadata, &files),
        Command::Export { data_dir, session, out, snapshot, .. } => {
            let format = if snapshot { transfer::Format::Snapshot } else { transfer::Format::Log };
            match session {
                Some(id) => {
                    transfer::export_session(&dir(data_dir), &id, &out, format).map(|m| vec![m])
                }
                None => transfer::export_all(&dir(data_dir), &out, format),
            }
        }
        Command::Import { data_dir, replace, files, .. } => {
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

/// `import --from`: one line per file; exits 1 when a file could not be imported.
fn run_import(
    from: Format,
    data_dir: Option<String>,
    postgres_url: Option<String>,
    schema: &str,
    replace: bool,
    metadata: &[String],
    files: &[std::path::PathBuf],
) -> ! {
    let dir = data_dir.unwrap_or_else(default_data_dir);
    let opened = offline::metadata_pairs(metadata)
        .and_then(|m| Ok((m, offline::open_store(&dir, postgres_url.as_deref(), schema)?)));
    let (metadata, store) = match opened {
        Ok(opened) => opened,
        Err(e) => fail(&e),
    };
    let into = formats::ImportTo { store: &*store, replace, metadata };
    let done = formats::import_files(&into, from, files, false);
    done.iter().for_each(|file| println!("{file}"));
    let failed = done.iter().filter(|f| f.result.is_err()).count();
    if failed > 0 {
        fail(&format!("{failed} of {} files not imported", done.len()));
    }
    std::process::exit(0)
}

/// `export --to`: one line per session written.
fn run_export(
    to: Format,
    data_dir: Option<String>,
    session: Option<String>,
    out: &std::path::Path,
    postgres_url: Option<String>,
    schema: &str,
) -> ! {
    let dir = data_dir.unwrap_or_else(default_data_dir);
    let exported = offline::open_store(&dir, postgres_url.as_deref(), schema)
        .and_then(|store| formats::export_sessions(&*store, to, session, out, false));
    match exported {
        Ok(done) => done.iter().for_each(|e| println!("{e}")),
        Err(e) => fail(&e),
    }
    std::process::exit(0)
}

fn fail(reason: &str) -> ! {
    eprintln!("session-manager: {reason}");
    std::process::exit(1)
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
        let store = session_manager::offline::open_store(&dir, postgres_url.as_deref(), schema)?;
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
