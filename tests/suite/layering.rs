//! The module layering (issue 9): no top-level module of `src/` imports, directly or through
//! others, a module that imports it back. Read from the sources (`crate::NAME` paths outside
//! test code), so a new import that closes a cycle fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

fn top_module(rel: &Path) -> String {
    let first = rel.components().next().unwrap();
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_owned()
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| top_module(f.strip_prefix(&src).unwrap()))
        .collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        // Unit tests kept in files of their own (`x_tests.rs`, `x/tests.rs`) are test code.
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let from = top_module(f.strip_prefix(&src).unwrap());
        let text = fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name != from && modules.contains(&name) {
                uses.entry(from.clone()).or_default().insert(name);
            }
        }
    }
    // Every module that reaches itself again is on a cycle.
    let mut cycles = Vec::new();
    for start in uses.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = uses[start].iter().collect();
        while let Some(m) = stack.pop() {
            if m == start {
                cycles.push(start.clone());
                break;
            }
            if seen.insert(m.clone()) {
                stack.extend(uses.get(m).into_iter().flatten());
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "modules on an import cycle: {cycles:?}\nimports: {uses:#?}"
    );
}
