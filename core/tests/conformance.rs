//! Runs the storage conformance suite against `MemStore`, the reference model: one test per
//! check (`mem_store::<check>`).

mod mem_store {
    use session_core::{MemStore, Store};

    session_core::conformance_tests!(|| Box::new(MemStore::new()) as Box<dyn Store>);
}

/// The two-instance races on `MemStore`: one store, two handles (its one lock serializes them).
mod mem_store_races {
    use std::sync::Arc;

    use session_core::conformance::races::Pair;
    use session_core::MemStore;

    fn pair() -> Pair {
        let store = Arc::new(MemStore::new());
        [store.clone(), store]
    }

    session_core::race_tests!(pair);
}
