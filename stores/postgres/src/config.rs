//! The postgres adapter's config (the `adapter: {name: postgres, config: {…}}` of the worker's
//! configuration), checked before it replaces a running one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Config of the postgres adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostgresAdapterConfig {
    /// libpq-style URL of the database, e.g. `postgres://user@host:5432/db` (`${VAR}` in a
    /// `--config` seed keeps a password out of the file).
    pub url: String,
    /// Connections this instance keeps open at most.
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// The PostgreSQL schema holding the tables (created when missing): lowercase letters,
    /// digits and `_`, starting with a letter or `_`, at most 63 bytes.
    #[serde(default = "default_pg_schema")]
    pub schema: String,
}

impl PostgresAdapterConfig {
    /// The database at `url` with the default pool size and schema.
    pub fn at(url: &str) -> Self {
        PostgresAdapterConfig {
            url: url.into(),
            max_connections: default_max_connections(),
            schema: default_pg_schema(),
        }
    }

    /// Itself when its url parses and its schema is a plain identifier (rejected at parse time, so
    /// a bad config never replaces the last good one).
    pub fn validated(self) -> Result<Self, String> {
        if let Err(e) = self.url.parse::<tokio_postgres::Config>() {
            return Err(format!("postgres adapter: bad url: {e}"));
        }
        if !super::valid_schema_name(&self.schema) {
            return Err(format!(
                "postgres adapter: schema {:?} is not a plain lowercase identifier (letters, digits, _)",
                self.schema
            ));
        }
        if self.max_connections == 0 {
            return Err("postgres adapter: max_connections must be at least 1".into());
        }
        Ok(self)
    }
}

fn default_max_connections() -> usize {
    8
}
fn default_pg_schema() -> String {
    "session_manager".into()
}
