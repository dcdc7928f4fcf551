//! The arguments of a tool call checked against the tool's parameters (a JSON schema): the
//! part of JSON Schema that tool parameters use — `type` (one or several), `properties`,
//! `required`, `enum`, `items`, `additionalProperties: false`, `minimum`/`maximum`. Anything
//! else in a schema is ignored, never refused: a model gets the benefit of the doubt.

use serde_json::Value;

/// How deep a schema is followed, at most (a schema may be written by anyone).
const MAX_DEPTH: usize = 32;

/// `Ok` when `value` fits `schema`; else why not, naming the place (`sql_id: expected a string`).
pub(crate) fn check(value: &Value, schema: &Value) -> Result<(), String> {
    walk(value, schema, "", 0)
}

fn at(path: &str) -> String {
    if path.is_empty() {
        "the arguments".to_owned()
    } else {
        path.to_owned()
    }
}

fn walk(value: &Value, schema: &Value, path: &str, depth: usize) -> Result<(), String> {
    let Some(s) = schema.as_object() else {
        return Ok(());
    };
    if depth > MAX_DEPTH {
        return Ok(());
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(t) => vec![t.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() && !types.iter().any(|t| is_type(value, t)) {
            return Err(format!(
                "{}: expected {}, found {}",
                at(path),
                types.join(" or "),
                kind(value)
            ));
        }
    }
    if let Some(Value::Array(options)) = s.get("enum")
        && !options.contains(value)
    {
        let shown: Vec<String> = options.iter().take(20).map(Value::to_string).collect();
        return Err(format!(
            "{}: expected one of {}",
            at(path),
            shown.join(", ")
        ));
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = s.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("{}: {n} is below the minimum {min}", at(path)));
        }
        if let Some(max) = s.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("{}: {n} is above the maximum {max}", at(path)));
        }
    }
    match value {
        Value::Object(obj) => {
            let props = s.get("properties").and_then(Value::as_object);
            if let Some(Value::Array(req)) = s.get("required") {
                for name in req.iter().filter_map(Value::as_str) {
                    if !obj.contains_key(name) {
                        return Err(format!("{}: `{name}` is required", at(path)));
                    }
                }
            }
            for (k, v) in obj {
                let child = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match props.and_then(|p| p.get(k)) {
                    Some(sub) => walk(v, sub, &child, depth + 1)?,
                    None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        let known: Vec<&str> = props
                            .map(|p| p.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        return Err(format!(
                            "{}: unknown argument `{k}` (it takes: {})",
                            at(path),
                            if known.is_empty() {
                                "none".to_owned()
                            } else {
                                known.join(", ")
                            }
                        ));
                    }
                    None => {}
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            if let Some(sub) = s.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(v, sub, &format!("{}[{i}]", at(path)), depth + 1)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => true,
    }
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_usual_checks() {
        let s = json!({"type":"object","properties":{
            "q":{"type":"string"},
            "n":{"type":"integer","minimum":1,"maximum":20},
            "doc":{"type":"string","enum":["primary","secondary","both"]}},
            "required":["q"],"additionalProperties":false});
        assert!(check(&json!({"q":"x","n":3,"doc":"both"}), &s).is_ok());
        assert_eq!(
            check(&json!({}), &s).unwrap_err(),
            "the arguments: `q` is required"
        );
        assert_eq!(
            check(&json!({"q":1}), &s).unwrap_err(),
            "q: expected string, found a number"
        );
        assert!(check(&json!({"q":"x","n":0}), &s).is_err());
        assert!(check(&json!({"q":"x","n":2.5}), &s).is_err());
        assert!(check(&json!({"q":"x","doc":"third"}), &s).is_err());
        assert!(
            check(&json!({"q":"x","zz":1}), &s)
                .unwrap_err()
                .contains("unknown argument `zz`")
        );
        assert!(check(&json!([1]), &s).is_err());
        // Whatever a schema holds besides, nothing breaks.
        assert!(
            check(
                &json!({"a":[1,2]}),
                &json!({"properties":{"a":{"items":7}}})
            )
            .is_ok()
        );
        assert!(check(&json!(1), &json!("nonsense")).is_ok());
    }
}
