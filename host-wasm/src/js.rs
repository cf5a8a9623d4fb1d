//! The few JavaScript built-ins the bindings call, bound here rather than through `js-sys`: a
//! dependency on `js-sys` links the describe shims of all its imports into the module, and the
//! closure shims those reach stay in the bundle's function table after `wasm-bindgen` strips the
//! shims (about 1.9 KB of the gzipped bundle for nothing a page runs).

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `Date.now()`.
    #[wasm_bindgen(js_namespace = Date, js_name = now)]
    pub fn date_now() -> f64;

    /// `Math.random()`.
    #[wasm_bindgen(js_namespace = Math, js_name = random)]
    pub fn math_random() -> f64;

    /// `JSON.stringify(value)`: a string, or `undefined` (a function, a symbol); throws on a cycle
    /// or a `BigInt`.
    #[wasm_bindgen(catch, js_namespace = JSON, js_name = stringify)]
    pub fn json_stringify(value: &JsValue) -> Result<JsValue, JsValue>;

    /// `JSON.parse(text)`.
    #[wasm_bindgen(catch, js_namespace = JSON, js_name = parse)]
    pub fn json_parse(text: &str) -> Result<JsValue, JsValue>;

    /// `String(value)`: how a thrown value reads (`TypeError: …`).
    #[wasm_bindgen(js_name = String)]
    pub fn js_string(value: &JsValue) -> String;

    /// A JavaScript `Error`.
    #[wasm_bindgen(js_name = Error)]
    pub type JsError;

    /// `new Error(message)`.
    #[wasm_bindgen(constructor, js_class = "Error")]
    pub fn new(message: &str) -> JsError;

    /// `error.code = code`.
    #[wasm_bindgen(method, setter = code, js_class = "Error")]
    pub fn set_code(this: &JsError, code: &str);

    /// `ArrayBuffer`, for `instanceof`.
    #[wasm_bindgen(js_name = ArrayBuffer)]
    pub type ArrayBuffer;

    /// `ArrayBuffer.isView(value)`.
    #[wasm_bindgen(static_method_of = ArrayBuffer, js_class = "ArrayBuffer", js_name = isView)]
    pub fn is_view(value: &JsValue) -> bool;

    /// A `Uint8Array`.
    #[wasm_bindgen(js_name = Uint8Array)]
    pub type Uint8Array;

    /// `new Uint8Array(data)` (a view of an `ArrayBuffer`, a copy of another view).
    #[wasm_bindgen(constructor, js_class = "Uint8Array")]
    pub fn new(data: &JsValue) -> Uint8Array;

    /// `bytes.slice()`, copied into wasm memory.
    #[wasm_bindgen(method, js_class = "Uint8Array", js_name = slice)]
    pub fn to_vec(this: &Uint8Array) -> Vec<u8>;
}
