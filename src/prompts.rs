//! Saved prompts (`ai prompt …`, `-p NAME`): one plain file per prompt, found in
//! `<home>/prompts/` and then in the folders of config `prompts.dirs`, and filled in with the
//! call's input and `-v NAME=VALUE` variables.
//!
//! The file format (README, "Saved prompts"): Markdown, with an optional front matter between
//! `---` lines holding `description:`, `model:` and `system:` (one line, or `|` and indented
//! lines). The body is the template. `{input}` stands for the call's input; `{name}` is a
//! variable and `{name=default}` one with a default; `{{name}}` (fabric's style) is the same;
//! `\{` is a literal brace. Any other brace is text (JSON in a prompt stays as it is).
//!
//! In a `prompts.dirs` folder a prompt is `NAME.md` or `NAME.txt` (the same format), or a
//! fabric pattern: a folder `NAME/` with `system.md` (the system prompt) and, optionally,
//! `user.md` (the template).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::Config;
use crate::error::{Error, Result};

/// The largest prompt file read.
const MAX_FILE: u64 = 1024 * 1024;

/// A prompt, read.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Prompt {
    pub(crate) name: String,
    /// The file it was read from (a fabric pattern: its `system.md`).
    pub(crate) path: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    /// The model used when the call names none (for a new chat).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) system: Option<String>,
    pub(crate) template: String,
    /// Its variables, in order of first use, with their defaults.
    pub(crate) variables: Vec<Variable>,
    /// Read from `<home>/prompts/` (else from a `prompts.dirs` folder).
    #[serde(skip)]
    pub(crate) own: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Variable {
    pub(crate) name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) default: Option<String>,
}

/// A name is letters, digits, `_` and `-` (1 to 64): never a path.
pub(crate) fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !name.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "'{}' is not a prompt name",
            crate::output::sanitize(name)
        ))
        .hint("use letters, digits, _ and - (at most 64), e.g. summarize or fix-grammar"))
    }
}

/// `<home>/prompts`.
pub(crate) fn own_dir(home: &Path) -> PathBuf {
    home.join("prompts")
}

/// The folders of config `prompts.dirs`, `~/` expanded, relative ones from the home folder.
fn extra_dirs(home: &Path, config: &Config) -> Vec<PathBuf> {
    config
        .prompts
        .dirs
        .iter()
        .map(|d| {
            let s = d.to_string_lossy();
            match s.strip_prefix("~/") {
                Some(rest) => dirs::home_dir().map_or_else(|| d.clone(), |h| h.join(rest)),
                None if d.is_relative() => home.join(d),
                None => d.clone(),
            }
        })
        .collect()
}

/// Find prompt `name`: `<home>/prompts/NAME.md`, then each `prompts.dirs` folder in order.
pub(crate) fn find(home: &Path, config: &Config, name: &str) -> Result<Prompt> {
    check_name(name)?;
    let own = own_dir(home).join(format!("{name}.md"));
    if own.is_file() {
        return read_file(name, &own, true);
    }
    for dir in extra_dirs(home, config) {
        if let Some(p) = in_dir(&dir, name)? {
            return Ok(p);
        }
    }
    Err(
        Error::not_found(format!("no saved prompt '{name}'")).hint(format!(
            "`ai prompt list` shows them; save one with: ai prompt add {name} \"…{{input}}…\""
        )),
    )
}

/// A file of a `prompts.dirs` folder is read only when it is inside it once every link is
/// resolved: a link that leaves the folder is not followed (as a knowledge base does not).
fn inside(dir: &Path, path: &Path) -> Result<()> {
    let root = dir.canonicalize().map_err(|e| Error::io("read", dir, e))?;
    let real = path
        .canonicalize()
        .map_err(|e| Error::io("read", path, e))?;
    if real.starts_with(&root) {
        return Ok(());
    }
    Err(Error::usage(format!(
        "the prompt file {} links to {}, outside {}: ai does not follow links out of a prompts.dirs folder",
        path.display(),
        real.display(),
        root.display()
    ))
    .hint("copy the file into the folder, or add the folder it is in to \"prompts.dirs\" in config.json"))
}

/// Prompt `name` in a `prompts.dirs` folder, if there.
fn in_dir(dir: &Path, name: &str) -> Result<Option<Prompt>> {
    let pattern = dir.join(name);
    let system = pattern.join("system.md");
    if system.is_file() {
        inside(dir, &system)?;
        let system_text = read_text(&system)?;
        let user = pattern.join("user.md");
        let template = if user.is_file() {
            inside(dir, &user)?;
            read_text(&user)?
        } else {
            String::new()
        };
        let template = template.trim_end().to_owned();
        let system_text = system_text.trim_end().to_owned();
        let mut variables = scan(&template, &system, false)?;
        for v in scan(&system_text, &system, true)? {
            if !variables.iter().any(|w| w.name == v.name) {
                variables.push(v);
            }
        }
        return Ok(Some(Prompt {
            name: name.to_owned(),
            path: system,
            description: None,
            model: None,
            system: Some(system_text).filter(|s| !s.trim().is_empty()),
            template,
            variables,
            own: false,
        }));
    }
    for ext in ["md", "txt"] {
        let file = dir.join(format!("{name}.{ext}"));
        if file.is_file() {
            inside(dir, &file)?;
            return read_file(name, &file, false).map(Some);
        }
    }
    Ok(None)
}

fn read_text(path: &Path) -> Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| Error::io("read", path, e))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("read", path, e))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(Error::usage(format!(
            "the prompt file {} is larger than 1 MiB",
            path.display()
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!(
            "the prompt file {} is not UTF-8 text",
            path.display()
        ))
    })
}

fn read_file(name: &str, path: &Path, own: bool) -> Result<Prompt> {
    let text = read_text(path)?;
    parse(name, path, &text, own)
}

/// Read a prompt file's text (front matter and template).
pub(crate) fn parse(name: &str, path: &Path, text: &str, own: bool) -> Result<Prompt> {
    let bad = |what: String| {
        Error::usage(format!("prompt file {}: {what}", path.display())).hint(format!(
            "fix it with `ai prompt edit {name}` (the format is in the README, \"Saved prompts\")"
        ))
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut description = None;
    let mut model = None;
    let mut system: Option<String> = None;
    let body = match front_matter(text) {
        None => text,
        Some((head, body)) => {
            let lines: Vec<&str> = head.lines().collect();
            let mut i = 0;
            while i < lines.len() {
                let line = lines[i];
                i += 1;
                if line.trim().is_empty() || line.trim_start().starts_with('#') {
                    continue;
                }
                let Some((key, value)) = line.split_once(':') else {
                    return Err(bad(format!(
                        "front matter line '{}' is not `key: value`",
                        crate::output::sanitize(line.trim())
                    )));
                };
                let key = key.trim();
                let mut value = unquote(value.trim());
                if value == "|" || value == "|-" {
                    // A block: the indented lines that follow.
                    let mut block: Vec<&str> = Vec::new();
                    while i < lines.len()
                        && (lines[i].starts_with([' ', '\t']) || lines[i].trim().is_empty())
                    {
                        block.push(lines[i]);
                        i += 1;
                    }
                    let indent = block
                        .iter()
                        .filter(|l| !l.trim().is_empty())
                        .map(|l| l.len() - l.trim_start().len())
                        .min()
                        .unwrap_or(0);
                    value = block
                        .iter()
                        .map(|l| l.get(indent..).unwrap_or("").trim_end())
                        .collect::<Vec<_>>()
                        .join("\n")
                        .trim_end()
                        .to_owned();
                }
                let value = Some(value).filter(|v| !v.is_empty());
                match key {
                    "description" => description = value,
                    "model" => model = value,
                    "system" => system = value,
                    other => {
                        return Err(bad(format!(
                            "unknown front matter key '{}' (known: description, model, system)",
                            crate::output::sanitize(other)
                        )));
                    }
                }
            }
            body
        }
    };
    let template = body.trim_matches(['\n', '\r']).trim_end().to_owned();
    let mut variables = scan(&template, path, false)?;
    if let Some(s) = &system {
        for v in scan(s, path, true)? {
            if !variables.iter().any(|w| w.name == v.name) {
                variables.push(v);
            }
        }
    }
    Ok(Prompt {
        name: name.to_owned(),
        path: path.to_owned(),
        description,
        model,
        system,
        template,
        variables,
        own,
    })
}

/// `---\n…\n---\n` at the very start: (the lines between, the rest).
fn front_matter(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..at], &rest[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

fn unquote(v: &str) -> String {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_owned();
        }
    }
    v.to_owned()
}

/// One piece of a template.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    Text(&'a str),
    /// `\{`: a literal brace.
    Brace,
    Var {
        name: &'a str,
        default: Option<&'a str>,
    },
}

/// Split a template into text and placeholders: `{name}`, `{name=default}`, and the same in
/// double braces. A name starts with a letter or `_` and holds letters, digits, `_` and `-`;
/// a default holds no brace and no line break.
fn pieces(t: &str) -> Vec<Piece<'_>> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'{') {
            if start < i {
                out.push(Piece::Text(&t[start..i]));
            }
            out.push(Piece::Brace);
            i += 2;
            start = i;
            continue;
        }
        if b[i] != b'{' {
            i += 1;
            continue;
        }
        if let Some((len, name, default)) = placeholder(&t[i..]) {
            if start < i {
                out.push(Piece::Text(&t[start..i]));
            }
            out.push(Piece::Var { name, default });
            i += len;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < b.len() {
        out.push(Piece::Text(&t[start..]));
    }
    out
}

/// A placeholder at the start of `s`: its length, name and default.
fn placeholder(s: &str) -> Option<(usize, &str, Option<&str>)> {
    let double = s.starts_with("{{");
    let open = if double { 2 } else { 1 };
    let inner_start = open;
    let close = if double { "}}" } else { "}" };
    let end = s[inner_start..].find('}')? + inner_start;
    let inner = &s[inner_start..end];
    if inner.contains(['{', '\n', '\r']) || !s[end..].starts_with(close) {
        return None;
    }
    let (name, default) = match inner.split_once('=') {
        Some((n, d)) => (n.trim(), Some(d)),
        None => (inner.trim(), None),
    };
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '_')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        || name.len() > 64
    {
        return None;
    }
    Some((end + close.len(), name, default))
}

/// The variables of a template, in order of first use. In a system prompt `{input}` is an
/// error: the input is data, never part of the system role.
fn scan(template: &str, path: &Path, system: bool) -> Result<Vec<Variable>> {
    let mut out: Vec<Variable> = Vec::new();
    for p in pieces(template) {
        let Piece::Var { name, default } = p else {
            continue;
        };
        if name == "input" {
            if system {
                return Err(Error::usage(format!(
                    "prompt file {}: the system prompt holds {{input}}",
                    path.display()
                ))
                .hint("put {input} in the template (the body), not in system:"));
            }
            continue;
        }
        match out.iter_mut().find(|v| v.name == name) {
            Some(v) => {
                if v.default.is_none() {
                    v.default = default.map(str::to_owned);
                }
            }
            None => out.push(Variable {
                name: name.to_owned(),
                default: default.map(str::to_owned),
            }),
        }
    }
    Ok(out)
}

/// Does the template use `{input}`?
fn uses_input(template: &str) -> bool {
    pieces(template)
        .iter()
        .any(|p| matches!(p, Piece::Var { name: "input", .. }))
}

/// `-v NAME=VALUE`, split.
pub(crate) fn parse_var(s: &str) -> std::result::Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
        _ => Err(format!("'{s}' is not NAME=VALUE (e.g. -v lang=German)")),
    }
}

/// The prompt filled in: (system prompt, the text sent as the user's prompt).
#[derive(Debug)]
pub(crate) struct Filled {
    pub(crate) system: Option<String>,
    pub(crate) text: String,
}

impl Prompt {
    /// Fill in the variables and the input. `input` is the call's input (files, standard
    /// input and prompt words, joined as for any call). Without `{input}` in the template, the
    /// input follows it after a blank line. `attached`: the call sends attachments, which are
    /// input enough for `{input}` to stand empty.
    pub(crate) fn fill(
        &self,
        vars: &[(String, String)],
        input: &str,
        attached: bool,
    ) -> Result<Filled> {
        let names = || {
            if self.variables.is_empty() {
                "it has none".to_owned()
            } else {
                let list: Vec<String> = self
                    .variables
                    .iter()
                    .map(|v| match &v.default {
                        Some(d) => format!("{}={}", v.name, d),
                        None => v.name.clone(),
                    })
                    .collect();
                format!("it has: {}", list.join(", "))
            }
        };
        for (k, _) in vars {
            if k == "input" {
                return Err(Error::usage(
                    "-v input=… is not a variable: {input} is the call's input",
                )
                .hint("give the input as prompt words or on standard input"));
            }
            if !self.variables.iter().any(|v| &v.name == k) {
                return Err(Error::usage(format!(
                    "prompt '{}' has no variable '{}' ({})",
                    self.name,
                    crate::output::sanitize(k),
                    names()
                ))
                .hint(format!("`ai prompt show {}` shows the prompt", self.name)));
            }
        }
        let missing: Vec<&str> = self
            .variables
            .iter()
            .filter(|v| v.default.is_none() && !vars.iter().any(|(k, _)| k == &v.name))
            .map(|v| v.name.as_str())
            .collect();
        if !missing.is_empty() {
            let example: Vec<String> = missing.iter().map(|m| format!("-v {m}=…")).collect();
            return Err(Error::usage(format!(
                "prompt '{}' needs {} ({})",
                self.name,
                missing
                    .iter()
                    .map(|m| format!("'{m}'"))
                    .collect::<Vec<_>>()
                    .join(", "),
                names()
            ))
            .hint(format!(
                "give it: ai -p {} {} \"…\"",
                self.name,
                example.join(" ")
            )));
        }
        let value = |name: &str, default: Option<&str>| -> String {
            vars.iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .or_else(|| {
                    self.variables
                        .iter()
                        .find(|v| v.name == name)
                        .and_then(|v| v.default.clone())
                })
                .or_else(|| default.map(str::to_owned))
                .unwrap_or_default()
        };
        let render = |t: &str, input: Option<&str>| -> String {
            let mut out = String::with_capacity(t.len() + input.map_or(0, str::len));
            for p in pieces(t) {
                match p {
                    Piece::Text(s) => out.push_str(s),
                    Piece::Brace => out.push('{'),
                    Piece::Var { name: "input", .. } => out.push_str(input.unwrap_or("")),
                    Piece::Var { name, default } => out.push_str(&value(name, default)),
                }
            }
            out
        };
        let has_input = !input.trim().is_empty();
        let text = if uses_input(&self.template) {
            if !has_input && !attached {
                return Err(Error::usage(format!(
                    "prompt '{}' needs input ({{input}}), and none was given",
                    self.name
                ))
                .hint(format!(
                    "pipe it in or give words: cat notes.txt | ai -p {0}, or ai -p {0} \"…\"",
                    self.name
                )));
            }
            render(&self.template, Some(input))
        } else {
            let mut t = render(&self.template, None);
            if has_input {
                if !t.trim().is_empty() {
                    t.push_str("\n\n");
                }
                t.push_str(input);
            }
            t
        };
        Ok(Filled {
            system: self
                .system
                .as_deref()
                .map(|s| render(s, None))
                .filter(|s| !s.trim().is_empty()),
            text,
        })
    }

    /// The prompt in the file format of `<home>/prompts/` (what `prompt show` prints, and
    /// `prompt add` reads back).
    pub(crate) fn to_file(&self) -> String {
        let mut head = String::new();
        let line = |head: &mut String, key: &str, v: &Option<String>| {
            if let Some(v) = v {
                if v.contains('\n') {
                    head.push_str(&format!("{key}: |\n"));
                    for l in v.lines() {
                        head.push_str(&format!("  {l}\n"));
                    }
                } else {
                    head.push_str(&format!("{key}: {v}\n"));
                }
            }
        };
        line(&mut head, "description", &self.description);
        line(&mut head, "model", &self.model);
        line(&mut head, "system", &self.system);
        if head.is_empty() && front_matter(&self.template).is_none() {
            format!("{}\n", self.template)
        } else {
            format!("---\n{head}---\n{}\n", self.template)
        }
    }
}

/// Every prompt that `-p` can find, by name (a name found twice: the first, as `find` would).
pub(crate) fn list(home: &Path, config: &Config) -> Vec<std::result::Result<Prompt, String>> {
    let mut out: Vec<std::result::Result<Prompt, String>> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut take = |name: String, r: Result<Option<Prompt>>| {
        if seen.contains(&name) {
            return;
        }
        match r {
            Ok(Some(p)) => {
                seen.push(name);
                out.push(Ok(p));
            }
            Ok(None) => {}
            Err(e) => {
                seen.push(name.clone());
                out.push(Err(format!("{name}: {e}")));
            }
        }
    };
    let names_in = |dir: &Path, fabric: bool| -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let file = e.file_name().to_string_lossy().into_owned();
                let path = e.path();
                let name = if fabric && path.join("system.md").is_file() {
                    file
                } else {
                    let (stem, ext) = file.rsplit_once('.')?;
                    if !(ext == "md" || (fabric && ext == "txt")) || !path.is_file() {
                        return None;
                    }
                    stem.to_owned()
                };
                check_name(&name).is_ok().then_some(name)
            })
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let own = own_dir(home);
    for name in names_in(&own, false) {
        let path = own.join(format!("{name}.md"));
        let r = read_file(&name, &path, true).map(Some);
        take(name, r);
    }
    for dir in extra_dirs(home, config) {
        for name in names_in(&dir, true) {
            let r = in_dir(&dir, &name);
            take(name, r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(text: &str) -> Prompt {
        parse("t", Path::new("t.md"), text, true).unwrap()
    }

    #[test]
    fn placeholders_and_literals() {
        let p = prompt("Translate to {lang=German} in {{style}}: {input}\n{\"a\": 1} \\{x} {x y}");
        assert_eq!(
            p.variables,
            vec![
                Variable {
                    name: "lang".into(),
                    default: Some("German".into())
                },
                Variable {
                    name: "style".into(),
                    default: None
                },
            ]
        );
        let f = p
            .fill(&[("style".into(), "plain".into())], "Hallo", false)
            .unwrap();
        assert_eq!(
            f.text,
            "Translate to German in plain: Hallo\n{\"a\": 1} {x} {x y}"
        );
        let f = p
            .fill(
                &[
                    ("style".into(), "plain".into()),
                    ("lang".into(), "en".into()),
                ],
                "x",
                false,
            )
            .unwrap();
        assert!(f.text.starts_with("Translate to en in plain: x"));
    }

    #[test]
    fn errors_name_the_variables() {
        let p = prompt("{a} {b=2} {input}");
        let e = p.fill(&[], "x", false).unwrap_err();
        assert!(e.to_string().contains("needs 'a'"), "{e}");
        assert!(e.to_string().contains("it has: a, b=2"), "{e}");
        let e = p
            .fill(
                &[("a".into(), "1".into()), ("zz".into(), "1".into())],
                "x",
                false,
            )
            .unwrap_err();
        assert!(e.to_string().contains("no variable 'zz'"), "{e}");
        let e = p.fill(&[("a".into(), "1".into())], " ", false).unwrap_err();
        assert!(e.to_string().contains("needs input"), "{e}");
    }

    #[test]
    fn input_follows_a_template_without_it() {
        let p = prompt("Summarize:");
        assert_eq!(
            p.fill(&[], "text", false).unwrap().text,
            "Summarize:\n\ntext"
        );
        assert_eq!(p.fill(&[], "", false).unwrap().text, "Summarize:");
    }

    #[test]
    fn front_matter() {
        let p = prompt(
            "---\ndescription: \"Fix it\"\nmodel: sonnet\nsystem: |\n  You edit {lang=English}.\n\n  Be brief.\n---\n\nFix: {input}\n",
        );
        assert_eq!(p.description.as_deref(), Some("Fix it"));
        assert_eq!(p.model.as_deref(), Some("sonnet"));
        assert_eq!(
            p.system.as_deref(),
            Some("You edit {lang=English}.\n\nBe brief.")
        );
        assert_eq!(p.template, "Fix: {input}");
        let f = p.fill(&[], "x", false).unwrap();
        assert_eq!(f.system.as_deref(), Some("You edit English.\n\nBe brief."));
        // Written back, read back: the same.
        let again = prompt(&p.to_file());
        assert_eq!(
            (again.system, again.template, again.model),
            (p.system, p.template, p.model)
        );
        assert!(parse("t", Path::new("t.md"), "---\nmodle: x\n---\nhi", true).is_err());
        assert!(
            parse(
                "t",
                Path::new("t.md"),
                "---\nsystem: {input}\n---\nhi",
                true
            )
            .is_err()
        );
    }

    #[test]
    fn names() {
        for ok in ["summarize", "fix-grammar", "extract_wisdom", "a1"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "../x",
            "a/b",
            ".hidden",
            "-x",
            "a b",
            "x.md",
            &"a".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn pieces_never_panic() {
        for t in [
            "{", "}", "{{", "{{a}", "{a}}", "\\", "\\{", "{a=", "{é}", "{a=ü}", "{{a=b}}",
        ] {
            let _ = pieces(t);
            let _ = prompt(t).fill(&[], "in", false);
        }
    }
}
