//! Runs the storage conformance suite against `MemStore`, the reference model: one test per
//! check (`mem_store::<check>`).

mod mem_store {
    use session_core::{MemStore, Store};

    session_core::conformance_tests!(|| Box::new(MemStore::new()) as Box<dyn Store>);
}
