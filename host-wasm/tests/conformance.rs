//! The storage conformance suite of session-core against `MemStore`, compiled to wasm (run under
//! Node and headless Chromium by wasm-bindgen-test-runner): one test per check, the same macro
//! every store crate instantiates.
#![cfg(target_arch = "wasm32")]

use session_core::{MemStore, Store};
use wasm_bindgen_test::wasm_bindgen_test;

session_core::conformance_tests!(
    #[wasm_bindgen_test]
    || Box::new(MemStore::new()) as Box<dyn Store>
);
