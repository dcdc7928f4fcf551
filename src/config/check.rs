//! Reading config.json into typed values key by key, so that an error names the key path
//! (`chat.system: expected a string, found 42`) instead of serde's bare "invalid type".
//!
//! Each key is deserialized on its own; when a struct or list fails inside, the failing field is
//! found from the line serde reports in a pretty-printed copy of the value (one field a line).

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// An error message that starts with the key path it is about.
pub(super) type Checked<T> = std::result::Result<T, String>;

/// `doc[key]` as a `T`, or `None` when missing (or `null`).
pub(super) fn key<T: DeserializeOwned>(doc: &Map<String, Value>, key: &str) -> Checked<Option<T>> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => typed(v, key).map(Some),
    }
}

/// `v` as a `T`; on failure the message names `path` and, inside an object, the field.
pub(super) fn typed<T: DeserializeOwned>(v: &Value, path: &str) -> Checked<T> {
    let err = match T::deserialize(v) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    if let Some((field, inner)) = failing_field::<T>(v) {
        return Err(format!(
            "{path}.{field}: {}",
            reword(&err.to_string(), inner)
        ));
    }
    Err(format!("{path}: {}", reword(&err.to_string(), v)))
}

/// The top-level field of the object `v` where deserializing a `T` fails, and its value.
fn failing_field<T: DeserializeOwned>(v: &Value) -> Option<(String, &Value)> {
    let Value::Object(map) = v else { return None };
    let pretty = serde_json::to_string_pretty(v).ok()?;
    let line = serde_json::from_str::<T>(&pretty).err()?.line();
    // In serde_json's pretty form each top-level field starts a line with two spaces and a key.
    let mut found = None;
    for text in pretty.lines().take(line) {
        if let Some(rest) = text.strip_prefix("  \"")
            && let Some(Ok(name)) = serde_json::Deserializer::from_str(&format!("\"{rest}"))
                .into_iter::<String>()
                .next()
        {
            found = Some(name);
        }
    }
    let name = found?;
    let inner = map.get(&name)?;
    // An unknown field is reported by serde with its name already: the path stops at `v`.
    serde_json::from_str::<T>(&pretty)
        .err()
        .filter(|e| !e.to_string().starts_with("unknown field"))?;
    Some((name, inner))
}

/// serde's "invalid type: integer `42`, expected a string" as "expected a string, found 42",
/// with the value shown short: `v` itself when it is a plain value (it is what failed), else
/// the value serde names (an element inside a list or object).
fn reword(msg: &str, v: &Value) -> String {
    let msg = match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    };
    let Some((head, expected)) = msg.split_once(", expected ") else {
        return msg.to_owned();
    };
    let Some(unexpected) = head
        .strip_prefix("invalid type: ")
        .or_else(|| head.strip_prefix("invalid value: "))
    else {
        return msg.to_owned();
    };
    let found = match v {
        Value::Array(_) | Value::Object(_) => named(unexpected),
        _ => show(v),
    };
    format!("expected {expected}, found {found}")
}

/// serde's name of an unexpected value (`integer `5``, `string "x"`, `map`) said short.
fn named(unexpected: &str) -> String {
    let quoted = |s: &str| s.trim_matches('`').to_owned();
    let text = if let Some(n) = unexpected.strip_prefix("integer ") {
        quoted(n)
    } else if let Some(f) = unexpected.strip_prefix("floating point ") {
        let f = quoted(f);
        f.parse::<f64>().map_or(f, |x| show(&serde_json::json!(x)))
    } else if let Some(b) = unexpected.strip_prefix("boolean ") {
        quoted(b)
    } else if let Some(s) = unexpected.strip_prefix("string ") {
        s.to_owned()
    } else if unexpected == "map" {
        "an object".to_owned()
    } else if unexpected == "sequence" {
        "a list".to_owned()
    } else {
        unexpected.to_owned()
    };
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// A value as it would be written, cut to a length fit for a message. Numbers too large for a
/// whole number are shown in exponent form (never 300 digits).
pub(super) fn show(v: &Value) -> String {
    let text = match v {
        Value::Number(n) if n.as_u64().is_none() && n.as_i64().is_none() => {
            let f = n.as_f64().unwrap_or(0.0);
            if f.abs() >= 1e16 {
                format!("{f:e}")
            } else {
                f.to_string()
            }
        }
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        _ => v.to_string(),
    };
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// A whole number (`8000`, `8000.0`, `1e12`) of at least `min`.
pub(super) fn whole(v: &Value, path: &str, min: u64) -> Checked<u64> {
    let n = match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
                .map(|f| f as u64)
        }),
        _ => None,
    };
    match n {
        Some(n) if n >= min => Ok(n),
        _ => Err(format!(
            "{path}: expected a whole number{}, found {}",
            if min > 0 { " above 0" } else { "" },
            show(v)
        )),
    }
}

/// An object whose every entry is a `T`, each checked with `check(entry, "path.name")`.
pub(super) fn map_of<T>(
    doc: &Map<String, Value>,
    key: &str,
    check: impl Fn(&Value, &str) -> Checked<T>,
) -> Checked<BTreeMap<String, T>> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, v)| Ok((name.clone(), check(v, &format!("{key}.{name}"))?)))
            .collect(),
        Some(v) => Err(format!("{key}: expected an object, found {}", show(v))),
    }
}

/// `v` as an object (for sections such as `chat`).
pub(super) fn object<'a>(
    v: Option<&'a Value>,
    path: &str,
) -> Checked<Option<&'a Map<String, Value>>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(v) => Err(format!("{path}: expected an object, found {}", show(v))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct S {
        name: String,
        #[serde(default)]
        args: Vec<String>,
    }

    #[test]
    fn names_the_field() {
        let e = typed::<S>(&json!({"name": "x", "args": ["a", 5]}), "backends.b").unwrap_err();
        assert_eq!(e, "backends.b.args: expected a string, found 5");
        let e = typed::<S>(&json!({"name": 3}), "b").unwrap_err();
        assert_eq!(e, "b.name: expected a string, found 3");
        let e = typed::<S>(&json!({"name": "x", "nme": 1}), "b").unwrap_err();
        assert!(e.starts_with("b: unknown field `nme`"), "{e}");
        let e = typed::<String>(&json!(42), "chat.system").unwrap_err();
        assert_eq!(e, "chat.system: expected a string, found 42");
    }

    #[test]
    fn numbers() {
        assert_eq!(whole(&json!(1e12), "w", 1), Ok(1_000_000_000_000));
        assert_eq!(whole(&json!(8000.0), "w", 1), Ok(8000));
        assert!(whole(&json!(1.5), "w", 1).is_err());
        assert!(whole(&json!(0), "w", 1).is_err());
        assert!(whole(&json!(-1), "w", 0).is_err());
        assert_eq!(show(&json!(1e300)), "1e300");
        assert!(show(&json!("x".repeat(100))).chars().count() <= 41);
    }
}
