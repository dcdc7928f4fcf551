//! The module layering (issue 9): no top-level module of `src/` imports, directly or through
//! others, a module that imports it back. Read from the sources (`crate::NAME` paths outside
//! test code), so a new import that closes a cycle fails here. The same holds inside each folder,
//! between the files of one module (R2-8 of review-2).

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

/// The module path of a source file: `src/kb/store.rs` is `[kb, store]`, `src/kb/mod.rs` is
/// `[kb]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut path: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = path.pop().unwrap();
    if last != "mod.rs" {
        path.push(last.trim_end_matches(".rs").to_owned());
    }
    path
}

fn ident(code: &str) -> &str {
    let end = code
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(code.len());
    &code[..end]
}

/// The paths a use tree (or an expression path) starting at `code` names, below `base`:
/// `a::b`, `a::{b, c::d}`, `{a, b}`. Only the leading segments matter here.
fn use_paths(code: &str, base: &[String], out: &mut Vec<Vec<String>>) {
    let code = code.trim_start();
    if let Some(rest) = code.strip_prefix('{') {
        // Split the group's items at depth 1.
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    use_paths(&rest[start..i], base, out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_paths(&rest[start..i], base, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let name = ident(code);
    if name.is_empty() || name == "self" {
        out.push(base.to_vec());
        return;
    }
    let mut path = base.to_vec();
    path.push(name.to_owned());
    match code[name.len()..].strip_prefix("::") {
        Some(rest) => use_paths(rest, &path, out),
        None => out.push(path),
    }
}

/// The paths `code` (the file of module `from`) imports: `crate::…`, `super::…`,
/// `self::…`, groups included.
fn imports(code: &str, from: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        if code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        use_paths(&code[i + 7..], &[], &mut out);
    }
    for (i, _) in code.match_indices("super::") {
        let before = &code[..i];
        if before.ends_with("super::")
            || before.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let mut base = from.to_vec();
        let mut rest = &code[i..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        use_paths(rest, &base, &mut out);
    }
    for (i, _) in code.match_indices("self::") {
        if code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        use_paths(&code[i + 6..], from, &mut out);
    }
    out
}

/// Inside every folder of `src/` (`kb/`, `serve/`, …), no file imports, directly or through
/// its siblings, a sibling that imports it back: each helper lives in the file below the ones
/// that use it. Read from `crate::…`, `super::…` and `self::…` paths outside test code. A
/// folder's `mod.rs` is its parent, not a sibling, and is left out.
#[test]
fn no_file_imports_a_sibling_that_imports_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files
        .iter()
        .map(|f| module_path(f.strip_prefix(&src).unwrap()))
        .collect();
    // (folder, file) -> siblings it uses.
    let mut uses: BTreeMap<(Vec<String>, String), BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let from = module_path(f.strip_prefix(&src).unwrap());
        let text = fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        // Doc links (`[`super::call`]`) name a file without depending on it.
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for to in imports(&code, &from) {
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            // Only siblings below a folder: the top level is the other test's.
            if common == 0 || common >= from.len() || common >= to.len() {
                continue;
            }
            if !modules.contains(&to[..=common]) {
                continue;
            }
            let folder = from[..common].to_vec();
            uses.entry((folder, from[common].clone()))
                .or_default()
                .insert(to[common].clone());
        }
    }
    let mut cycles = Vec::new();
    for ((folder, start), used) in &uses {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = used.iter().collect();
        while let Some(m) = stack.pop() {
            if m == start {
                cycles.push(format!("{}/{start}", folder.join("/")));
                break;
            }
            if seen.insert(m.clone()) {
                stack.extend(uses.get(&(folder.clone(), m.clone())).into_iter().flatten());
            }
        }
    }
    let shown: BTreeMap<String, &BTreeSet<String>> = uses
        .iter()
        .filter(|((folder, file), _)| cycles.contains(&format!("{}/{file}", folder.join("/"))))
        .map(|((folder, file), used)| (format!("{}/{file}", folder.join("/")), used))
        .collect();
    assert!(
        cycles.is_empty(),
        "files on an import cycle inside their folder: {cycles:?}\nimports: {shown:#?}"
    );
}
