//! The store an offline command (`erase`, `import --from`, `export --to`) works on: a data_dir
//! (its journal recovered first) or a PostgreSQL database, opened as the worker opens them.

use session_core::wire::Object;
use session_core::Store;

use crate::config::{resolve_data_dir, PostgresAdapterConfig};
use crate::fs::{FsConfig, FsStore, SyncMode};
use crate::pg::PgStore;

/// Opens the store the flags name: a data_dir (its journal recovered first) or a database.
pub fn open_store(
    data_dir: &str,
    postgres_url: Option<&str>,
    schema: &str,
) -> Result<Box<dyn Store>, String> {
    match postgres_url {
        Some(url) => {
            let config = PostgresAdapterConfig {
                url: url.into(),
                max_connections: 2,
                schema: schema.into(),
            };
            Ok(Box::new(PgStore::open(&config)?))
        }
        None => {
            let config = FsConfig::new(resolve_data_dir(data_dir)).sync(SyncMode::Group);
            Ok(Box::new(FsStore::open(config).map_err(|e| e.to_string())?))
        }
    }
}

/// `--metadata KEY=VALUE` flags as an object (the value as JSON when it parses, else as a
/// string); `None` when there are none.
pub fn metadata_pairs(pairs: &[String]) -> Result<Option<Object>, String> {
    let mut metadata = Object::new();
    for pair in pairs {
        let (key, value) =
            pair.split_once('=').ok_or_else(|| format!("--metadata {pair:?}: not KEY=VALUE"))?;
        let value = serde_json::from_str(value).unwrap_or_else(|_| value.into());
        metadata.insert(key.into(), value);
    }
    Ok((!pairs.is_empty()).then_some(metadata))
}
