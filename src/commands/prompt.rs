//! `ai prompt add|list|show|edit|remove`: the saved prompts of `<home>/prompts/` (and, to
//! read, those of config `prompts.dirs`).

use std::io::{IsTerminal, Read};
use std::path::Path;

use comfy_table::{Table, presets};
use serde::Serialize;

use crate::cli::PromptAction;
use crate::config::create_private_dir;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::output::{self, sanitize};
use crate::prompts::{self, Prompt};

pub(crate) fn run(action: PromptAction, quiet: bool) -> Result<()> {
    let ctx = Ctx::load(quiet)?;
    match action {
        PromptAction::Add {
            name,
            text,
            system,
            model,
            description,
            force,
        } => add(&ctx, &name, text, system, model, description, force),
        PromptAction::List { json } => list(&ctx, json),
        PromptAction::Show { name, json } => show(&ctx, &name, json),
        PromptAction::Edit { name } => edit(&ctx, &name),
        PromptAction::Remove { name } => remove(&ctx, &name),
    }
}

fn own_file(ctx: &Ctx, name: &str) -> std::path::PathBuf {
    prompts::own_dir(&ctx.home.dir).join(format!("{name}.md"))
}

fn add(
    ctx: &Ctx,
    name: &str,
    text: Option<String>,
    system: Option<String>,
    model: Option<String>,
    description: Option<String>,
    force: bool,
) -> Result<()> {
    prompts::check_name(name)?;
    let path = own_file(ctx, name);
    if path.exists() && !force {
        return Err(
            Error::usage(format!("a prompt named '{name}' exists already")).hint(format!(
                "change it with `ai prompt edit {name}`, or replace it with --force"
            )),
        );
    }
    let file = match text {
        Some(t) => Prompt {
            name: name.to_owned(),
            path: path.clone(),
            description,
            model,
            system,
            template: t.trim_end().to_owned(),
            variables: Vec::new(),
            own: true,
        }
        .to_file(),
        None => {
            if std::io::stdin().is_terminal() {
                return Err(Error::usage("no prompt text given").hint(format!(
                    "ai prompt add {name} \"Summarize: {{input}}\", or pipe a prompt file in: ai prompt add {name} < file.md"
                )));
            }
            if system.is_some() || model.is_some() || description.is_some() {
                return Err(Error::usage(
                    "--system, --model and --description go with TEXT; a file on standard input holds them in its front matter",
                ));
            }
            let mut s = String::new();
            std::io::stdin()
                .take(1024 * 1024 + 1)
                .read_to_string(&mut s)
                .map_err(|e| Error::usage(format!("cannot read standard input: {e}")))?;
            s
        }
    };
    // What is saved must read back: check it before writing.
    let parsed = prompts::parse(name, &path, &file, true)?;
    if parsed.template.trim().is_empty() && parsed.system.is_none() {
        return Err(Error::usage("the prompt is empty")
            .hint(format!("ai prompt add {name} \"Summarize: {{input}}\"")));
    }
    if let Some(m) = &parsed.model {
        check_model(ctx, m)?;
    }
    let dir = prompts::own_dir(&ctx.home.dir);
    ctx.home.ensure()?;
    create_private_dir(&dir)?;
    crate::config::write_atomic(&path, file.as_bytes())?;
    ctx.ui.notice(&format!(
        "ai: saved prompt {name} ({}); use it: ai -p {name} \"…\"",
        path.display()
    ));
    Ok(())
}

/// A prompt's model must be one `ai` knows.
fn check_model(ctx: &Ctx, model: &str) -> Result<()> {
    match crate::alias::resolve(model, &ctx.config)? {
        Some(_) => Ok(()),
        None => Err(crate::alias::unknown(model, &ctx.config)),
    }
}

#[derive(Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    prompt: &'a Prompt,
    /// `own` (`<home>/prompts/`) or `dirs` (config `prompts.dirs`).
    source: &'static str,
}

fn list(ctx: &Ctx, json: bool) -> Result<()> {
    let all = prompts::list(&ctx.home.dir, &ctx.config);
    let mut ok: Vec<Prompt> = Vec::new();
    for p in all {
        match p {
            Ok(p) => ok.push(p),
            Err(e) => ctx.ui.warn(&format!("skipped prompt {e}")),
        }
    }
    if json {
        let rows: Vec<Row> = ok
            .iter()
            .map(|p| Row {
                prompt: p,
                source: if p.own { "own" } else { "dirs" },
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&rows)
            .map_err(|e| Error::backend(format!("cannot encode JSON: {e}")))?;
        text.push('\n');
        return output::print_stdout(&text);
    }
    if ok.is_empty() {
        ctx.ui.notice(
            "ai: no saved prompts yet (add one: ai prompt add summarize \"Summarize: {input}\")",
        );
        return Ok(());
    }
    let mut table = Table::new();
    table.load_preset(presets::NOTHING);
    table.set_header(vec!["NAME", "MODEL", "VARIABLES", "DESCRIPTION"]);
    for p in &ok {
        let vars: Vec<String> = p
            .variables
            .iter()
            .map(|v| match &v.default {
                Some(d) => format!("{}={}", v.name, d),
                None => v.name.clone(),
            })
            .collect();
        let about = p.description.clone().unwrap_or_else(|| {
            if p.own {
                String::new()
            } else {
                p.path.display().to_string()
            }
        });
        table.add_row(vec![
            p.name.clone(),
            sanitize(p.model.as_deref().unwrap_or("-")),
            sanitize(&crate::fmt::one_line(&vars.join(" "), 40)),
            sanitize(&crate::fmt::one_line(&about, 60)),
        ]);
    }
    let mut out = output::trim_lines(&table.to_string());
    out.push('\n');
    output::print_stdout(&out)
}

fn show(ctx: &Ctx, name: &str, json: bool) -> Result<()> {
    let p = prompts::find(&ctx.home.dir, &ctx.config, name)?;
    if json {
        let row = Row {
            prompt: &p,
            source: if p.own { "own" } else { "dirs" },
        };
        let mut text = serde_json::to_string_pretty(&row)
            .map_err(|e| Error::backend(format!("cannot encode JSON: {e}")))?;
        text.push('\n');
        return output::print_stdout(&text);
    }
    let text = if p.own {
        std::fs::read_to_string(&p.path).map_err(|e| Error::io("read", &p.path, e))?
    } else {
        p.to_file()
    };
    // A prompt file is the user's, but may come from anywhere (a shared folder).
    output::print_foreign(&text)
}

fn remove(ctx: &Ctx, name: &str) -> Result<()> {
    prompts::check_name(name)?;
    let path = own_file(ctx, name);
    if !path.is_file() {
        return Err(not_own(ctx, name));
    }
    std::fs::remove_file(&path).map_err(|e| Error::io("remove", &path, e))?;
    ctx.ui.notice(&format!("ai: removed prompt {name}"));
    Ok(())
}

/// `name` is not a prompt of `<home>/prompts/`: say where it is, if anywhere.
fn not_own(ctx: &Ctx, name: &str) -> Error {
    match prompts::find(&ctx.home.dir, &ctx.config, name) {
        Ok(p) => Error::usage(format!(
            "prompt '{name}' is in {} (config \"prompts.dirs\"), not one of yours",
            p.path.display()
        ))
        .hint(format!(
            "change it there, or copy it to yours: ai prompt show {name} | ai prompt add {name}"
        )),
        Err(e) => e,
    }
}

fn edit(ctx: &Ctx, name: &str) -> Result<()> {
    prompts::check_name(name)?;
    let path = own_file(ctx, name);
    if !path.is_file() {
        return Err(not_own(ctx, name));
    }
    run_editor(&path)?;
    // The file is the user's: what they saved stays. Say if it no longer reads.
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
    prompts::parse(name, &path, &text, true)?;
    ctx.ui.notice(&format!("ai: prompt {name} saved"));
    Ok(())
}

/// `$VISUAL`, else `$EDITOR`, else `vi`, on `path` (the editor's words split at spaces).
fn run_editor(path: &Path) -> Result<()> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_owned());
    let mut words = editor.split_whitespace();
    let program = words.next().unwrap_or("vi").to_owned();
    let status = std::process::Command::new(&program)
        .args(words)
        .arg(path)
        .status();
    crate::signal::forget_interrupt();
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(
            Error::usage(format!("the editor {} ended with {s}", sanitize(&program)))
                .hint("set $VISUAL or $EDITOR to the editor you use"),
        ),
        Err(e) => Err(Error::usage(format!(
            "cannot start the editor {}: {e}",
            sanitize(&program)
        ))
        .hint("set $VISUAL or $EDITOR to the editor you use")),
    }
}
