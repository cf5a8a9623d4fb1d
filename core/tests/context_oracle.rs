//! `session::context` against its whole-path oracle on `MemStore` (issue 38), on scripts whose
//! seed and length proptest picks: the conformance check's model test (`context_model_run`) on
//! many more sessions than the fixed seeds every backend runs. `PROPTEST_CASES` overrides the
//! default of 48 cases.

use proptest::prelude::*;
use session_core::conformance::context_model_run;
use session_core::{MemStore, Store};

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(48),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn context_answers_as_the_oracle(seed in any::<u64>(), steps in 0usize..100) {
        let make = || Box::new(MemStore::new()) as Box<dyn Store>;
        if let Err(e) = context_model_run(&make, seed, steps) {
            prop_assert!(false, "{}", e);
        }
    }
}
