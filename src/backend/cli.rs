//! Backend CLIs: one small argument table per CLI (versions move; keep each easy to update),
//! and custom CLIs declared in config. The prompt always travels as data: on stdin, or as one
//! argv element, never through a shell.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::Request;
use super::stream::Format;
use crate::config::{Config, CustomBackend, PromptVia};
use crate::error::{Error, Result};
use crate::target::{Cli, Provider};

/// Linux caps one argv string at 128 KiB (MAX_ARG_STRLEN).
pub(crate) const MAX_ARG: usize = 128 * 1024;

/// A program ready to run.
#[derive(Debug)]
pub(crate) struct Invocation<'a> {
    /// Backend name for messages (`claude`).
    pub(crate) name: String,
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    /// Written to the child's stdin and closed; `None` gives it /dev/null.
    /// Borrowed from the request when it is the prompt alone: a long prompt is held once.
    pub(crate) stdin: Option<Cow<'a, str>>,
    /// Hold stdout until a successful exit: for CLIs that print their errors on stdout.
    pub(crate) hold_stdout: bool,
    /// How its stdout is read: plain text, or one of the CLIs' JSON streams.
    pub(crate) output: Format,
    /// The arguments without the structured-output flags, for a CLI too old to know them.
    pub(crate) plain_args: Option<Vec<String>>,
    pub(crate) cli: Option<Cli>,
    pub(crate) install_hint: Option<String>,
    /// Things worth a notice (an ignored `@effort`).
    pub(crate) notes: Vec<String>,
    /// `--schema` went through the CLI's own flag: its structured result is the reply.
    pub(crate) structured: bool,
    /// codex `--output-schema FILE`: the file, removed when the call is over.
    pub(crate) schema_file: Option<SchemaFile>,
}

/// Does the CLI take a `--schema` by a flag of its own (else it is told in the system prompt)?
/// claude `--json-schema JSON` (the result event's `structured_output`), codex
/// `--output-schema FILE` (its last message). Gemini CLI and Qwen Code have none.
pub(crate) fn takes_schema(cli: Cli) -> bool {
    matches!(cli, Cli::Claude | Cli::Codex)
}

/// A schema written for a CLI that reads it from a file: private to the user (0600), in the
/// temporary folder, removed when dropped.
#[derive(Debug)]
pub(crate) struct SchemaFile {
    pub(crate) path: PathBuf,
    pub(crate) text: String,
}

impl SchemaFile {
    fn write(text: String) -> Result<SchemaFile> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let dir = std::env::temp_dir();
        let mut last = None;
        // A name no one holds: created new, never an existing file (or a link) written through.
        for n in 0..100u32 {
            let path = dir.join(format!("ai-schema-{}-{n}.json", std::process::id()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(mut f) => {
                    let file = SchemaFile { path, text };
                    f.write_all(file.text.as_bytes())
                        .map_err(|e| Error::io("write", &file.path, e))?;
                    return Ok(file);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(Error::io("create", &path, e)),
            }
        }
        let e = last.unwrap_or_else(|| std::io::Error::other("no free name"));
        Err(Error::io("create", dir.join("ai-schema-….json"), e))
    }
}

impl Drop for SchemaFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Each CLI's structured output: its format, the flags that ask for it, and the version it
/// was recorded with (known to have them).
pub(crate) fn stream_flags(cli: Cli) -> Option<(Format, &'static [&'static str], &'static str)> {
    match cli {
        Cli::Claude => Some((
            Format::ClaudeStream,
            &[
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages",
            ],
            "Claude Code 2.1.330",
        )),
        Cli::Codex => Some((Format::CodexJson, &["--json"], "Codex CLI 0.169.0")),
        Cli::Gemini => Some((
            Format::GeminiStream,
            &["-o", "stream-json"],
            "Gemini CLI 0.61.0",
        )),
        Cli::Qwen => Some((
            Format::QwenStream,
            &["-o", "stream-json", "--include-partial-messages"],
            "Qwen Code 0.24.4",
        )),
        Cli::Ollama => None,
    }
}

/// How to install each CLI, for the "not installed" hint.
pub(crate) fn install_hint(cli: Cli) -> &'static str {
    match cli {
        Cli::Claude => "install Claude Code: npm install -g @anthropic-ai/claude-code",
        Cli::Codex => "install Codex CLI: npm install -g @openai/codex",
        Cli::Gemini => "install Gemini CLI: npm install -g @google/gemini-cli",
        Cli::Qwen => "install Qwen Code: npm install -g @qwen-code/qwen-code",
        Cli::Ollama => "install Ollama from https://ollama.com/download, then `ollama pull MODEL`",
    }
}

/// The text a CLI receives: the prompt alone, or the conversation as one transcript.
pub(crate) fn prompt_text<'a>(req: &Request<'a>) -> Cow<'a, str> {
    super::transcript::render(req.system, req.messages)
}

/// Build the invocation for a CLI route.
pub(crate) fn build<'a>(req: &Request<'a>, config: &Config) -> Result<Invocation<'a>> {
    let route = req.route;
    match &route.provider {
        Provider::Cli(cli) => {
            let prompt = super::transcript::render_with(req.system, req.messages, refs(*cli));
            builtin(*cli, req, prompt)
        }
        Provider::Custom(name) => {
            let spec = config.backends.get(name).ok_or_else(|| {
                Error::config(format!("backend '{name}' is not declared in config"))
            })?;
            custom(name, spec, req, prompt_text(req))
        }
        other => Err(Error::config(format!(
            "'{}' is not a CLI backend",
            other.name()
        ))),
    }
}

/// How each CLI is told about an attached image or PDF: it reads the file from the working
/// directory itself (`-F` takes nothing outside it).
pub(crate) fn refs(cli: Cli) -> super::transcript::Refs {
    use super::transcript::Refs;
    match cli {
        // A path in the prompt: claude reads it with its Read tool (images and PDFs).
        Cli::Claude => Refs::Path,
        // `@path` is replaced by the file's content (images and PDFs inline).
        Cli::Gemini | Cli::Qwen => Refs::At,
        // `--image=PATH` carries the bytes; the prompt says what was attached.
        Cli::Codex => Refs::Note,
        // `ollama run` takes `./name.png` out of the prompt and sends it as an image.
        Cli::Ollama => Refs::Dot,
    }
}

fn builtin<'a>(cli: Cli, req: &Request<'_>, prompt: Cow<'a, str>) -> Result<Invocation<'a>> {
    let model = req.route.model.clone();
    let modes = req.modes;
    let mut notes = Vec::new();
    let s = |v: &[&str]| v.iter().map(|a| (*a).to_owned()).collect::<Vec<String>>();
    let mut args: Vec<String> = match cli {
        // claude --print reads the prompt from stdin; options after it can't swallow it.
        Cli::Claude => s(&["--print", "--model", &model]),
        // codex exec: `-` reads the prompt from stdin; needs a git-repo override outside repos.
        Cli::Codex => s(&["exec", "--skip-git-repo-check", "-m", &model]),
        // gemini: stdin is a one-shot prompt; without --skip-trust it exits 55 in new folders.
        Cli::Gemini => s(&["--skip-trust", "-m", &model]),
        // qwen: stdin (a positional prompt starting with `-` is silently dropped).
        Cli::Qwen => s(&["-m", &model]),
        // ollama run MODEL: reads a non-terminal stdin as the prompt.
        Cli::Ollama => s(&["run", &model]),
    };
    if let Some(effort) = &req.route.effort {
        match cli {
            Cli::Claude => args.extend(s(&["--effort", effort])),
            Cli::Codex => args.extend(s(&["-c", &format!("model_reasoning_effort=\"{effort}\"")])),
            _ => notes.push(format!(
                "{} has no effort option; @{effort} is ignored",
                cli.name()
            )),
        }
    }
    if modes.yolo {
        match cli {
            Cli::Claude => args.push("--dangerously-skip-permissions".into()),
            Cli::Codex => args.push("--dangerously-bypass-approvals-and-sandbox".into()),
            Cli::Gemini | Cli::Qwen => args.push("--yolo".into()),
            Cli::Ollama => notes.push("ollama has no auto-approve option; yolo is ignored".into()),
        }
    }
    // The `json` word asks the model for JSON: ollama has a switch for it; the others are
    // asked in the system prompt. Their own one-object JSON envelopes (claude --output-format
    // json, …) would be stored as the reply; the event streams asked for below are read by ai.
    if modes.json && cli == Cli::Ollama {
        args.extend(s(&["--format", "json"]));
    }
    // The structured stream: text deltas, usage, and the CLI's own error message.
    let mut plain_args = None;
    let mut output = Format::Text;
    if let Some((format, flags, _)) = stream_flags(cli) {
        plain_args = Some(args.clone());
        args.extend(flags.iter().map(|f| (*f).to_owned()));
        output = format;
    }
    // `--schema` through the CLI's own flag. Not in the plain-text fallback: a CLI too old
    // for the stream flags is too old for these too, and its error says so.
    let mut structured = false;
    let mut schema_file = None;
    if let Some(schema) = req.schema.filter(|_| takes_schema(cli)) {
        structured = true;
        plain_args = None;
        match cli {
            Cli::Claude => {
                let text = schema.to_string();
                if text.len() >= MAX_ARG {
                    return Err(Error::usage(format!(
                        "the schema is {}, and claude takes it as one argument (--json-schema), which Linux limits to 128 KiB",
                        crate::fmt::human_size(text.len() as u64)
                    ))
                    .hint("give a smaller schema"));
                }
                args.extend(["--json-schema".to_owned(), text]);
            }
            // codex sends it in OpenAI's strict mode: given in that shape.
            _ => {
                let file = SchemaFile::write(super::shape::strict(schema).to_string())?;
                args.extend([
                    "--output-schema".to_owned(),
                    file.path.display().to_string(),
                ]);
                schema_file = Some(file);
            }
        }
    }
    if cli == Cli::Codex {
        // Images go as `--image=PATH`, one each (the `=` form: `-i` takes several values and
        // would swallow what follows).
        let images: Vec<String> = req
            .messages
            .iter()
            .flat_map(|m| m.attachments())
            .map(|a| format!("--image=./{}", a.name))
            .collect();
        args.extend(images.iter().cloned());
        if let Some(p) = plain_args.as_mut() {
            p.extend(images);
        }
        args.push("-".into());
        if let Some(p) = plain_args.as_mut() {
            p.push("-".into());
        }
    }
    Ok(Invocation {
        name: cli.name().to_owned(),
        program: cli.name().to_owned(),
        args,
        stdin: Some(prompt),
        // In plain text, claude prints auth and API errors on stdout (exit 1), and its answer
        // only when done: its stdout is held (see [`Invocation::plain`]).
        hold_stdout: false,
        output,
        plain_args,
        cli: Some(cli),
        install_hint: Some(install_hint(cli).to_owned()),
        notes,
        structured,
        schema_file,
    })
}

fn custom<'a>(
    name: &str,
    spec: &CustomBackend,
    req: &Request<'_>,
    prompt: Cow<'a, str>,
) -> Result<Invocation<'a>> {
    let mut args = spec.args.clone();
    let mut notes = Vec::new();
    match spec.model_arg.as_deref() {
        Some(opt) if opt.ends_with('=') => args.push(format!("{opt}{}", req.route.model)),
        Some(opt) if !opt.is_empty() => args.extend([opt.to_owned(), req.route.model.clone()]),
        _ => {}
    }
    if let Some(effort) = &req.route.effort {
        notes.push(format!("{name} has no effort option; @{effort} is ignored"));
    }
    if req.modes.yolo {
        args.extend(spec.yolo_args.iter().cloned());
    }
    if req.modes.json {
        args.extend(spec.json_args.iter().cloned());
    }
    let stdin = match spec.prompt {
        PromptVia::Stdin => Some(prompt),
        PromptVia::Arg | PromptVia::AfterDashdash => {
            if prompt.len() >= MAX_ARG {
                return Err(Error::usage(format!(
                    "the prompt is {} but backend '{name}' takes it as one argument, which Linux limits to 128 KiB",
                    crate::fmt::human_size(prompt.len() as u64)
                ))
                .hint(format!(
                    "if {} reads standard input, set \"prompt\": \"stdin\" for it under \"backends\" in config.json",
                    spec.program
                )));
            }
            if spec.prompt == PromptVia::AfterDashdash {
                args.push("--".into());
            } else if prompt.starts_with('-') {
                notes.push(format!(
                    "the prompt starts with '-' and {name} takes it as a plain argument; set \"prompt\": \"after-dashdash\" if it misreads it"
                ));
            }
            args.push(prompt.into_owned());
            None
        }
    };
    Ok(Invocation {
        name: name.to_owned(),
        program: spec.program.clone(),
        args,
        stdin,
        hold_stdout: false,
        output: spec.output,
        plain_args: None,
        cli: None,
        install_hint: spec.install.clone(),
        notes,
        structured: false,
        schema_file: None,
    })
}

impl<'a> Invocation<'a> {
    /// The same call in plain text, for a CLI too old for its structured-output flags.
    pub(crate) fn plain(&self) -> Option<Invocation<'a>> {
        let args = self.plain_args.clone()?;
        Some(Invocation {
            name: self.name.clone(),
            program: self.program.clone(),
            args,
            stdin: self.stdin.clone(),
            hold_stdout: self.cli == Some(Cli::Claude),
            output: Format::Text,
            plain_args: None,
            cli: self.cli,
            install_hint: self.install_hint.clone(),
            notes: Vec::new(),
            structured: false,
            schema_file: None,
        })
    }

    /// The `--dry-run` account: program (resolved on PATH), arguments, and the prompt.
    pub(crate) fn describe(&self) -> String {
        let found = find_program(&self.program);
        let program = match &found {
            Some(p) => p.display().to_string(),
            None => format!("{} (not found on PATH)", self.program),
        };
        let mut out = format!("program: {program}\n");
        let args: Vec<String> = self.args.iter().map(|a| shell_quote(a)).collect();
        out.push_str(&format!(
            "command: {} {}\n",
            shell_quote(&self.program),
            args.join(" ")
        ));
        if let Some(f) = &self.schema_file {
            out.push_str(&format!(
                "schema file: {} (written for the call, removed after): {}\n",
                f.path.display(),
                f.text
            ));
        }
        match &self.stdin {
            Some(text) => {
                out.push_str(&format!("stdin: the prompt ({} bytes)\n", text.len()));
                out.push_str("--- prompt ---\n");
                out.push_str(text);
                if !text.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str("stdin: /dev/null (the prompt is the last argument)\n"),
        }
        out
    }
}

/// Quote a word for display so it could be pasted into a POSIX shell.
pub(crate) fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%^".contains(c));
    if safe {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Look a program up the way exec does: a path is taken as is, a bare name searched on PATH.
pub(crate) fn find_program(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exec = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return is_exec(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_exec(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("--model"), "--model");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
