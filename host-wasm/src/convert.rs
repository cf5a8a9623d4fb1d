//! JSON ⇄ JavaScript conversions and the JS `Error` every failure is thrown as (wire `message`
//! plus a `code` property such as `session/not_found`).

use serde::Serialize;
use serde_json::Value;
use session_core::SessionError;
use wasm_bindgen::{JsCast, JsValue};

/// A JS value as JSON (`undefined` reads as `null`).
pub fn from_js(value: JsValue) -> Result<Value, JsValue> {
    if value.is_undefined() {
        return Ok(Value::Null);
    }
    serde_wasm_bindgen::from_value(value).map_err(|e| {
        error(&SessionError::bad_request_shape(format_args!("not JSON-compatible: {e}")))
    })
}

/// Any serializable value as plain JS objects and arrays (never `Map`s).
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| error(&SessionError::storage(format!("response encoding failed: {e}"))))
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
