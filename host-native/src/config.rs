//! `WorkerConfig` (contract §6.1): the shape stored in the configuration worker under id
//! `session-manager`, its strict parsing, the data_dir resolution rules and the JSON Schema
//! registered with the configuration worker.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use session_core::Limits;

pub use crate::bridge::BridgeAdapterConfig;
pub use crate::fs::{default_data_dir, resolve_data_dir, FsAdapterConfig, DEFAULT_DATA_DIR};
pub use crate::pg::PostgresAdapterConfig;

/// The configuration id in the configuration worker.
pub const CONFIG_ID: &str = "session-manager";

/// Runtime settings of the worker. Every field is defaulted; unknown keys are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerConfig {
    /// Storage adapter: `fs` (authoritative JSONL store), `bridge` (store through a main
    /// instance on another engine) or `postgres` (a database shared by many instances).
    #[serde(default)]
    pub adapter: AdapterConfig,
    /// Page size when list/messages omit `limit`.
    #[serde(default = "default_list_limit")]
    pub default_list_limit: usize,
    /// Hard cap on any requested `limit`.
    #[serde(default = "max_list_limit")]
    pub max_list_limit: usize,
    /// Decoded-size cap of `session::put-attachment`, in bytes.
    #[serde(default = "max_attachment_bytes")]
    pub max_attachment_bytes: u64,
    /// Changes kept per session for `session::changes` (live sync; older ones are dropped on the
    /// next write and by compaction, and a reader behind them gets `truncated: true`). At least 1.
    #[serde(default = "feed_retention")]
    pub feed_retention: usize,
    /// Payload bytes kept per session for `session::changes` (the oldest changes go first; the
    /// newest is always kept). Superseded message updates and deltas keep none (compaction by
    /// key), so with this a session file stays near its live size.
    #[serde(default = "feed_retention_bytes")]
    pub feed_retention_bytes: u64,
    /// Seconds a session stays in the trash (`session::trash`) before the worker's sweep purges
    /// it. Default 30 days.
    #[serde(default = "trash_retention_secs")]
    pub trash_retention_secs: u64,
}

/// The storage adapter, adjacently tagged `{ name, config }`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "name", content = "config", rename_all = "lowercase")]
pub enum AdapterConfig {
    /// One append-only JSONL file per session under `data_dir`.
    Fs(FsAdapterConfig),
    /// Delegate raw storage and event fan-out to a main instance.
    Bridge(BridgeAdapterConfig),
    /// Sessions in a PostgreSQL database shared by any number of instances (the `session-store-postgres` crate).
    Postgres(PostgresAdapterConfig),
}

fn default_list_limit() -> usize {
    Limits::default().default_list_limit
}
fn feed_retention() -> usize {
    Limits::default().feed_retention
}
fn feed_retention_bytes() -> u64 {
    Limits::default().feed_retention_bytes
}
fn trash_retention_secs() -> u64 {
    Limits::default().trash_retention_secs
}

fn max_list_limit() -> usize {
    Limits::default().max_list_limit
}
fn max_attachment_bytes() -> u64 {
    Limits::default().max_attachment_bytes
}

impl Default for AdapterConfig {
    fn default() -> Self {
        AdapterConfig::Fs(FsAdapterConfig::default())
    }
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            adapter: AdapterConfig::default(),
            default_list_limit: default_list_limit(),
            max_list_limit: max_list_limit(),
            feed_retention: feed_retention(),
            feed_retention_bytes: feed_retention_bytes(),
            trash_retention_secs: trash_retention_secs(),
            max_attachment_bytes: max_attachment_bytes(),
        }
    }
}

/// Strict adjacently tagged parsing; a missing or `null` `config` is `{}` (so `{name: fs}` gets
/// the default data_dir, while a bridge still needs its `url`).
impl<'de> Deserialize<'de> for AdapterConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            name: String,
            #[serde(default)]
            config: Value,
        }
        use serde::de::Error;
        let raw = Raw::deserialize(d)?;
        let config =
            if raw.config.is_null() { Value::Object(Default::default()) } else { raw.config };
        match raw.name.as_str() {
            "fs" => FsAdapterConfig::deserialize(config)
                .map(AdapterConfig::Fs)
                .map_err(D::Error::custom),
            "bridge" => BridgeAdapterConfig::deserialize(config)
                .map(AdapterConfig::Bridge)
                .map_err(D::Error::custom),
            "postgres" => PostgresAdapterConfig::deserialize(config)
                .map_err(D::Error::custom)?
                .validated()
                .map(AdapterConfig::Postgres)
                .map_err(D::Error::custom),
            other => Err(D::Error::unknown_variant(other, &["fs", "bridge", "postgres"])),
        }
    }
}

impl AdapterConfig {
    /// The adapter a process runs: `self`, or with `--postgres-url` the postgres adapter on that
    /// URL (keeping the schema and pool size of a stored postgres adapter).
    pub fn with_postgres_url(&self, url: Option<&str>) -> AdapterConfig {
        let Some(url) = url else { return self.clone() };
        let kept = match self {
            AdapterConfig::Postgres(pg) => pg.clone(),
            _ => PostgresAdapterConfig::at(""),
        };
        AdapterConfig::Postgres(PostgresAdapterConfig { url: url.into(), ..kept })
    }

    /// `fs`, `bridge` or `postgres`.
    pub fn name(&self) -> &'static str {
        match self {
            AdapterConfig::Fs(_) => "fs",
            AdapterConfig::Bridge(_) => "bridge",
            AdapterConfig::Postgres(_) => "postgres",
        }
    }
}

impl WorkerConfig {
    /// Parses a stored value; `null` is the default config.
    pub fn from_value(value: Value) -> Result<WorkerConfig, String> {
        if value.is_null() {
            return Ok(WorkerConfig::default());
        }
        serde_json::from_value(value).map_err(|e| format!("invalid session-manager config: {e}"))
    }

    /// Parses YAML text (the `--config` seed).
    pub fn from_yaml(text: &str) -> Result<WorkerConfig, String> {
        let value: Value = serde_yaml::from_str(text).map_err(|e| format!("invalid YAML: {e}"))?;
        WorkerConfig::from_value(value)
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The limits every call reads.
    pub fn limits(&self) -> Limits {
        Limits {
            default_list_limit: self.default_list_limit,
            max_list_limit: self.max_list_limit,
            max_attachment_bytes: self.max_attachment_bytes,
            feed_retention: self.feed_retention.max(1),
            feed_retention_bytes: self.feed_retention_bytes,
            trash_retention_secs: self.trash_retention_secs,
        }
    }

    /// The draft-07 schema registered with the configuration worker: `adapter` as a `oneOf` of
    /// its three variants (a variant picker in consoles) and a top-level `example` (the default).
    pub fn json_schema() -> Value {
        let mut schema = session_core::catalog::schema_of::<WorkerConfig>();
        if let Some(map) = schema.as_object_mut() {
            map.insert("example".into(), WorkerConfig::default().to_value());
        }
        schema
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::SyncMode;
    use serde_json::json;

    #[test]
    fn empty_is_default_and_strict() {
        let cfg = WorkerConfig::from_value(json!({})).unwrap();
        assert_eq!(cfg.default_list_limit, 50);
        assert_eq!(cfg.max_list_limit, 500);
        assert_eq!(cfg.max_attachment_bytes, 52_428_800);
        assert_eq!(cfg.adapter.name(), "fs");
        assert!(WorkerConfig::from_value(json!({"bogus": 1})).is_err());
        let bad = json!({"adapter": {"name": "fs", "config": {"data_dir": "x", "y": 1}}});
        assert!(WorkerConfig::from_value(bad).is_err());
        assert!(WorkerConfig::from_value(json!({"adapter": {"name": "s3"}})).is_err());
        assert!(WorkerConfig::from_value(json!({"adapter": {"name": "bridge"}})).is_err());
    }

    #[test]
    fn adapters_round_trip() {
        let v = json!({"adapter": {"name": "bridge", "config": {"url": "ws://h:1"}}});
        let cfg = WorkerConfig::from_value(v).unwrap();
        let AdapterConfig::Bridge(b) = &cfg.adapter else { panic!("not bridge") };
        assert_eq!(b.timeout_ms, 5000);
        let back = cfg.to_value();
        assert_eq!(
            back["adapter"],
            json!({"name": "bridge", "config": {"url": "ws://h:1", "timeout_ms": 5000}})
        );
        let fs = WorkerConfig::from_yaml("adapter:\n  name: fs\n  config:\n    data_dir: /tmp/x\n")
            .unwrap();
        let want = FsAdapterConfig { data_dir: "/tmp/x".into(), fsync: SyncMode::Group };
        assert_eq!(fs.adapter, AdapterConfig::Fs(want));
        assert!(WorkerConfig::from_value(json!({"adapter": {"name": "fs"}})).is_ok());
    }

    #[test]
    fn schema_has_one_of_and_example() {
        let schema = WorkerConfig::json_schema();
        assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
        let adapter = &schema["definitions"]["AdapterConfig"];
        assert_eq!(adapter["oneOf"].as_array().map(Vec::len), Some(3), "{adapter}");
        let pg = &schema["definitions"]["PostgresAdapterConfig"];
        assert_eq!(pg["required"], json!(["url"]), "{pg}");
        assert_eq!(schema["example"]["adapter"]["name"], "fs");
        assert_eq!(schema["example"]["max_list_limit"], 500);
        assert_eq!(schema["example"]["adapter"]["config"]["fsync"], "group");
        let fs = &schema["definitions"]["FsAdapterConfig"]["properties"]["fsync"];
        assert!(fs.to_string().contains("SyncMode"), "{fs}");
        let modes = schema["definitions"]["SyncMode"].to_string();
        for mode in ["always", "group", "never"] {
            assert!(modes.contains(mode), "{modes}");
        }
    }

    #[test]
    fn postgres_config_is_defaulted_and_validated() {
        let v = json!({"adapter": {"name": "postgres", "config": {"url": "postgres://u@h/db"}}});
        let AdapterConfig::Postgres(pg) = WorkerConfig::from_value(v).unwrap().adapter else {
            panic!("not postgres")
        };
        assert_eq!((pg.max_connections, pg.schema.as_str()), (8, "session_manager"));
        for bad in [
            json!({"url": "postgres://u@h/db", "schema": "Bad-Name"}),
            json!({"url": "postgres://u@h/db", "schema": "x; DROP TABLE y"}),
            json!({"url": "postgres://u@h/db", "max_connections": 0}),
            json!({"url": "postgres://u@h:notaport/db"}),
            json!({"url": "postgres://u@h/db", "extra": 1}),
            json!({}),
        ] {
            let v = json!({"adapter": {"name": "postgres", "config": bad}});
            assert!(WorkerConfig::from_value(v.clone()).is_err(), "accepted {v}");
        }
    }

    #[test]
    fn postgres_url_flag_overrides_the_adapter() {
        let fs = AdapterConfig::default();
        assert_eq!(fs.with_postgres_url(None), fs);
        let AdapterConfig::Postgres(pg) = fs.with_postgres_url(Some("postgres://h/db")) else {
            panic!("not postgres")
        };
        assert_eq!((pg.url.as_str(), pg.schema.as_str()), ("postgres://h/db", "session_manager"));
        let stored = AdapterConfig::Postgres(PostgresAdapterConfig {
            url: "postgres://old/db".into(),
            max_connections: 3,
            schema: "mine".into(),
        });
        let AdapterConfig::Postgres(pg) = stored.with_postgres_url(Some("postgres://new/db"))
        else {
            panic!("not postgres")
        };
        assert_eq!(
            (pg.url.as_str(), pg.max_connections, pg.schema.as_str()),
            ("postgres://new/db", 3, "mine")
        );
    }

    #[test]
    fn fsync_key_is_optional_and_strict() {
        let v = json!({"adapter": {"name": "fs", "config": {"data_dir": "d", "fsync": "never"}}});
        let AdapterConfig::Fs(fs) = WorkerConfig::from_value(v).unwrap().adapter else {
            panic!("not fs")
        };
        assert_eq!(fs.fsync, SyncMode::Never);
        let old = json!({"adapter": {"name": "fs", "config": {"data_dir": "d"}}});
        let AdapterConfig::Fs(fs) = WorkerConfig::from_value(old.clone()).unwrap().adapter else {
            panic!("not fs")
        };
        assert_eq!(fs.fsync, SyncMode::Group, "configs without the key keep parsing");
        let bad = json!({"adapter": {"name": "fs", "config": {"fsync": "sometimes"}}});
        assert!(WorkerConfig::from_value(bad).is_err());
        // A change of the key is an adapter change: hot reload rebuilds the store.
        let mut changed = WorkerConfig::from_value(old).unwrap();
        let before = changed.adapter.clone();
        if let AdapterConfig::Fs(fs) = &mut changed.adapter {
            fs.fsync = SyncMode::Always;
        }
        assert_ne!(before, changed.adapter);
    }
}
