//! Prints the API schema document the npm package's TypeScript declarations are generated from:
//! `cargo run -p session-wasm --example api_schema > api-schema.json` (native only).

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let document = session_wasm::api_schema::document();
    println!("{}", serde_json::to_string_pretty(&document).expect("a JSON value serializes"));
}

#[cfg(target_arch = "wasm32")]
fn main() {}
