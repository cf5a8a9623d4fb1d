//! Every "contract §N" the repository cites names a section of `spec/contract.md` (issue 36: the
//! behaviour spec the code cites is in the repository, and citations do not dangle).

use std::path::{Path, PathBuf};

/// The `.rs` and `.md` files under `dir`, build output, dependencies and this file (its examples
/// cite a missing section on purpose) left out.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "node_modules" | "corpus" | "artifacts")
            {
                sources(&path, out);
            }
        } else if (name.ends_with(".rs") || name.ends_with(".md"))
            && name != "contract_citations.rs"
        {
            out.push(path);
        }
    }
}

/// The section numbers cited in `text` ("contract §5.5." → "5.5").
fn citations(text: &str) -> Vec<String> {
    text.match_indices("contract §")
        .map(|(at, marker)| {
            let rest = &text[at + marker.len()..];
            let number: String =
                rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            number.trim_end_matches('.').to_string()
        })
        .filter(|number| !number.is_empty())
        .collect()
}

/// Whether `contract` has section `number`: `## N.` for a top-level one, `### N.M ` below.
fn has_section(contract: &str, number: &str) -> bool {
    contract.lines().any(|line| match number.contains('.') {
        false => line.starts_with(&format!("## {number}.")),
        true => line.starts_with(&format!("### {number} ")),
    })
}

#[test]
fn every_contract_citation_names_a_section() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root");
    let contract =
        std::fs::read_to_string(root.join("spec/contract.md")).expect("spec/contract.md exists");
    let mut files = Vec::new();
    sources(root, &mut files);
    let (mut cited, mut dangling) = (0, Vec::new());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for number in citations(&text) {
            cited += 1;
            if !has_section(&contract, &number) {
                dangling.push(format!("{}: contract §{number}", file.display()));
            }
        }
    }
    assert!(cited > 50, "the code cites the contract ({cited} citations found)");
    assert!(dangling.is_empty(), "citations of no section of spec/contract.md:\n{dangling:#?}");
}

#[test]
fn a_citation_of_a_missing_section_is_found() {
    let contract = "## 5. Storage\n### 5.2 fs adapter — layout\n";
    assert!(has_section(contract, "5") && has_section(contract, "5.2"));
    assert!(!has_section(contract, "5.3") && !has_section(contract, "9"));
    assert_eq!(citations("see contract §5.2. and contract §9"), ["5.2", "9"]);
}
