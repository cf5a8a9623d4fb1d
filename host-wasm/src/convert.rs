//! JSON ⇄ JavaScript conversions and the JS `Error` every failure is thrown as (wire `message`
//! plus a `code` property such as `session/not_found`).

use serde::Serialize;
use serde_json::Value;
use session_core::SessionError;
use wasm_bindgen::{JsCast, JsValue};

/// A JS value as JSON (`undefined` reads as `null`): `JSON.stringify`, then `serde_json` (one
/// JSON parser for every request and log line, rather than a second, per-type JS walker).
pub fn from_js(value: JsValue) -> Result<Value, JsValue> {
    if value.is_undefined() {
        return Ok(Value::Null);
    }
    let not_json = |reason: &dyn core::fmt::Display| {
        error(&SessionError::bad_request_shape(format_args!("not JSON-compatible: {reason}")))
    };
    let text = js_sys::JSON::stringify(&value).map_err(|e| {
        let reason: String = js_sys::Error::from(e).message().into();
        not_json(&reason)
    })?;
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
    js_sys::JSON::parse(&text).map_err(|_| encoding(&"JSON.parse refused it"))
}

/// The thrown form of a session error: `Error(message)` with `code`.
pub fn error(e: &SessionError) -> JsValue {
    let err = js_sys::Error::new(&e.message());
    // Setting a property on a fresh Error object cannot fail.
    let _ = js_sys::Reflect::set(&err, &"code".into(), &e.code.as_str().into());
    err.into()
}

/// Bytes of a `string` (UTF-8) or any `ArrayBuffer` view.
pub fn bytes(data: &JsValue) -> Result<Vec<u8>, JsValue> {
    if let Some(text) = data.as_string() {
        return Ok(text.into_bytes());
    }
    if let Some(buffer) = data.dyn_ref::<js_sys::ArrayBuffer>() {
        return Ok(js_sys::Uint8Array::new(buffer).to_vec());
    }
    if js_sys::ArrayBuffer::is_view(data) {
        return Ok(js_sys::Uint8Array::new(data).to_vec());
    }
    Err(error(&SessionError::invalid_request("expected a string, ArrayBuffer or Uint8Array")))
}
