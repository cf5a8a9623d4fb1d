//! The npm package against the Rust side (native): `npm/package.json` carries the workspace
//! version, and the API schema its declarations are generated from covers every public catalog
//! function (the seed's and the extensions), every public and extension trigger type, every feed
//! change type and every error code.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::Value;
use session_core::catalog::{OpKind, EXTENSIONS, EXTENSION_TRIGGER_TYPES, OPERATIONS};
use session_core::events::PUBLIC_TRIGGER_TYPES;
use session_core::feed::MESSAGE_DELTA;
use session_core::ErrorCode;

const PACKAGE_JSON: &str = include_str!("../npm/package.json");

#[test]
fn package_json_has_the_workspace_version() {
    let package: Value = serde_json::from_str(PACKAGE_JSON).expect("npm/package.json is JSON");
    assert_eq!(
        package["version"].as_str(),
        Some(env!("CARGO_PKG_VERSION")),
        "host-wasm/npm/package.json and [workspace.package] version must agree"
    );
}

#[test]
fn api_schema_covers_the_public_catalog() {
    let document = session_wasm::api_schema::document();
    let functions = &document["definitions"]["Functions"]["properties"];
    let public = OPERATIONS
        .iter()
        .chain(EXTENSIONS)
        .filter(|op| matches!(op.kind, OpKind::Mutation | OpKind::Read));
    let mut count = 0;
    for op in public {
        let entry = &functions[op.id];
        assert!(entry["properties"]["request"].is_object(), "{}: no request type", op.id);
        assert!(entry["properties"]["response"].is_object(), "{}: no response type", op.id);
        count += 1;
    }
    assert!(count > 0);
    let listed = document["x-functions"].as_array().expect("x-functions");
    for op in EXTENSIONS {
        let entry = listed.iter().find(|f| f["id"] == op.id).expect("extension listed");
        assert_eq!(entry["extension"], true, "{}: not marked an extension", op.id);
    }
    for trigger_type in PUBLIC_TRIGGER_TYPES {
        let payload = &document["definitions"]["Events"]["properties"][trigger_type];
        assert!(payload.is_object(), "{trigger_type}: no payload type");
        let change = &document["definitions"]["ChangePayloads"]["properties"][trigger_type];
        assert!(change.is_object(), "{trigger_type}: no change payload type");
    }
    let change = &document["definitions"]["ChangePayloads"]["properties"][MESSAGE_DELTA];
    assert!(change.is_object(), "{MESSAGE_DELTA}: no change payload type");
    let extension_types = document["x-extension-trigger-types"].as_array().expect("listed");
    assert_eq!(extension_types.len(), EXTENSION_TRIGGER_TYPES.len());
    for trigger in EXTENSION_TRIGGER_TYPES {
        assert!(extension_types.iter().any(|t| t == trigger.id), "{} not listed", trigger.id);
        let payload = &document["definitions"]["ExtensionEvents"]["properties"][trigger.id];
        assert!(payload.is_object(), "{}: no delivery type", trigger.id);
    }
    let codes = document["x-error-codes"].as_object().expect("x-error-codes");
    let listed: Vec<&str> = codes.values().filter_map(Value::as_str).collect();
    let all: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(listed.len(), all.len());
    assert!(all.iter().all(|c| listed.contains(c)));
}

#[test]
fn a_json_typed_request_field_is_declared_with_its_wire_type() {
    // `SetExpiryRequest.expires_at` is a `Value` in Rust (the core refuses a malformed one itself);
    // untyped, the declarations would make it an object and refuse the number a caller sends.
    let document = session_wasm::api_schema::document();
    let expires_at = &document["definitions"]["SetExpiryRequest"]["properties"]["expires_at"];
    assert_eq!(expires_at["type"], serde_json::json!(["integer", "null"]));
}
