//! Binding filters: parsing a trigger binding's config (rejecting malformed ones, contract §3.3)
//! and deciding whether an event reaches that binding (§3.4).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Deserialize;
use serde_json::Value;

use crate::events::{self, Emitted};
use crate::wire::{
    ChangedBindingConfig, CreatedBindingConfig, MessageBindingConfig, Object, Role,
    SessionBindingConfig,
};

/// The parsed filter of one binding. All supplied conditions must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BindingFilter {
    pub session_id: Option<String>,
    pub roles: Option<Vec<Role>>,
    pub metadata: Option<Object>,
    /// `session::changed` only: the change types delivered.
    pub types: Option<Vec<String>>,
    /// `session::changed` only: merge streaming deltas for at most this many ms.
    pub coalesce_ms: Option<u64>,
}

impl BindingFilter {
    /// Parses a binding config for `trigger_type`. `null` is `{}`. Errors read
    /// `invalid <trigger type> config: <detail>`; the store-events feed accepts anything.
    pub fn parse(trigger_type: &str, config: &Value) -> Result<BindingFilter, String> {
        if trigger_type == events::STORE_EVENTS {
            return Ok(BindingFilter::default());
        }
        let empty = Value::Object(Object::new());
        let config = match config {
            Value::Null => &empty,
            Value::Object(_) => config,
            // serde would map an array onto the struct's fields by position (`["s1"]` would become
            // a `session_id` filter): a config is an object or nothing.
            other => {
                return Err(format!(
                    "invalid {trigger_type} config: invalid type: {}, expected a config object",
                    json_type(other)
                ))
            }
        };
        let reject = |e: serde_json::Error| format!("invalid {trigger_type} config: {e}");
        match trigger_type {
            events::CREATED => {
                let c = CreatedBindingConfig::deserialize(config).map_err(reject)?;
                Ok(BindingFilter { metadata: c.metadata, ..Default::default() })
            }
            crate::feed::CHANGED => {
                let c = ChangedBindingConfig::deserialize(config).map_err(reject)?;
                if let Some(unknown) = c.types.iter().flatten().find(|t| !is_change_type(t)) {
                    return Err(format!(
                        "invalid {trigger_type} config: unknown change type `{unknown}`"
                    ));
                }
                let coalesce_ms = match c.coalesce_ms {
                    None => None,
                    Some(ms) => match u64::try_from(ms) {
                        Ok(ms) if (1..=MAX_COALESCE_MS).contains(&ms) => Some(ms),
                        _ => {
                            return Err(format!(
                                "invalid {trigger_type} config: coalesce_ms {ms} is not within \
                                 1..={MAX_COALESCE_MS}"
                            ))
                        }
                    },
                };
                Ok(BindingFilter {
                    session_id: c.session_id,
                    metadata: c.metadata,
                    types: c.types,
                    roles: None,
                    coalesce_ms,
                })
            }
            events::MESSAGE_ADDED | events::MESSAGE_UPDATED => {
                let c = MessageBindingConfig::deserialize(config).map_err(reject)?;
                Ok(BindingFilter {
                    session_id: c.session_id,
                    roles: c.roles,
                    metadata: c.metadata,
                    ..Default::default()
                })
            }
            events::STATUS_CHANGED | events::META_UPDATED | events::DELETED => {
                let c = SessionBindingConfig::deserialize(config).map_err(reject)?;
                Ok(BindingFilter {
                    session_id: c.session_id,
                    metadata: c.metadata,
                    ..Default::default()
                })
            }
            other => Err(format!("invalid {other} config: unknown trigger type")),
        }
    }

    /// Whether the change of `emitted` reaches a `session::changed` binding with this filter
    /// (`false` when it has no change).
    pub fn matches_change(&self, emitted: &Emitted) -> bool {
        let Some(change) = &emitted.change else { return false };
        if let Some(types) = &self.types {
            if !types.contains(&change.change_type) {
                return false;
            }
        }
        self.matches(emitted)
    }

    /// Whether `emitted` reaches a binding with this filter.
    pub fn matches(&self, emitted: &Emitted) -> bool {
        if let Some(sid) = &self.session_id {
            if sid != emitted.event.session_id() {
                return false;
            }
        }
        if let Some(roles) = &self.roles {
            match emitted.event.role() {
                Some(role) if roles.contains(&role) => {}
                _ => return false,
            }
        }
        match &self.metadata {
            Some(filter) => metadata_matches(filter, emitted.session_metadata.as_ref()),
            None => true,
        }
    }
}

/// The longest a `session::changed` binding may hold deltas back.
pub const MAX_COALESCE_MS: u64 = 10_000;

/// A type a change can have: a public seed trigger type or `session::message-delta`.
fn is_change_type(t: &str) -> bool {
    t == crate::feed::MESSAGE_DELTA || events::PUBLIC_TRIGGER_TYPES.contains(&t)
}

/// The JSON type name of a value, for rejection messages.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Subset equality: every key of `filter` is present in `metadata` with a deep-equal value. An
/// empty filter matches everything, even a session without metadata.
pub fn metadata_matches(filter: &Object, metadata: Option<&Object>) -> bool {
    if filter.is_empty() {
        return true;
    }
    let Some(metadata) = metadata else { return false };
    filter.iter().all(|(k, v)| metadata.get(k) == Some(v))
}
