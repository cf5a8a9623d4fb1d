//! Subscription tables: per trigger type, the bindings (trigger-instance id → bound function and
//! parsed filter) and which of them an event reaches (contract §3.1, §3.4). Hosts own the
//! transport; this is the bookkeeping every host shares.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

use crate::events::Emitted;
use crate::filter::BindingFilter;

/// One accepted binding.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscription {
    /// The trigger-instance id the binding was made under.
    pub id: String,
    /// The function the engine invokes on delivery.
    pub function_id: String,
    pub filter: BindingFilter,
    /// Opaque host data kept with the binding (e.g. the engine namespace of the function).
    pub namespace: Option<String>,
    /// Binding metadata, handed back with each delivery.
    pub metadata: Option<Value>,
}

/// The bindings of every trigger type, keyed by trigger type then by trigger-instance id.
#[derive(Debug, Clone, Default)]
pub struct Subscriptions {
    by_type: BTreeMap<String, BTreeMap<String, Subscription>>,
}

impl Subscriptions {
    pub fn new() -> Self {
        Subscriptions::default()
    }

    /// Parses `config` for `trigger_type` and stores the binding under `id` (replacing one with the
    /// same id). A malformed config is rejected (`invalid <type> config: …`) and nothing is stored.
    pub fn bind(
        &mut self,
        trigger_type: &str,
        id: &str,
        function_id: &str,
        config: &Value,
    ) -> Result<&mut Subscription, String> {
        let filter = BindingFilter::parse(trigger_type, config)?;
        let table = self.by_type.entry(String::from(trigger_type)).or_default();
        let sub = Subscription {
            id: String::from(id),
            function_id: String::from(function_id),
            filter,
            namespace: None,
            metadata: None,
        };
        table.insert(String::from(id), sub);
        Ok(table.get_mut(id).expect("just inserted"))
    }

    /// Removes binding `id` of `trigger_type`; whether it existed.
    pub fn unbind(&mut self, trigger_type: &str, id: &str) -> bool {
        self.by_type.get_mut(trigger_type).is_some_and(|t| t.remove(id).is_some())
    }

    /// Removes binding `id` whatever its type; whether it existed.
    pub fn unbind_any(&mut self, id: &str) -> bool {
        self.by_type.values_mut().any(|t| t.remove(id).is_some())
    }

    /// Number of bindings of `trigger_type`.
    pub fn count(&self, trigger_type: &str) -> usize {
        self.by_type.get(trigger_type).map_or(0, BTreeMap::len)
    }

    /// The bindings of the event's trigger type whose filter matches it, one per binding.
    pub fn matching(&self, emitted: &Emitted) -> Vec<Subscription> {
        self.by_type
            .get(emitted.event.trigger_type())
            .map(|table| table.values().filter(|s| s.filter.matches(emitted)).cloned().collect())
            .unwrap_or_default()
    }

    /// The `session::changed` bindings the event's change reaches (none when it has no change).
    pub fn matching_changed(&self, emitted: &Emitted) -> Vec<Subscription> {
        if emitted.change.is_none() {
            return Vec::new();
        }
        self.by_type
            .get(crate::feed::CHANGED)
            .map(|t| t.values().filter(|s| s.filter.matches_change(emitted)).cloned().collect())
            .unwrap_or_default()
    }

    /// Every delivery one event makes, in order: each matching binding of its trigger type with
    /// the event's payload, then each matching `session::changed` binding with its change.
    pub fn deliveries(&self, emitted: &Emitted) -> Vec<(Subscription, Value)> {
        let mut out = Vec::new();
        let matching = self.matching(emitted);
        if !matching.is_empty() {
            let payload = emitted.event.payload();
            out.extend(matching.into_iter().map(|sub| (sub, payload.clone())));
        }
        let changed = self.matching_changed(emitted);
        // The event is a copy of the change's payload: built only for a binding that gets it.
        if let Some(event) = (!changed.is_empty()).then(|| emitted.changed_event()).flatten() {
            let payload = serde_json::to_value(event).unwrap_or(Value::Null);
            out.extend(changed.into_iter().map(|sub| (sub, payload.clone())));
        }
        out
    }

    /// Every binding of `trigger_type`, unfiltered (the `session::store::events` feed).
    pub fn all(&self, trigger_type: &str) -> Vec<Subscription> {
        self.by_type.get(trigger_type).map(|t| t.values().cloned().collect()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{SessionEvent, DELETED, MESSAGE_ADDED};
    use crate::wire::DeletedEvent;
    use serde_json::json;

    fn deleted(sid: &str) -> Emitted {
        let event = SessionEvent::Deleted(DeletedEvent { session_id: sid.into(), timestamp: 1 });
        Emitted { event, session_metadata: None, change: None }
    }

    #[test]
    fn bind_filter_unbind() {
        let mut subs = Subscriptions::new();
        subs.bind(DELETED, "t1", "f::a", &json!({"session_id": "s_1"})).unwrap();
        subs.bind(DELETED, "t2", "f::a", &Value::Null).unwrap();
        assert_eq!(subs.matching(&deleted("s_1")).len(), 2);
        assert_eq!(subs.matching(&deleted("s_2")).len(), 1);
        assert!(subs.unbind(DELETED, "t2"));
        assert!(subs.matching(&deleted("s_2")).is_empty());
        let err = subs.bind(DELETED, "t3", "f::a", &json!({"roles": ["user"]})).unwrap_err();
        assert!(err.starts_with("invalid session::deleted config:"), "{err}");
        assert_eq!(subs.count(DELETED), 1);
        assert!(subs.bind(MESSAGE_ADDED, "t4", "f", &json!({"bogus": 1})).is_err());
        assert!(subs.unbind_any("t1"));
    }
}
