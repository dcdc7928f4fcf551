//! The front door of a prompt call: the words become models, a chat reference and a prompt;
//! input is read; then one turn, a turn saved nowhere, or several models at once.

use crate::cli::{self, CallArgs, ChatRef, Entry, Modes};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::input;
use crate::kb::ground::{self, Choice};
use crate::output;
use crate::present::Present;
use crate::several::several;
use crate::turn::{self, Kind, Options, Target, Turn};

pub(crate) fn run(
    entry: Entry,
    args: &CallArgs,
    words: &[String],
    literal_from: usize,
) -> Result<()> {
    if args.json_stream {
        // First: every failure from here on is also reported as a JSON line.
        output::set_json_stream();
    }
    let ctx = Ctx::load(args.quiet)?;
    let store = &ctx.store;
    let parsed = cli::resolve_words(
        entry,
        words,
        literal_from,
        args.chat.as_deref(),
        &ctx.config,
        &|w| store.find(w),
    )?;
    if args.no_chat && parsed.chat != ChatRef::Plain {
        return Err(Error::usage(
            "--no-chat cannot be used when continuing or starting a chat",
        ));
    }
    // `--json` prints one JSON object; the `json` word also asks the backend for JSON.
    let modes = Modes {
        json: parsed.modes.json,
        yolo: parsed.modes.yolo || args.yolo,
        cmd: parsed.modes.cmd || args.cmd,
        run: parsed.modes.run || args.run,
    };
    let present = present_of(args, modes, parsed.modes.json)?;
    if args.json_stream && parsed.models.len() > 1 {
        return Err(Error::usage("--json-stream takes one model")
            .hint("ask each model in a call of its own"));
    }
    if let Present::Run { yes } = present
        && !args.dry_run
    {
        crate::modes::check_can_ask(yes)?;
    }

    // A knowledge base named on the command line must exist before anything is read or sent.
    if let Choice::Names(names) = &kb_choice(args) {
        ground::check(&ctx.home, &ctx.config, names)?;
    }

    // `--schema`: read and checked before anything is read or sent.
    let schema = match &args.prompting.schema {
        Some(spec) => {
            if modes.cmd || modes.run {
                return Err(Error::usage("--schema cannot be used with cmd or run")
                    .hint("leave out one of them"));
            }
            Some(crate::schema::parse(spec)?)
        }
        None => None,
    };

    // A saved prompt (`-p NAME`) is found before anything is read.
    let saved = match &args.prompting.saved_prompt {
        Some(name) => Some(crate::prompts::find(&ctx.home.dir, &ctx.config, name)?),
        None => None,
    };

    // All input is read before any chat is locked: stdin may take its time.
    let input::Given {
        files,
        mut attachments,
        pages,
    } = input::read_files(&args.files, &ctx.ui)?;
    if args.keep_attachments {
        for a in &mut attachments {
            a.kept = Some(crate::attach::kept_name(a));
        }
    }
    let stdin = if args.no_stdin {
        None
    } else {
        input::read_stdin(
            !parsed.prompt.is_empty() || !files.is_empty() || !attachments.is_empty(),
            &files,
            &ctx.ui,
        )?
    };
    let mut prompt = input::assemble(&files, stdin, &parsed.prompt);
    drop(files);
    let mut saved_system = None;
    let mut turn_models = parsed.models;
    if let Some(p) = &saved {
        let filled = p.fill(&args.prompting.vars, &prompt, !attachments.is_empty())?;
        prompt = filled.text;
        saved_system = filled.system;
        // The prompt's model, when the call names none and starts a chat.
        if let Some(m) = &p.model
            && turn_models.is_empty()
            && matches!(
                parsed.chat,
                ChatRef::Plain | ChatRef::New | ChatRef::Named(_)
            )
        {
            match crate::alias::resolve(m, &ctx.config)? {
                Some(route) => turn_models.push(route),
                None => {
                    return Err(crate::alias::unknown(m, &ctx.config)
                        .with_detail(&format!("(the model of saved prompt '{}')", p.name)));
                }
            }
        }
    }
    if prompt.trim().is_empty() {
        let label = turn_models.first().map_or("sonnet", |r| r.label.as_str());
        if let Some(a) = attachments.first() {
            return Err(Error::usage("no prompt given").hint(format!(
                "say what to do with it: ai {label} -F {} \"what is in this?\"",
                a.name
            )));
        }
        return Err(Error::usage("no prompt given").hint(format!(
            "ai {label} \"your question\", or pipe text in: echo hi | ai {label}"
        )));
    }
    let title = title_of(&parsed.prompt, &prompt);
    let turn = Turn {
        route: turn_models.first().cloned(),
        modes,
        present,
        prompt,
        title,
        attachments,
        pages,
        schema,
    };
    let chat_word = parsed.chat == ChatRef::New;
    let save = match parsed.chat {
        ChatRef::Plain => !args.no_chat && ctx.config.chat.save != Some(false),
        _ => true,
    };
    let target = match parsed.chat {
        ChatRef::Plain | ChatRef::New => Target::New(None),
        ChatRef::Named(name) => Target::New(Some(name)),
        ChatRef::Existing(id) => Target::Existing(id),
        ChatRef::Last => Target::Existing(last_chat(&ctx)?),
    };
    let mut opts = options_with_tools(&ctx, args)?;
    if opts.system.is_none() {
        // `--system` wins over the saved prompt's.
        opts.system = saved_system;
    }
    // `ai echo chat glm5 "…"` reads as two models; with `chat` that is surely a slip (a
    // continuation meant), and it would bill a second provider.
    if turn_models.len() > 1 && chat_word {
        let names: Vec<&str> = turn_models.iter().map(|r| r.label.as_str()).collect();
        return Err(Error::usage(format!(
            "`chat` takes one model, and {} were named ({})",
            names.len(),
            names.join(", ")
        ))
        .hint("to ask several models at once, leave out `chat`; to continue a chat, name its ID"));
    }
    if let Some(budget) = &ctx.config.budget
        && !args.dry_run
    {
        // A call to a paid model (or to one not known to be free) is weighed against the
        // month's spend before anything is sent.
        let routes: Vec<crate::alias::Route> = if turn_models.is_empty() {
            match (&target, crate::route::default(&ctx.config)) {
                (Target::New(_), Ok(r)) => vec![r],
                _ => Vec::new(),
            }
        } else {
            turn_models.clone()
        };
        let free = !routes.is_empty()
            && routes
                .iter()
                .all(|r| crate::prices::is_free(r.provider.name(), &r.model));
        if !free {
            crate::usage::check_budget(&ctx.store, budget, &|m| ctx.ui.warn(m))?;
        }
    }
    if turn_models.len() > 1 {
        return several(&ctx, &opts, turn, turn_models, save, target);
    }
    let done = if save {
        turn::chat(&ctx, &opts, &target, turn, Kind::Fresh).result?
    } else {
        turn::one_shot(&ctx, &opts, turn)?
    };
    match done {
        Some(done) => present.show(&ctx.ui, &done),
        None => Ok(()),
    }
}

/// How the reply is shown. `--json-stream` streams it as JSON lines, whatever the backend is
/// asked for (the `json` word still asks it for JSON); it cannot show a command.
pub(crate) fn present_of(args: &CallArgs, modes: Modes, json_word: bool) -> Result<Present> {
    if !args.json_stream {
        return Ok(Present::of(modes, json_word || args.json, args.yes));
    }
    if modes.cmd || modes.run {
        return Err(Error::usage("--json-stream cannot be used with cmd or run")
            .hint("use --json, which prints the reply in one JSON object"));
    }
    Ok(Present::Stream)
}

/// The settings of a call that a turn uses.
pub(crate) fn options(ctx: &Ctx, args: &CallArgs) -> Options {
    Options {
        in_session: false,
        system: args.system.clone(),
        timeout: args.timeout.unwrap_or(ctx.config.timeout),
        timeout_given: args.timeout.is_some(),
        no_wait: args.no_wait,
        dry_run: args.dry_run,
        kb: kb_choice(args),
        tools: None,
    }
}

/// `--kb NAME…` (each once) or `--no-kb`.
fn kb_choice(args: &CallArgs) -> Choice {
    if args.no_kb {
        return Choice::Off;
    }
    if args.kb.is_empty() {
        return Choice::Default;
    }
    let mut names: Vec<String> = Vec::with_capacity(args.kb.len());
    for n in &args.kb {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
    Choice::Names(names)
}

/// The call's settings with its tools read (`--data` files, a tools file): before any chat is
/// locked, so a bad file fails first.
pub(crate) fn options_with_tools(ctx: &Ctx, args: &CallArgs) -> Result<Options> {
    let mut opts = options(ctx, args);
    check_tools(ctx, args)?;
    // Read always (without --data or --tools-file it reads no file): a chat may remember that
    // its knowledge bases are tools.
    opts.tools = Some(crate::tools::setup(&ctx.config, args)?);
    Ok(opts)
}

/// `--tools` with no knowledge base (and no document) to give the model is refused.
pub(crate) fn check_tools(ctx: &Ctx, args: &CallArgs) -> Result<()> {
    if args.tooling.tools && ctx.config.kb.bases.is_empty() && args.tooling.data.is_empty() {
        return Err(Error::usage(
            "--tools gives the model your knowledge bases to search, and there is none",
        )
        .hint(
            "add one with: ai kb add NAME PATH (or give a JSON document with --data FILE.json)",
        ));
    }
    Ok(())
}

/// The most recently used chat, for `ai reply`.
pub(crate) fn last_chat(ctx: &Ctx) -> Result<String> {
    let path = ctx.home.dir.join("last_chat");
    let id = std::fs::read_to_string(&path)
        .unwrap_or_default()
        .trim()
        .to_owned();
    match ctx.store.find(&id) {
        Some(id) => Ok(id),
        None => Err(Error::not_found("there is no recent chat to reply to")
            .hint("start one: ai sonnet \"…\" (every prompt is saved as a chat)")),
    }
}

/// A short title: the prompt words, else the first non-empty line of the prompt.
pub(crate) fn title_of(words: &str, prompt: &str) -> String {
    let source = if words.trim().is_empty() {
        prompt
    } else {
        words
    };
    let line = source
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let clean = output::sanitize(line);
    match clean.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &clean[..i]),
        None => clean,
    }
}
