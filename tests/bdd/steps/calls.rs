//! `When` steps: call a catalog function with a JSON payload (inline or as a docstring).

use cucumber::gherkin::Step;
use cucumber::when;
use serde_json::json;

use crate::json;
use crate::world::SessionWorld;

#[when(regex = r#"^I call "([^"]+)" with (\{.*\}|null)$"#)]
fn call_inline(w: &mut SessionWorld, function: String, payload: String) {
    w.call(&function, json::parse(&payload));
}

#[when(regex = r#"^I call "([^"]+)" with:$"#)]
fn call_doc(w: &mut SessionWorld, function: String, step: &Step) {
    w.call(&function, json::parse(step.docstring.as_deref().expect("docstring")));
}

#[when(regex = r#"^I call "([^"]+)"$"#)]
fn call_empty(w: &mut SessionWorld, function: String) {
    w.call(&function, json!({}));
}
