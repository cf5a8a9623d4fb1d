//! session-wasm: the browser host of session-core (skeleton until the web-bench issue).
#![no_std]
