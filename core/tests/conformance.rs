//! Runs the storage conformance suite against `MemStore`, the reference model.

use session_core::conformance::run_all;
use session_core::{MemStore, Store};

#[test]
fn mem_store_is_conformant() {
    let failures = run_all(&|| Box::new(MemStore::new()) as Box<dyn Store>);
    assert!(failures.is_empty(), "conformance failures:\n{}", failures.join("\n"));
}
