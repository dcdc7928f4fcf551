//! Structured output (`--schema`): the schema a reply must fit, read from a file, JSON, or the
//! compact form (`name str, age int, tags [str]`); the shapes each protocol is given (OpenAI's
//! strict mode, Gemini's OpenAPI subset); and the check of a reply, whose JSON then becomes the
//! reply, in one line.

use serde_json::{Map, Value, json};

use crate::backend::shape::lenient;

use crate::error::{Error, Result};

/// The largest schema file read.
const MAX_FILE: u64 = 256 * 1024;

/// Read `--schema SPEC`: JSON (starts with `{`), a file, or the compact form.
pub(crate) fn parse(spec: &str) -> Result<Value> {
    let spec_t = spec.trim();
    let value = if spec_t.starts_with('{') {
        serde_json::from_str::<Value>(spec_t).map_err(|e| {
            Error::usage(format!("--schema: not valid JSON: {e}")).hint(
                "give a JSON schema, a file holding one, or the compact form: 'name str, age int'",
            )
        })?
    } else if std::path::Path::new(spec_t).is_file() {
        let path = std::path::Path::new(spec_t);
        let meta = std::fs::metadata(path).map_err(|e| Error::io("read", path, e))?;
        if meta.len() > MAX_FILE {
            return Err(Error::usage(format!(
                "--schema: {spec_t} is larger than 256 KiB"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
        serde_json::from_str::<Value>(&text).map_err(|e| {
            Error::usage(format!("--schema: {spec_t} is not valid JSON: {e}"))
                .hint("the file holds a JSON schema: {\"type\":\"object\",\"properties\":{…}}")
        })?
    } else {
        compact(spec_t)?
    };
    let root_ok = value.get("type").and_then(Value::as_str) == Some("object")
        && value.get("properties").is_some_and(Value::is_object);
    if !root_ok {
        return Err(Error::usage(
            "--schema: the top level must be an object with properties (\"type\": \"object\")",
        )
        .hint("to get a list, put it in a property: 'items [str]'"));
    }
    if let Some(at) = find_ref(&value, "") {
        return Err(Error::usage(format!(
            "--schema: \"$ref\" (at {at}) is not supported: a reply could not be checked against it"
        ))
        .hint("write the schema it refers to out in its place"));
    }
    Ok(value)
}

/// Where the schema has a `$ref` (`properties.address`), if anywhere.
fn find_ref(v: &Value, at: &str) -> Option<String> {
    let here = |k: &str| {
        if at.is_empty() {
            k.to_owned()
        } else {
            format!("{at}.{k}")
        }
    };
    match v {
        Value::Object(o) => {
            if o.contains_key("$ref") {
                return Some(if at.is_empty() {
                    "the top".into()
                } else {
                    at.to_owned()
                });
            }
            o.iter().find_map(|(k, v)| match (k.as_str(), v) {
                // Values, not schemas: a `$ref` in them is data.
                ("enum" | "const" | "default" | "examples", _) => None,
                // Names, then schemas: a property may be called `$ref`.
                (
                    "properties" | "patternProperties" | "$defs" | "definitions",
                    Value::Object(m),
                ) => m
                    .iter()
                    .find_map(|(name, s)| find_ref(s, &format!("{}.{name}", here(k)))),
                _ => find_ref(v, &here(k)),
            })
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_ref(v, &format!("{at}[{i}]"))),
        _ => None,
    }
}

/// `name str, age int, tags [str]`: every field required, no others. Types: `str`/`string`,
/// `int`/`integer`, `float`/`number`/`num`, `bool`/`boolean`, and `[TYPE]` for a list; a
/// field without a type is a string.
fn compact(spec: &str) -> Result<Value> {
    let bad = |what: String| {
        Error::usage(format!("--schema: {what}")).hint(
            "the compact form is 'name str, age int, score float, ok bool, tags [str]'; or give a JSON schema or a file",
        )
    };
    let mut props = Map::new();
    let mut required = Vec::new();
    for field in spec.split(',') {
        let field = field.trim();
        if field.is_empty() {
            return Err(bad(format!(
                "an empty field in '{}' (a comma too many)",
                crate::output::sanitize(spec)
            )));
        }
        let mut words = field.split_whitespace();
        let name = words.next().unwrap_or_default();
        let ty = words.next().unwrap_or("str");
        if let Some(extra) = words.next() {
            return Err(bad(format!(
                "'{}' has more than a name and a type ('{}')",
                crate::output::sanitize(field),
                crate::output::sanitize(extra)
            )));
        }
        if !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        {
            return Err(bad(format!(
                "'{}' is not a field name (neither a file)",
                crate::output::sanitize(name)
            )));
        }
        let schema = match ty.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            Some(inner) => {
                json!({"type": "array", "items": {"type": scalar(inner).ok_or_else(|| bad(format!("unknown type '{}'", crate::output::sanitize(inner))))?}})
            }
            None => {
                json!({"type": scalar(ty).ok_or_else(|| bad(format!("unknown type '{}'", crate::output::sanitize(ty))))?})
            }
        };
        if props.insert(name.to_owned(), schema).is_some() {
            return Err(bad(format!("'{name}' is given twice")));
        }
        required.push(Value::String(name.to_owned()));
    }
    if props.is_empty() {
        return Err(bad("no fields".into()));
    }
    Ok(json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false
    }))
}

fn scalar(t: &str) -> Option<&'static str> {
    Some(match t {
        "str" | "string" => "string",
        "int" | "integer" => "integer",
        "float" | "number" | "num" => "number",
        "bool" | "boolean" => "boolean",
        _ => return None,
    })
}

/// What a model without a native switch is told (in the system prompt).
pub(crate) fn instruction(schema: &Value) -> String {
    format!(
        "Answer with one JSON object that fits this JSON schema, and nothing else (no code fence, no words around it):\n{schema}"
    )
}

/// Check a reply: the JSON in it (a code fence around it is allowed), in one line, or why it
/// does not fit.
pub(crate) fn check(reply: &str, schema: &Value) -> std::result::Result<String, String> {
    let mut text = reply.trim();
    if let Some(rest) = text.strip_prefix("```") {
        let rest = rest.strip_prefix("json").unwrap_or(rest);
        text = rest.strip_suffix("```").unwrap_or(rest).trim();
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        if text.is_empty() {
            "the reply is empty, not JSON".to_owned()
        } else {
            format!("the reply is not valid JSON ({e})")
        }
    })?;
    // A key twice in one object: readers disagree on which value counts (serde_json keeps the
    // last, others the first), so what was checked may not be what the user's program reads.
    serde_json::from_str::<Unique>(text).map_err(|e| format!("the reply is ambiguous ({e})"))?;
    crate::tools::schema::check(&value, &lenient(schema))
        .map_err(|e| e.replacen("the arguments", "the reply", 1))?;
    Ok(minify(text))
}

/// JSON read only to see that no object has a key twice.
struct Unique;

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Unique, D::Error> {
        d.deserialize_any(Unique)
    }
}

impl<'de> serde::de::Visitor<'de> for Unique {
    type Value = Unique;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_unit<E>(self) -> std::result::Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut a: A,
    ) -> std::result::Result<Unique, A::Error> {
        while a.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut a: A,
    ) -> std::result::Result<Unique, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = a.next_key::<String>()? {
            a.next_value::<Unique>()?;
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key \"{}\" is in one object twice",
                    crate::fmt::one_line(&key, 64)
                )));
            }
        }
        Ok(Unique)
    }
}

/// Valid JSON text in one line, as written (key order kept): whitespace outside strings
/// dropped.
fn minify(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// The user message that asks once more, with what was wrong.
pub(crate) fn retry_prompt(why: &str) -> String {
    format!(
        "Your reply does not fit the JSON schema: {why}. Answer again with only the JSON object, fitting the schema."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::shape::{gemini, strict};

    #[test]
    fn a_key_twice_in_one_object_does_not_fit() {
        let schema = parse("age int").unwrap();
        let why = check(r#"{"age":"notint","age":3}"#, &schema).unwrap_err();
        assert!(
            why.contains(r#"the key "age" is in one object twice"#),
            "{why}"
        );
        let why = check(
            r#"{"age":3,"x":[{"a":1,"a":2}]}"#,
            &parse(r#"{"type":"object","properties":{"age":{"type":"integer"}}}"#).unwrap(),
        )
        .unwrap_err();
        assert!(why.contains(r#"the key "a""#), "{why}");
        // The same key in different objects is fine.
        let ok = r#"{"age":3,"x":[{"a":1},{"a":2}],"y":{"age":1}}"#;
        assert_eq!(
            check(
                ok,
                &parse(r#"{"type":"object","properties":{"age":{"type":"integer"}}}"#).unwrap()
            )
            .unwrap(),
            ok
        );
    }

    #[test]
    fn compact_form() {
        let s = parse("name str, age int, tags [str], score float, ok bool, note").unwrap();
        assert_eq!(s["properties"]["age"], json!({"type":"integer"}));
        assert_eq!(
            s["properties"]["tags"],
            json!({"type":"array","items":{"type":"string"}})
        );
        assert_eq!(s["properties"]["note"], json!({"type":"string"}));
        assert_eq!(s["required"].as_array().unwrap().len(), 6);
        for bad in [
            "name strr",
            "a int x",
            "",
            "a int, a str",
            "[a] int",
            "name str,, age int",
            "name str, age int,",
            ", name str",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse(r#"{"type":"array"}"#).is_err());
        assert!(parse("{nope").is_err());
    }

    #[test]
    fn an_empty_field_and_a_ref_are_refused_by_name() {
        let e = parse("name str,, age int").unwrap_err().to_string();
        assert!(e.contains("an empty field"), "{e}");
        let e = parse(
            r##"{"type":"object","$defs":{"a":{"type":"string"}},"properties":{"x":{"type":"array","items":{"$ref":"#/$defs/a"}}}}"##,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("\"$ref\" (at properties.x.items)"), "{e}");
        // A property called `$ref`, or `$ref` in an enum, is not a reference.
        assert!(
            parse(
                r#"{"type":"object","properties":{"$ref":{"type":"string","enum":[{"$ref":1}]}}}"#
            )
            .is_ok()
        );
    }

    #[test]
    fn strict_and_lenient() {
        let s = json!({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},
            "o":{"type":"object","properties":{"x":{"type":"number"}}}},"required":["a"]});
        let st = strict(&s);
        assert_eq!(st["required"], json!(["a", "b", "o"]));
        assert_eq!(st["additionalProperties"], false);
        assert_eq!(st["properties"]["b"]["type"], json!(["integer", "null"]));
        assert_eq!(st["properties"]["o"]["required"], json!(["x"]));
        assert_eq!(st["properties"]["o"]["additionalProperties"], false);
        assert!(check(r#"{"a":"x","b":null}"#, &s).is_ok());
        assert_eq!(
            check(r#"{"b":1}"#, &s).unwrap_err(),
            "the reply: `a` is required"
        );
        assert_eq!(
            check("```json\n{\"a\": \"x\"}\n```", &s).unwrap(),
            r#"{"a":"x"}"#
        );
        assert!(
            check("sure! {\"a\":1}", &s)
                .unwrap_err()
                .contains("not valid JSON")
        );
        // One line, keys in the model's order, strings untouched.
        assert_eq!(
            check("{ \"b\": null,\n \"a\": \"x \\\" y\" }", &s).unwrap(),
            r#"{"b":null,"a":"x \" y"}"#
        );
    }

    #[test]
    fn gemini_shape() {
        let s = parse("name str, tags [str]").unwrap();
        let g = gemini(&strict(&s));
        assert_eq!(g["type"], "OBJECT");
        assert_eq!(g["properties"]["tags"]["items"]["type"], "STRING");
        assert!(g.get("additionalProperties").is_none());
    }
}
