//! `Then` steps about the events the last call fired — and, explicitly, did not fire.

use cucumber::gherkin::Step;
use cucumber::then;
use serde_json::Value;

use crate::json;
use crate::world::SessionWorld;

#[then("no events fired")]
fn no_events(w: &mut SessionWorld) {
    let types: Vec<_> = w.events.iter().map(|e| e.event.trigger_type()).collect();
    assert!(types.is_empty(), "events fired: {types:?}");
}

#[then(regex = r#"^the events fired are "([^"]*)"$"#)]
fn events_are(w: &mut SessionWorld, list: String) {
    let expected: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let actual: Vec<&str> = w.events.iter().map(|e| e.event.trigger_type()).collect();
    assert_eq!(actual, expected);
}

#[then(regex = r#"^no "([^"]+)" event fired$"#)]
fn no_event_of(w: &mut SessionWorld, trigger: String) {
    assert!(
        w.events.iter().all(|e| e.event.trigger_type() != trigger),
        "{trigger} fired: {:?}",
        w.events.iter().map(|e| e.event.payload()).collect::<Vec<_>>()
    );
}

fn event_payload(w: &SessionWorld, n: usize, trigger: &str) -> Value {
    let emitted = w.events.get(n - 1).unwrap_or_else(|| panic!("only {} events", w.events.len()));
    assert_eq!(emitted.event.trigger_type(), trigger);
    emitted.event.payload()
}

#[then(regex = r#"^event (\d+) is "([^"]+)" with payload:$"#)]
fn event_is(w: &mut SessionWorld, n: usize, trigger: String, step: &Step) {
    let expected = json::parse(step.docstring.as_deref().expect("docstring"));
    let actual = event_payload(w, n, &trigger);
    let mut diffs = Vec::new();
    json::exact_diff(&expected, &actual, "", &mut diffs);
    assert!(diffs.is_empty(), "payload differs:\n  {}\nactual: {actual}", diffs.join("\n  "));
}

#[then(regex = r#"^event (\d+) is "([^"]+)" with (\{.*\})$"#)]
fn event_is_inline(w: &mut SessionWorld, n: usize, trigger: String, expected: String) {
    let actual = event_payload(w, n, &trigger);
    let mut diffs = Vec::new();
    json::exact_diff(&json::parse(&expected), &actual, "", &mut diffs);
    assert!(diffs.is_empty(), "payload differs:\n  {}\nactual: {actual}", diffs.join("\n  "));
}

#[then(regex = r#"^event (\d+) is "([^"]+)" containing (\{.*\})$"#)]
fn event_contains(w: &mut SessionWorld, n: usize, trigger: String, expected: String) {
    let actual = event_payload(w, n, &trigger);
    let mut diffs = Vec::new();
    json::subset_diff(&json::parse(&expected), &actual, "", &mut diffs);
    assert!(diffs.is_empty(), "payload differs:\n  {}\nactual: {actual}", diffs.join("\n  "));
}

#[then(regex = r#"^event (\d+) carries session metadata (\{.*\}|null)$"#)]
fn event_metadata(w: &mut SessionWorld, n: usize, expected: String) {
    let emitted = w.events.get(n - 1).unwrap_or_else(|| panic!("only {} events", w.events.len()));
    let actual = emitted.session_metadata.clone().map(Value::Object).unwrap_or(Value::Null);
    assert_eq!(actual, json::parse(&expected));
}
