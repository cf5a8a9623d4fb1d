//! The one JSON Schema document the npm package's TypeScript declarations are generated from
//! (`host-wasm/npm-build/generate.mjs`): every catalog function the `Workspace` serves (the
//! seed's and the extensions) with its request and response schema, the six event payloads, the
//! extension trigger types' deliveries, the feed's change payloads, the `Workspace` types of this
//! crate and the error codes, all read from the Rust types (feature `schema`, never in the wasm
//! bundle).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde_json::{json, Map, Value};
use session_core::catalog::{schema_of, OpKind, EXTENSIONS, EXTENSION_TRIGGER_TYPES, OPERATIONS};
use session_core::events::{self, PUBLIC_TRIGGER_TYPES};
use session_core::feed::{CHANGED, MESSAGE_DELTA};
use session_core::wire::{
    ChangedEvent, CreatedEvent, DeletedEvent, EventEnvelope, MessageAddedEvent, MessageDelta,
    MessageUpdatedEvent, MetaUpdatedEvent, StatusChangedEvent,
};
use session_core::{transfer, ErrorCode};

use crate::call_event::CallEvent;
use crate::rebuild::Rebuilt;
use crate::workspace::{SimulationPlan, WorkspaceOptions};

/// How the package groups a catalog kind; operator functions are host-only and left out.
fn kind_name(kind: OpKind) -> Option<&'static str> {
    match kind {
        OpKind::Mutation => Some("mutation"),
        OpKind::Read => Some("read"),
        OpKind::StoreProtocol => Some("store_protocol"),
        OpKind::Operator => None,
    }
}

/// The payload schema of a public trigger type.
fn payload_schema(trigger_type: &str) -> (&'static str, Value) {
    match trigger_type {
        events::CREATED => ("CreatedEvent", schema_of::<CreatedEvent>()),
        events::MESSAGE_ADDED => ("MessageAddedEvent", schema_of::<MessageAddedEvent>()),
        events::MESSAGE_UPDATED => ("MessageUpdatedEvent", schema_of::<MessageUpdatedEvent>()),
        events::STATUS_CHANGED => ("StatusChangedEvent", schema_of::<StatusChangedEvent>()),
        events::META_UPDATED => ("MetaUpdatedEvent", schema_of::<MetaUpdatedEvent>()),
        events::DELETED => ("DeletedEvent", schema_of::<DeletedEvent>()),
        other => panic!("public trigger type {other} has no payload type in api_schema"),
    }
}

/// The delivery schema of an extension trigger type.
fn extension_payload_schema(trigger_type: &str) -> (&'static str, Value) {
    match trigger_type {
        CHANGED => ("ChangedEvent", schema_of::<ChangedEvent>()),
        other => panic!("extension trigger type {other} has no payload type in api_schema"),
    }
}

/// The TypeScript name of a catalog type: its Rust name, store-protocol types prefixed `Store`
/// (`proto::ListAttachmentsResponse` and the public `ListAttachmentsResponse` differ).
fn type_name(rust: &str) -> String {
    let inner = rust.strip_prefix("Option<").and_then(|t| t.strip_suffix('>')).unwrap_or(rust);
    match inner.strip_prefix("proto::") {
        Some(name) if name.starts_with("Store") => name.into(),
        Some(name) => format!("Store{name}"),
        None => inner.into(),
    }
}

/// Root schemas merged into one `definitions` map; a name bound to two different schemas fails.
#[derive(Default)]
struct Definitions(BTreeMap<String, Value>);

impl Definitions {
    fn insert(&mut self, name: &str, mut schema: Value) {
        schema["title"] = Value::String(name.into());
        match self.0.get(name) {
            Some(old) if *old != schema => {
                panic!("two different types are both named {name} in the api schema")
            }
            _ => {
                self.0.insert(name.into(), schema);
            }
        }
    }

    /// Adds a root schema and its definitions; returns the schema to reference it with (`$ref`,
    /// or the root itself for `Option<T>`: `T | null`).
    fn add_root(&mut self, name: &str, root: Value) -> Value {
        let Value::Object(mut root) = root else { panic!("{name}: schema is not an object") };
        root.remove("$schema");
        if let Some(Value::Object(defs)) = root.remove("definitions") {
            for (key, schema) in defs {
                self.insert(&key, schema);
            }
        }
        if root.contains_key("anyOf") && root.get("type").is_none() && root.len() <= 2 {
            root.remove("title");
            return Value::Object(root);
        }
        self.insert(name, Value::Object(root));
        json!({ "$ref": format!("#/definitions/{name}") })
    }

    fn add<T: JsonSchema>(&mut self, name: &str) -> Value {
        self.add_root(name, schema_of::<T>())
    }
}

/// An object schema with exactly these required properties.
fn closed_object(properties: Map<String, Value>, description: Option<&str>) -> Value {
    let required: Vec<&String> = properties.keys().collect();
    let mut schema = json!({
        "type": "object",
        "required": required,
        "additionalProperties": false,
    });
    schema["properties"] = Value::Object(properties);
    if let Some(description) = description {
        schema["description"] = description.into();
    }
    schema
}

/// Request fields the Rust side takes as any JSON (`Value`, so that the core refuses a malformed
/// one with its own message) although the wire contract is narrower: their schema has no `type`,
/// which json-schema-to-typescript would declare as an object. The declarations say what to send.
fn narrow_json_fields(defs: &mut Definitions) {
    let narrowed = [("SetExpiryRequest", "expires_at", json!(["integer", "null"]))];
    for (type_name, field, json_type) in narrowed {
        let schema =
            defs.0.get_mut(type_name).and_then(|t| t.pointer_mut(&format!("/properties/{field}")));
        let Some(Value::Object(schema)) = schema else {
            panic!("{type_name}.{field} is no longer in the api schema: update narrow_json_fields")
        };
        assert!(!schema.contains_key("type"), "{type_name}.{field} is typed now: drop it here");
        schema.insert("type".into(), json_type);
    }
}

/// The document: `definitions` (every named type, including `Functions` — function id →
/// `{ request, response }` —, `Events` — public trigger type → payload —, `ExtensionEvents` —
/// extension trigger type → delivery — and `ChangePayloads` — feed change type → payload) plus
/// `x-functions` (id, kind, extension), `x-trigger-types` (the seed's six public ones),
/// `x-extension-trigger-types`, `x-change-types`, `x-error-codes` (variant name → wire code) and
/// `x-version`.
pub fn document() -> Value {
    let mut defs = Definitions::default();
    let mut functions = Map::new();
    let mut listed = Vec::new();
    let catalog =
        OPERATIONS.iter().map(|op| (op, false)).chain(EXTENSIONS.iter().map(|op| (op, true)));
    for (op, extension) in catalog {
        let Some(kind) = kind_name(op.kind) else { continue };
        let request = defs.add_root(&type_name(op.request_type), (op.request_schema)());
        let response = defs.add_root(&type_name(op.response_type), (op.response_schema)());
        let pair = [("request".to_string(), request), ("response".to_string(), response)];
        functions
            .insert(op.id.into(), closed_object(pair.into_iter().collect(), Some(op.description)));
        listed.push(json!({ "id": op.id, "kind": kind, "extension": extension }));
    }
    narrow_json_fields(&mut defs);
    let mut payloads = Map::new();
    for trigger_type in PUBLIC_TRIGGER_TYPES {
        let (name, schema) = payload_schema(trigger_type);
        payloads.insert(trigger_type.into(), defs.add_root(name, schema));
    }
    let mut extension_payloads = Map::new();
    let extension_trigger_types: Vec<&str> = EXTENSION_TRIGGER_TYPES.iter().map(|t| t.id).collect();
    for trigger_type in &extension_trigger_types {
        let (name, schema) = extension_payload_schema(trigger_type);
        extension_payloads.insert((*trigger_type).into(), defs.add_root(name, schema));
    }
    // A feed change is one of the public events, or an append-delta's compact delta.
    let mut change_payloads = payloads.clone();
    change_payloads.insert(MESSAGE_DELTA.into(), defs.add::<MessageDelta>("MessageDelta"));
    let change_types: Vec<&String> = change_payloads.keys().collect();
    let change_types = json!(change_types);
    defs.insert("Functions", closed_object(functions, Some("Every function a Workspace serves.")));
    defs.insert(
        "Events",
        closed_object(payloads, Some("The payload of each public trigger type.")),
    );
    defs.insert(
        "ExtensionEvents",
        closed_object(
            extension_payloads,
            Some("What a binding of each extension trigger type receives."),
        ),
    );
    defs.insert(
        "ChangePayloads",
        closed_object(change_payloads, Some("The payload of each type of feed change.")),
    );
    defs.add::<EventEnvelope>("EventEnvelope");
    defs.add::<CallEvent>("CallEvent");
    defs.add::<Rebuilt>("Rebuilt");
    defs.add::<WorkspaceOptions>("WorkspaceOptions");
    defs.add::<transfer::Imported>("Imported");
    defs.add::<transfer::LoadedFile>("LoadedFile");
    defs.add::<SimulationPlan>("SimulationPlan");
    let codes: Map<String, Value> =
        ErrorCode::ALL.iter().map(|c| (format!("{c:?}"), c.as_str().into())).collect();
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "SessionApi",
        "definitions": defs.0,
        "x-functions": listed,
        "x-trigger-types": PUBLIC_TRIGGER_TYPES,
        "x-extension-trigger-types": extension_trigger_types,
        "x-change-types": change_types,
        "x-error-codes": codes,
        "x-version": env!("CARGO_PKG_VERSION"),
    })
}
