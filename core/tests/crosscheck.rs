//! The cross-host check on the reference store: every public function covered, and the digest of
//! the transcript pinned in `tests/fixtures/crosscheck.txt` (the wasm host checks the same file).
//! `CROSSCHECK_UPDATE=1` rewrites the fixture after an intended behaviour change.

use session_core::crosscheck::{run, CoreHost};
use session_core::{MemStore, Store};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/crosscheck.txt");

#[test]
fn mem_store_matches_the_pinned_transcript() {
    let make = || Box::new(MemStore::new()) as Box<dyn Store>;
    let mut dump =
        std::env::var_os("CROSSCHECK_DUMP").map(|p| std::fs::File::create(p).expect("dump file"));
    let report = run(&mut CoreHost::new(&make), &mut |line| {
        if let Some(file) = dump.as_mut() {
            use std::io::Write;
            let _ = writeln!(file, "{line}");
        }
    });
    assert!(report.uncovered().is_empty(), "never answered: {:?}", report.uncovered());
    assert!(report.sequences >= 200);
    if std::env::var_os("CROSSCHECK_UPDATE").is_some() {
        std::fs::write(FIXTURE, report.summary()).expect("write fixture");
    }
    let want = std::fs::read_to_string(FIXTURE).expect("fixture (CROSSCHECK_UPDATE=1 creates it)");
    assert_eq!(
        report.summary(),
        want,
        "the transcript changed: if intended, rerun with CROSSCHECK_UPDATE=1 (CROSSCHECK_DUMP=<file> writes the lines)"
    );
}
