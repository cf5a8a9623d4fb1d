//! The command line (contract §6.2 step 1).

use std::path::PathBuf;

use clap::Parser;
use session_core::formats::Format;

/// session-manager: durable, reactive, branching store of typed conversation entries (an iii
/// worker).
#[derive(Debug, Parser)]
#[command(name = "session-manager", version, about)]
pub struct Cli {
    /// WebSocket URL of the iii engine.
    #[arg(long, env = "III_URL", default_value = iii_sdk::DEFAULT_ENGINE_URL)]
    pub url: String,
    /// One-time seed of the stored configuration (YAML, `${VAR}` expanded); never overwrites a
    /// stored value.
    #[arg(long, value_name = "YAML")]
    pub config: Option<PathBuf>,
    /// Overrides the fs adapter's `fsync` config key for this process: `group` (every write is
    /// fsynced before its answer, concurrent writers share a flush), `always` (one fsync per
    /// write) or `never` (survives a process crash, not a power loss). Unset: the key decides.
    #[arg(long, env = "SESSION_MANAGER_FS_SYNC", value_parser = str::parse::<crate::fs::SyncMode>)]
    pub fs_sync: Option<crate::fs::SyncMode>,
    /// `off`: open the fs adapter's data_dir without its search index (`session::search` then
    /// scans every session; the index, if any, is left as it is and checked when next used).
    #[arg(long, env = "SESSION_MANAGER_SEARCH_INDEX", default_value = "on", value_parser = ["on", "off"])]
    pub search_index: String,
    /// Store sessions in this PostgreSQL database (`postgres://user@host:5432/db`): the postgres
    /// adapter, whatever adapter the stored configuration names (its other keys still apply; a
    /// stored postgres adapter keeps its schema and pool size). Unset: the configuration decides.
    #[arg(long, env = "SESSION_MANAGER_POSTGRES_URL", value_name = "URL")]
    pub postgres_url: Option<String>,
    /// Register only the seed's 41 functions (v1.0.32's exact surface), none of our extensions
    /// (`session::store::apply`). A bridge whose main runs this way falls back to one call per
    /// write.
    #[arg(long, env = "SESSION_MANAGER_SEED_ONLY")]
    pub seed_only: bool,
    /// Print the worker manifest (JSON) and exit without connecting.
    #[arg(long)]
    pub manifest: bool,
    /// Offline work on a data_dir instead of running the worker.
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The flags that concern an fs adapter.
    pub fn fs_flags(&self) -> crate::runtime::FsFlags {
        crate::runtime::FsFlags { sync: self.fs_sync, search_index: self.search_index == "on" }
    }
}

/// Offline subcommands: move sessions between a data_dir and exported `.jsonl` files, or between
/// a data_dir and a PostgreSQL database.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Export one session (`--session`) or every session of a data_dir to `<enc(id)>.jsonl`
    /// files (attachments are copied beside them, in the data_dir layout).
    Export {
        /// The data_dir to read (default: the worker's default, `data/session-manager` under
        /// `III_COMPOSE_DIR` or the working directory).
        #[arg(long)]
        data_dir: Option<String>,
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        /// Output folder.
        #[arg(long, short)]
        out: PathBuf,
        /// Write the replayed snapshot instead of the full log (drops streaming history and folds
        /// `append-delta` records into whole entries): the way back to v1.0.32, whose replay
        /// skips delta records. The output folder is a data_dir.
        #[arg(long, conflicts_with = "to")]
        snapshot: bool,
        /// Write another agent's format instead (`pi`, `claude-code`: every branch; `openai`,
        /// `ui-message`: the active branch), one `<enc(id)>.jsonl` / `.json` per session.
        #[arg(long, value_parser = parse_format)]
        to: Option<Format>,
        /// With `--to`: read from this PostgreSQL database instead of a data_dir.
        #[arg(long, value_name = "URL", requires = "to", conflicts_with = "data_dir")]
        postgres_url: Option<String>,
        /// The PostgreSQL schema.
        #[arg(long, default_value = "session_manager")]
        schema: String,
    },
    /// Import exported `.jsonl` files (and the `attachments/` folder beside them) into a
    /// data_dir, replaying each with the store's rules; with `--from`, files of another agent's
    /// format, one session each, into a data_dir or a database, with a progress bar. A rerun
    /// imports nothing twice (a session already there identically is left as it is).
    Import {
        /// The files' format: `pi`, `claude-code`, `openai` or `ui-message` (default: this
        /// store's own exported logs).
        #[arg(long, value_parser = parse_format)]
        from: Option<Format>,
        /// The data_dir to write (default as for export).
        #[arg(long)]
        data_dir: Option<String>,
        /// With `--from`: write into this PostgreSQL database instead of a data_dir.
        #[arg(long, value_name = "URL", requires = "from", conflicts_with = "data_dir")]
        postgres_url: Option<String>,
        /// The PostgreSQL schema.
        #[arg(long, default_value = "session_manager")]
        schema: String,
        /// Overwrite sessions that already exist (with other content).
        #[arg(long)]
        replace: bool,
        /// With `--from`: a pair added to each imported session's metadata (the tenancy hook,
        /// e.g. `owner=u_1`; the value as JSON when it parses); repeatable.
        #[arg(long, value_name = "KEY=VALUE", requires = "from")]
        metadata: Vec<String>,
        /// The files to import.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Copy every session (snapshot and attachments) between a data_dir and a PostgreSQL
    /// database, either way, with a progress bar; resumable and idempotent (sessions already
    /// there identically are skipped), verified by counts and a SHA-256 digest at the end. No
    /// worker may have the data_dir open meanwhile.
    Migrate {
        /// The data_dir or `postgres://…` URL to read.
        #[arg(long)]
        from: String,
        /// The data_dir or `postgres://…` URL to write.
        #[arg(long)]
        to: String,
        /// The PostgreSQL schema of the database end.
        #[arg(long, default_value = "session_manager")]
        schema: String,
    },
    /// Erase every trace of one session (`--session`) or of every session whose metadata holds
    /// the `--metadata KEY=VALUE` pairs (`--all`: every session) from a data_dir or a database,
    /// with a progress bar; resumable (rerun it after an interruption). No worker may have the
    /// data_dir open meanwhile.
    Erase {
        /// Only this session.
        #[arg(long, conflicts_with_all = ["metadata", "all"])]
        session: Option<String>,
        /// A metadata filter pair, `KEY=VALUE` (the value as JSON when it parses); repeatable.
        #[arg(long, value_name = "KEY=VALUE")]
        metadata: Vec<String>,
        /// Erase every session (no filter).
        #[arg(long, conflicts_with = "metadata")]
        all: bool,
        /// The data_dir to erase from (default as for export).
        #[arg(long, conflicts_with = "postgres_url")]
        data_dir: Option<String>,
        /// Erase from this PostgreSQL database instead.
        #[arg(long, value_name = "URL")]
        postgres_url: Option<String>,
        /// The PostgreSQL schema.
        #[arg(long, default_value = "session_manager")]
        schema: String,
    },
}

/// A `--from` / `--to` value: one of the formats' names.
fn parse_format(name: &str) -> Result<Format, String> {
    Format::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        format!("{name:?} is not a format: {}", names.join(", "))
    })
}
