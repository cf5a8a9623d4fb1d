//! The storage conformance suite of session-core against `MemStore`, compiled to wasm (run under
//! Node and headless Chromium by wasm-bindgen-test-runner).
#![cfg(target_arch = "wasm32")]

use session_core::conformance::run_all;
use session_core::{MemStore, Store};
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn mem_store_is_conformant_in_wasm() {
    let failures = run_all(&|| Box::new(MemStore::new()) as Box<dyn Store>);
    assert!(failures.is_empty(), "conformance failures:\n{}", failures.join("\n"));
}
