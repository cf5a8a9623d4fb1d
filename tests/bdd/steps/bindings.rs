//! Binding steps: bind a handler with a config (accepted or rejected) and check what it received.

use cucumber::{given, then, when};

use crate::json;
use crate::world::SessionWorld;

fn bind(w: &mut SessionWorld, name: String, trigger: String, config: String) {
    w.bind(name, trigger, &json::parse(&config));
}

#[given(regex = r#"^a binding "([^"]+)" on "([^"]+)" with config (\{.*\}|null)$"#)]
fn given_binding(w: &mut SessionWorld, name: String, trigger: String, config: String) {
    bind(w, name, trigger, config);
    if let Some(Err(e)) = &w.last_binding {
        panic!("binding rejected: {e}");
    }
}

#[when(regex = r#"^I bind "([^"]+)" on "([^"]+)" with config (.+)$"#)]
fn when_binding(w: &mut SessionWorld, name: String, trigger: String, config: String) {
    bind(w, name, trigger, config);
}

#[when(regex = r#"^I unbind "([^"]+)"$"#)]
fn unbind(w: &mut SessionWorld, name: String) {
    w.unbind(&name);
}

#[then(regex = r#"^the binding is rejected with "([^"]+)"$"#)]
fn rejected(w: &mut SessionWorld, text: String) {
    match &w.last_binding {
        Some(Err(e)) => assert!(e.contains(&text), "rejection was: {e}"),
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[then("the binding is accepted")]
fn accepted(w: &mut SessionWorld) {
    assert_eq!(w.last_binding, Some(Ok(())));
}

#[then(regex = r#"^binding "([^"]+)" received (\d+) events?$"#)]
fn received_count(w: &mut SessionWorld, name: String, n: usize) {
    let b = w.bindings.get(&name).unwrap_or_else(|| panic!("no binding {name}"));
    assert_eq!(b.received.len(), n, "received: {:?}", b.received);
}

#[then(regex = r#"^binding "([^"]+)" received nothing$"#)]
fn received_nothing(w: &mut SessionWorld, name: String) {
    received_count(w, name, 0);
}

#[then(regex = r#"^binding "([^"]+)" last received (\{.*\})$"#)]
fn last_received(w: &mut SessionWorld, name: String, expected: String) {
    let b = w.bindings.get(&name).unwrap_or_else(|| panic!("no binding {name}"));
    let last = b.received.last().unwrap_or_else(|| panic!("{name} received nothing"));
    let mut diffs = Vec::new();
    json::subset_diff(&json::parse(&expected), last, "", &mut diffs);
    assert!(diffs.is_empty(), "payload differs:\n  {}\nactual: {last}", diffs.join("\n  "));
}
