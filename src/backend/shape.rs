//! The shapes a `--schema` takes on the wire: OpenAI's strict mode, Gemini's OpenAPI subset,
//! the forced tool of Anthropic and Bedrock; and the schema a reply is checked against. Plain
//! functions over JSON, below the protocols that use them.

use serde_json::{Map, Value, json};

/// The name of the tool a model is made to call where the schema goes through a forced tool
/// (Anthropic, Bedrock).
pub(crate) const TOOL: &str = "json_reply";

/// What that tool is, for the model.
pub(crate) const TOOL_DESCRIPTION: &str =
    "Give your answer: its input is the reply, as JSON that fits the schema.";

/// OpenAI's strict mode: every object lists all its properties as required and allows no
/// others; a property that was optional may be `null` instead.
pub(crate) fn strict(schema: &Value) -> Value {
    map_objects(schema, 0, &|obj| {
        let Some(props) = obj.get("properties").and_then(Value::as_object).cloned() else {
            return;
        };
        let required: Vec<String> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let mut new_props = Map::new();
        for (k, mut v) in props {
            if !required.contains(&k) {
                nullable(&mut v);
            }
            new_props.insert(k, v);
        }
        // The required ones in their order, then the others.
        let all: Vec<Value> = required
            .iter()
            .filter(|k| new_props.contains_key(*k))
            .cloned()
            .chain(new_props.keys().filter(|k| !required.contains(k)).cloned())
            .map(Value::String)
            .collect();
        obj.insert("properties".into(), Value::Object(new_props));
        obj.insert("required".into(), Value::Array(all));
        obj.insert("additionalProperties".into(), Value::Bool(false));
    })
}

/// The schema a reply is checked against: the user's, where an optional property may also be
/// `null` (as strict mode sends it).
pub(crate) fn lenient(schema: &Value) -> Value {
    map_objects(schema, 0, &|obj| {
        let required: Vec<String> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            for (k, v) in props.iter_mut() {
                if !required.contains(k) {
                    nullable(v);
                }
            }
        }
    })
}

fn nullable(v: &mut Value) {
    let Some(o) = v.as_object_mut() else { return };
    match o.get("type").cloned() {
        Some(Value::String(t)) if t != "null" => {
            o.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(mut a)) if !a.contains(&json!("null")) => {
            a.push(json!("null"));
            o.insert("type".into(), Value::Array(a));
        }
        _ => {}
    }
}

/// Gemini's `responseSchema` (an OpenAPI subset): upper-case types, `nullable` for a `null`
/// type, and only the keys it knows.
pub(crate) fn gemini(schema: &Value) -> Value {
    const KEEP: [&str; 10] = [
        "description",
        "enum",
        "format",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "required",
        "nullable",
        "propertyOrdering",
    ];
    fn walk(v: &Value, depth: usize) -> Value {
        let Some(o) = v.as_object() else {
            return v.clone();
        };
        let mut out = Map::new();
        if depth > 32 {
            return Value::Object(out);
        }
        match o.get("type") {
            Some(Value::String(t)) => {
                out.insert("type".into(), json!(t.to_uppercase()));
            }
            Some(Value::Array(a)) => {
                let types: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
                if let Some(t) = types.iter().find(|t| **t != "null") {
                    out.insert("type".into(), json!(t.to_uppercase()));
                }
                if types.contains(&"null") {
                    out.insert("nullable".into(), json!(true));
                }
            }
            _ => {}
        }
        for k in KEEP {
            if let Some(x) = o.get(k) {
                out.insert(k.into(), x.clone());
            }
        }
        if let Some(Value::Object(p)) = o.get("properties") {
            let props: Map<String, Value> = p
                .iter()
                .map(|(k, s)| (k.clone(), walk(s, depth + 1)))
                .collect();
            out.insert("properties".into(), Value::Object(props));
        }
        if let Some(items) = o.get("items") {
            out.insert("items".into(), walk(items, depth + 1));
        }
        Value::Object(out)
    }
    walk(schema, 0)
}

/// Apply `f` to every object schema, depth first (properties and items).
fn map_objects(schema: &Value, depth: usize, f: &dyn Fn(&mut Map<String, Value>)) -> Value {
    let mut v = schema.clone();
    if depth > 32 {
        return v;
    }
    if let Some(o) = v.as_object_mut() {
        if let Some(Value::Object(props)) = o.get_mut("properties") {
            for (_, p) in props.iter_mut() {
                *p = map_objects(p, depth + 1, f);
            }
        }
        if let Some(items) = o.get_mut("items") {
            *items = map_objects(items, depth + 1, f);
        }
        if o.get("type").and_then(Value::as_str) == Some("object") || o.contains_key("properties") {
            f(o);
        }
    }
    v
}
