//! Internally tagged enums (`{"type": "text", ...}`) decoded without serde's content buffer.
//!
//! serde's derive decodes an internally tagged enum by first copying the whole object into its
//! private `Content` tree, then decoding the variant from that copy; every type reached from such
//! an enum gets one more copy of its decoder for `Content`. In the browser bundle that was a fifth
//! of the code (188 KB of 1 MB, measured with `twiggy`). [`internally_tagged!`](crate::internally_tagged) writes the enum as
//! before (the derive's `Serialize` and JSON Schema still see `#[serde(tag = ...)]`, so the wire
//! shape and the golden schemas are unchanged) and decodes it here instead: the object is read as a
//! JSON map, the tag is taken out, and the rest is handed to a mirror of the enum derived
//! externally tagged (`#[serde(remote = ...)]`, which builds the real enum's variants), so the
//! variants decode through the JSON value decoders every request already links.
//!
//! Behaviour kept from the derive: a missing tag is ``missing field `type` ``, an unknown one is
//! ``unknown variant `x`, expected one of ...``, unknown fields are ignored, a unit variant
//! ignores whatever else the object holds, and a newtype variant reads the other fields as its
//! own object.

use alloc::string::String;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, VariantAccess, Visitor,
};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Declares an enum serialized with `#[serde(tag = $tag, rename_all = $rename_all)]` whose
/// `Deserialize` goes through [`decode`]. `remote` is the enum's own name as a string (serde's
/// `remote` attribute takes a literal).
#[macro_export]
#[doc(hidden)]
macro_rules! internally_tagged {
    (
        tag = $tag:literal, rename_all = $rename_all:literal, remote = $remote:literal;
        $(#[$meta:meta])*
        $vis:vis enum $name:ident { $($body:tt)* }
    ) => {
        $(#[$meta])*
        #[serde(tag = $tag, rename_all = $rename_all)]
        $vis enum $name { $($body)* }

        const _: () = {
            #[derive(serde::Deserialize)]
            #[serde(remote = $remote, rename_all = $rename_all)]
            #[allow(dead_code, clippy::large_enum_variant)]
            enum Mirror { $($body)* }

            impl<'de> serde::Deserialize<'de> for $name {
                fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    $crate::tagged::decode(deserializer, $tag, Mirror::deserialize)
                }
            }
        };
    };
}

/// Reads an object, takes its `tag` out and decodes the variant it names with `variant` (the
/// mirror's externally tagged decoder).
pub fn decode<'de, D, T>(
    deserializer: D,
    tag: &'static str,
    variant: fn(Tagged) -> Result<T, serde_json::Error>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let mut rest = Map::<String, Value>::deserialize(deserializer)?;
    let name = match rest.remove(tag) {
        Some(Value::String(name)) => name,
        Some(_) => {
            return Err(de::Error::custom(format_args!("`{tag}` must be a string")));
        }
        None => return Err(de::Error::missing_field(tag)),
    };
    variant(Tagged { name, rest }).map_err(de::Error::custom)
}

/// An object split into its variant name and the rest of its fields, read as an externally tagged
/// enum.
#[derive(Debug)]
pub struct Tagged {
    name: String,
    rest: Map<String, Value>,
}

impl<'de> Deserializer<'de> for Tagged {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

impl<'de> EnumAccess<'de> for Tagged {
    type Error = serde_json::Error;
    type Variant = Fields;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Fields), Self::Error> {
        let variant = seed.deserialize(self.name.into_deserializer())?;
        Ok((variant, Fields(self.rest)))
    }
}

/// The fields of a tagged object other than its tag.
#[derive(Debug)]
pub struct Fields(Map<String, Value>);

impl<'de> VariantAccess<'de> for Fields {
    type Error = serde_json::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        seed.deserialize(Value::Object(self.0))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("an internally tagged enum has no tuple variants"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        Value::Object(self.0).deserialize_struct("", fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use crate::record::Record;
    use crate::wire::{AgentMessage, ContentBlock};
    use alloc::string::ToString;

    fn error<T: core::fmt::Debug + for<'de> serde::Deserialize<'de>>(
        json: &str,
    ) -> alloc::string::String {
        serde_json::from_str::<T>(json).expect_err(json).to_string()
    }

    #[test]
    fn decodes_what_the_derive_decoded() {
        let block: ContentBlock =
            serde_json::from_str(r#"{"text":"hi","type":"text","extra":1}"#).expect("decodes");
        assert_eq!(block, ContentBlock::Text { text: "hi".into() });
        let settle: Record =
            serde_json::from_str(r#"{"type":"settle","ignored":true}"#).expect("unit");
        assert_eq!(settle, Record::Settle);
        let nested = r#"{"role":"user","timestamp":5,"content":[{"type":"function_result",
            "function_call_id":"c","content":[{"type":"text","text":"r"}]}]}"#;
        let message: AgentMessage = serde_json::from_str(nested).expect("nested");
        assert_eq!(
            serde_json::from_value::<AgentMessage>(
                serde_json::to_value(&message).expect("encodes")
            )
            .expect("round trip"),
            message
        );
    }

    #[test]
    fn refuses_with_the_derive_s_words() {
        assert!(error::<ContentBlock>(r#"{"text":"hi"}"#).starts_with("missing field `type`"));
        assert!(error::<ContentBlock>(r#"{"type":"video"}"#)
            .starts_with("unknown variant `video`, expected one of `text`, `image`"));
        assert!(error::<ContentBlock>(r#"{"type":"text"}"#).starts_with("missing field `text`"));
        assert!(error::<ContentBlock>(r#"{"type":7,"text":"x"}"#)
            .starts_with("`type` must be a string"));
        assert!(error::<ContentBlock>(r#"["text","x"]"#).starts_with("invalid type: sequence"));
    }
}
