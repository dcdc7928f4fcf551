//! A tools file (`--tools-file FILE`, or config `tools.file`): domain tools declared as data,
//! each resolving to a JSON pointer in the `--data` documents, optionally joined with a
//! document of descriptions.
//!
//! ```json
//! {"documents": {"waits": "wait_descriptions.json"},
//!  "tools": [
//!   {"name": "get_sql_stats", "description": "Statistics of one SQL statement",
//!    "parameters": {"type": "object", "properties": {"sql_id": {"type": "string"}},
//!                   "required": ["sql_id"]},
//!    "pointer": "/sql/{sql_id}"},
//!   {"name": "get_wait_event", "description": "One wait event, with its description",
//!    "parameters": {"type": "object", "properties": {"event_name": {"type": "string"}},
//!                   "required": ["event_name"]},
//!    "pointer": "/waits/{event_name}",
//!    "join": {"document": "waits", "pointer": "/{event_name}", "as": "description"}}]}
//! ```
//!
//! Paths of `documents` are relative to the tools file.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::data::Tree;
use super::json::{self as doc, Document};
use crate::error::{Error, Result};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    #[serde(default)]
    documents: BTreeMap<String, String>,
    tools: Vec<ToolSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolSpec {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    parameters: Option<Value>,
    pointer: String,
    #[serde(default)]
    join: Option<JoinSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct JoinSpec {
    /// A name under `documents`, or `primary` / `secondary`.
    document: String,
    pointer: String,
    /// The key the joined value gets in the result (default `description`).
    #[serde(default, rename = "as")]
    field: Option<String>,
}

/// One domain tool, ready to run.
#[derive(Debug)]
pub(crate) struct DomainTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) parameters: Value,
    pub(crate) pointer: String,
    join: Option<(JoinSpec, usize)>,
}

/// The tools of a file, and the documents its joins read.
#[derive(Debug, Default)]
pub(crate) struct Domain {
    pub(crate) tools: Vec<DomainTool>,
    joined: Vec<Tree>,
}

/// Arguments every domain tool gets from `ai` itself; no placeholder or parameter may take
/// their names.
const RESERVED_ARGS: &[&str] = &["document"];

pub(crate) use crate::config::tools::valid_tool_name as valid_name;

/// Read a tools file. `two`: two `--data` documents were given (the tools then take a
/// `document` argument).
pub(crate) fn load(path: &Path, two: bool, reserved: &[&str]) -> Result<Domain> {
    let bad = |what: String| {
        Error::usage(format!("invalid tools file {}: {what}", path.display()))
            .hint("see \"Tool calling\" in the README for its shape")
    };
    let value = doc::read_value(path)?;
    let spec: FileSpec = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut names: Vec<&String> = Vec::new();
    let mut joined_names: Vec<&String> = Vec::new();
    let mut joined = Vec::new();
    for (name, file) in &spec.documents {
        let p = base.join(file);
        joined.push(doc::read(&p)?);
        joined_names.push(name);
    }
    let mut tools = Vec::new();
    for t in &spec.tools {
        if !valid_name(&t.name) {
            return Err(bad(format!(
                "tool name {:?}: use letters, digits, _ and - (at most 64)",
                t.name
            )));
        }
        if names.contains(&&t.name) {
            return Err(bad(format!("tool {} is declared twice", t.name)));
        }
        if reserved.contains(&t.name.as_str()) {
            return Err(bad(format!(
                "tool {} has the name of one of ai's own tools; give it another name",
                t.name
            )));
        }
        names.push(&t.name);
        let mut parameters = t
            .parameters
            .clone()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        if !parameters.is_object() {
            return Err(bad(format!("{}.parameters: expected an object", t.name)));
        }
        // Every placeholder of the pointer is a required string parameter.
        let mut wanted = placeholders(&t.pointer);
        if let Some(j) = &t.join {
            wanted.extend(placeholders(&j.pointer));
        }
        // `document` is ai's own argument (which `--data` document to read): a placeholder or
        // a parameter of that name could never reach the pointer.
        for arg in RESERVED_ARGS {
            if wanted.iter().any(|w| w == arg) {
                return Err(bad(format!(
                    "{}: the placeholder {{{arg}}} is the name of ai's own argument `{arg}` \
                     (which --data document to read); rename it, e.g. {{{arg}_id}}",
                    t.name
                )));
            }
            if parameters
                .get("properties")
                .and_then(|p| p.get(arg))
                .is_some()
            {
                return Err(bad(format!(
                    "{}.parameters: `{arg}` is ai's own argument (which --data document to \
                     read); give the parameter another name",
                    t.name
                )));
            }
        }
        let obj = parameters
            .as_object_mut()
            .ok_or_else(|| bad(String::new()))?;
        obj.entry("type").or_insert_with(|| json!("object"));
        let props = obj
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(props) = props.as_object_mut() {
            for w in &wanted {
                props
                    .entry(w.clone())
                    .or_insert_with(|| json!({"type": "string"}));
            }
            props
                .entry("document")
                .or_insert_with(|| doc::document_property(two));
        }
        let req = obj.entry("required").or_insert_with(|| json!([]));
        if let Some(req) = req.as_array_mut() {
            for w in &wanted {
                if !req.iter().any(|r| r.as_str() == Some(w)) {
                    req.push(json!(w));
                }
            }
        }
        let join = match &t.join {
            None => None,
            Some(j) => {
                let at = match j.document.as_str() {
                    "primary" => usize::MAX,
                    "secondary" => usize::MAX - 1,
                    name => joined_names
                        .iter()
                        .position(|n| n.as_str() == name)
                        .ok_or_else(|| {
                            bad(format!(
                                "{}.join.document: no document named {name} under \"documents\"",
                                t.name
                            ))
                        })?,
                };
                Some((j.clone(), at))
            }
        };
        tools.push(DomainTool {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters,
            pointer: t.pointer.clone(),
            join,
        });
    }
    Ok(Domain { tools, joined })
}

fn placeholders(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let name = after[..close].to_owned();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
        rest = &after[close + 1..];
    }
    out
}

impl Domain {
    /// Run a domain tool: the value its pointer resolves to in each chosen document, joined
    /// when it says so. `Err` is an error result (`not found: …`).
    pub(crate) fn run(
        &self,
        tool: &DomainTool,
        docs: &[Document],
        args: &Map<String, Value>,
    ) -> std::result::Result<(String, String), String> {
        let pointer = doc::fill(&tool.pointer, args)?;
        let chosen = doc::choose(docs, &Value::Object(args.clone()))?;
        let mut results = Vec::new();
        let mut missing = Vec::new();
        for d in &chosen {
            match d.value.root().pointer(&pointer) {
                Some(v) => {
                    let shown = match &tool.join {
                        None => doc::show(v),
                        Some((j, at)) => {
                            let source = match *at {
                                usize::MAX => {
                                    docs.iter().find(|d| d.label == "primary").map(|d| &d.value)
                                }
                                x if x == usize::MAX - 1 => docs
                                    .iter()
                                    .find(|d| d.label == "secondary")
                                    .map(|d| &d.value),
                                i => self.joined.get(i),
                            };
                            let jp = doc::fill(&j.pointer, args)?;
                            let extra = source.and_then(|s| s.root().pointer(&jp));
                            let key = j.field.as_deref().unwrap_or("description");
                            doc::show_joined(v, key, extra)
                        }
                    };
                    results.push((*d, shown));
                }
                None => missing.push(d.label),
            }
        }
        let what = args
            .iter()
            .filter(|(k, _)| k.as_str() != "document")
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k} {s:?}"),
                other => format!("{k} {other}"),
            })
            .collect::<Vec<_>>()
            .join(", ");
        if results.is_empty() {
            return Err(format!(
                "not found: {what} ({pointer} is not in the {} document)",
                missing.join(" or ")
            ));
        }
        for label in missing {
            if let Some(d) = docs.iter().find(|d| d.label == label) {
                results.push((d, format!("not found: {what} ({pointer})")));
            }
        }
        // Labelled in document order.
        results.sort_by_key(|(d, _)| d.label != "primary");
        Ok((doc::labelled(results), pointer))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    fn domain(dir: &Path, two: bool) -> Domain {
        let f = dir.join("tools.json");
        std::fs::write(
            &f,
            r#"{"tools": [{"name": "get_sql_stats", "description": "d", "pointer": "/sql/{sql_id}"}]}"#,
        )
        .unwrap();
        load(&f, two, &[]).unwrap()
    }

    fn docs(
        primary: &BTreeMap<String, i64>,
        secondary: Option<&BTreeMap<String, i64>>,
    ) -> Vec<Document> {
        let mut out = vec![Document {
            label: "primary",
            path: "a.json".into(),
            value: Tree::of(&json!({"sql": primary})),
        }];
        if let Some(s) = secondary {
            out.push(Document {
                label: "secondary",
                path: "b.json".into(),
                value: Tree::of(&json!({"sql": s})),
            });
        }
        out
    }

    fn args(id: &str, document: Option<&str>) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("sql_id".into(), json!(id));
        if let Some(d) = document {
            m.insert("document".into(), json!(d));
        }
        m
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every identifier present returns its value; every absent one, "not found".
        #[test]
        fn present_ids_return_their_value_and_absent_ones_not_found(
            present in proptest::collection::btree_map("[a-z0-9/~ ._-]{1,12}", any::<i64>(), 0..12),
            absent in proptest::collection::vec("[a-z0-9/~ ._-]{1,12}", 0..8),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let d = domain(dir.path(), false);
            let tool = &d.tools[0];
            let docs = docs(&present, None);
            for (id, v) in &present {
                let (text, _) = d.run(tool, &docs, &args(id, None)).unwrap();
                prop_assert_eq!(text, v.to_string());
            }
            for id in absent.iter().filter(|a| !present.contains_key(*a)) {
                let e = d.run(tool, &docs, &args(id, None)).unwrap_err();
                prop_assert!(e.starts_with("not found: "), "{}", e);
            }
        }

        /// `both` returns a labelled result from each document.
        #[test]
        fn both_returns_labelled_results_from_both(
            first in proptest::collection::btree_map("[a-z0-9]{1,8}", any::<i64>(), 1..10),
            second in proptest::collection::btree_map("[a-z0-9]{1,8}", any::<i64>(), 1..10),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let d = domain(dir.path(), true);
            let tool = &d.tools[0];
            let docs = docs(&first, Some(&second));
            for (id, v) in &first {
                let (text, _) = d.run(tool, &docs, &args(id, Some("both"))).unwrap();
                prop_assert!(text.starts_with("[primary: a.json]\n"), "{}", text);
                prop_assert!(text.contains(&format!("[primary: a.json]\n{v}")), "{}", text);
                prop_assert!(text.contains("[secondary: b.json]\n"), "{}", text);
                match second.get(id) {
                    Some(w) => prop_assert!(text.ends_with(&format!("[secondary: b.json]\n{w}")), "{}", text),
                    None => prop_assert!(text.contains("[secondary: b.json]\nnot found: "), "{}", text),
                }
                let (only, _) = d.run(tool, &docs, &args(id, Some("primary"))).unwrap();
                prop_assert_eq!(only, v.to_string());
            }
            for (id, w) in &second {
                let (text, _) = d.run(tool, &docs, &args(id, Some("secondary"))).unwrap();
                prop_assert_eq!(text, w.to_string());
            }
        }
    }

    #[test]
    fn a_bad_tools_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.json");
        for (text, want) in [
            (
                r#"{"tools": [{"name": "a b", "pointer": "/x"}]}"#,
                "tool name \"a b\"",
            ),
            (
                r#"{"tools": [{"name": "a", "pointer": "/x"}, {"name": "a", "pointer": "/y"}]}"#,
                "declared twice",
            ),
            (r#"{"tools": [{"name": "a"}]}"#, "missing field `pointer`"),
            (
                r#"{"tools": [{"name": "a", "pointer": "/{x}", "join": {"document": "nope", "pointer": "/"}}]}"#,
                "no document named nope",
            ),
            (r#"{"tools": [], "extra": 1}"#, "unknown field `extra`"),
            (
                r#"{"tools": [{"name": "get_doc", "pointer": "/sql/{document}"}]}"#,
                "get_doc: the placeholder {document} is the name of ai's own argument `document`",
            ),
            (
                r#"{"tools": [{"name": "a", "pointer": "/x/{id}", "join": {"document": "primary", "pointer": "/{document}"}}]}"#,
                "rename it, e.g. {document_id}",
            ),
            (
                r#"{"tools": [{"name": "a", "pointer": "/x", "parameters": {"type": "object", "properties": {"document": {"type": "string"}}}}]}"#,
                "a.parameters: `document` is ai's own argument",
            ),
        ] {
            std::fs::write(&f, text).unwrap();
            let e = load(&f, false, &[]).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        std::fs::write(
            &f,
            r#"{"tools": [{"name": "json_value", "pointer": "/x"}]}"#,
        )
        .unwrap();
        let e = load(&f, false, &["json_value"]).unwrap_err().to_string();
        assert!(e.contains("one of ai's own tools"), "{e}");
    }
}
