//! What a UIMessage (or part) has that writing would not give ([`diff`]), and the original
//! again from what writing gives and that difference ([`apply`]).

use alloc::vec::Vec;
use serde_json::Value;

use super::ABSENT;
use crate::wire::Object;

/// The fields of `original` that `generated` does not give as they are, plus [`ABSENT`]: what
/// `generated` has that `original` had not.
pub(super) fn diff(original: &Object, generated: &Object) -> Object {
    let mut extra: Object = original
        .iter()
        .filter(|(key, value)| generated.get(*key) != Some(*value))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let absent: Vec<Value> = generated
        .keys()
        .filter(|key| !original.contains_key(*key))
        .map(|key| Value::String(key.clone()))
        .collect();
    if !absent.is_empty() {
        extra.insert(ABSENT.into(), Value::Array(absent));
    }
    extra
}

/// `generated` with a [`diff`] put back: the original.
pub(super) fn apply(mut generated: Object, extra: &Object) -> Object {
    for (key, value) in extra {
        if key == ABSENT {
            for absent in value.as_array().into_iter().flatten().filter_map(Value::as_str) {
                generated.remove(absent);
            }
        } else {
            generated.insert(key.clone(), value.clone());
        }
    }
    generated
}

pub(super) fn object(value: Value) -> Object {
    match value {
        Value::Object(map) => map,
        _ => Object::new(),
    }
}
