//! JSON ⇄ JavaScript conversions and the JS `Error` every failure is thrown as (wire `message`
//! plus a `code` property such as `session/not_found`).

use serde::Serialize;
use serde_json::Value;
use session_core::SessionError;
use wasm_bindgen::{JsCast, JsValue};

use crate::js;

/// A JS value as JSON (`undefined` reads as `null`): `JSON.stringify`, then `serde_json` (one
/// JSON parser for every request and log line, rather than a second, per-type JS walker).
pub fn from_js(value: JsValue) -> Result<Value, JsValue> {
    if value.is_undefined() {
        return Ok(Value::Null);
    }
    let not_json = |reason: &dyn core::fmt::Display| {
        error(&SessionError::bad_request_shape(format_args!("not JSON-compatible: {reason}")))
    };
    let text = js::json_stringify(&value).map_err(|e| not_json(&js::js_string(&e)))?;
    let text = text.as_string().ok_or_else(|| not_json(&"a function or a symbol"))?;
    serde_json::from_slice(text.as_bytes()).map_err(|e| not_json(&e))
}

/// Any serializable value as plain JS objects and arrays (never `Map`s): `serde_json`, then
/// `JSON.parse`.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    let encoding = |reason: &dyn core::fmt::Display| {
        error(&SessionError::storage(format!("response encoding failed: {reason}")))
    };
    let text = serde_json::to_string(value).map_err(|e| encoding(&e))?;
    js::json_parse(&text).map_err(|e| encoding(&js::js_string(&e)))
}

/// The thrown form of a session error: `Error(message)` with `code`.
pub fn error(e: &SessionError) -> JsValue {
    let err = js::JsError::new(&e.message());
    err.set_code(e.code.as_str());
    err.into()
}

/// Bytes of a `string` (UTF-8) or any `ArrayBuffer` view.
pub fn bytes(data: &JsValue) -> Result<Vec<u8>, JsValue> {
    if let Some(text) = data.as_string() {
        return Ok(text.into_bytes());
    }
    if data.is_instance_of::<js::ArrayBuffer>() || js::ArrayBuffer::is_view(data) {
        return Ok(js::Uint8Array::new(data).to_vec());
    }
    Err(error(&SessionError::invalid_request("expected a string, ArrayBuffer or Uint8Array")))
}
