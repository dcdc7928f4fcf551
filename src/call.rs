//! A prompt call: words → route → (chat: lock, load, window) → backend → reply on stdout →
//! (chat: append the turn in one write) → footer on stderr.

use std::time::Instant;

use crate::alias::{self, Route};
use crate::backend::{self, End, Message, Request, Role};
use crate::chat::record::{self, Header, MessageRec, Origin, PendingRec, Record};
use crate::chat::store::{self, Chat, Store, Wait};
use crate::chat::window;
use crate::cli::{self, CallArgs, ChatRef, Entry, Modes};
use crate::compact;
use crate::config::Overflow;
use crate::config::{Config, DEFAULT_WINDOW_TOKENS, Home, write_atomic_unsynced};
use crate::context;
use crate::error::{Error, Result};
use crate::input;
use crate::output::{self, ReplySink, Ui};
use crate::present::{Done, Present, with_instruction};
use crate::several::several;
use crate::signal;

/// Settled once per call and passed down.
pub(crate) struct Ctx {
    pub(crate) ui: Ui,
    pub(crate) home: Home,
    pub(crate) config: Config,
    pub(crate) store: Store,
}

impl Ctx {
    pub(crate) fn load(quiet: bool) -> Result<Ctx> {
        let ui = Ui::new(quiet);
        let home = Home::locate()?;
        let config = Config::load(&home)?;
        let store = Store::new(&home);
        Ok(Ctx {
            ui,
            home,
            config,
            store,
        })
    }

    fn budget(&self) -> usize {
        self.config
            .chat
            .window_tokens
            .unwrap_or(DEFAULT_WINDOW_TOKENS)
    }
}

/// What one turn sends, and where.
pub(crate) struct Turn {
    pub(crate) route: Option<Route>,
    pub(crate) modes: Modes,
    /// How the reply reaches the user.
    pub(crate) present: Present,
    pub(crate) prompt: String,
    /// Title for a new chat (the prompt words, or the first line of the prompt).
    pub(crate) title: String,
}

pub(crate) fn run(
    entry: Entry,
    args: &CallArgs,
    words: &[String],
    literal_from: usize,
) -> Result<()> {
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
    let present = Present::of(modes, parsed.modes.json || args.json, args.yes);

    // All input is read before any chat is locked: stdin may take its time.
    let files = input::read_files(&args.files, &ctx.ui)?;
    let stdin = if args.no_stdin {
        None
    } else {
        input::read_stdin(!parsed.prompt.is_empty() || !files.is_empty(), &ctx.ui)?
    };
    let prompt = input::assemble(&files, stdin.as_deref(), &parsed.prompt);
    if prompt.trim().is_empty() {
        let label = parsed.models.first().map_or("sonnet", |r| r.label.as_str());
        return Err(Error::usage("no prompt given").hint(format!(
            "ai {label} \"your question\", or pipe text in: echo hi | ai {label}"
        )));
    }
    let title = title_of(&parsed.prompt, &prompt);
    let turn_models = parsed.models;
    let turn = Turn {
        route: turn_models.first().cloned(),
        modes,
        present,
        prompt,
        title,
    };

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
    if turn_models.len() > 1 {
        return several(&ctx, args, turn, turn_models, save, target);
    }
    let present = turn.present;
    let done = if save {
        chat_turn(&ctx, args, target, turn, None)?
    } else {
        one_shot(&ctx, args, turn)?
    };
    match done {
        Some(done) => present.show(&ctx, &done),
        None => Ok(()),
    }
}

pub(crate) enum Target {
    New(Option<String>),
    Existing(String),
}

/// `ai chat retry ID [MODEL]`: resend the prompt of the chat's failed last turn.
pub(crate) fn retry(args: &CallArgs, id: &str, model: Option<&str>) -> Result<()> {
    let ctx = Ctx::load(args.quiet)?;
    crate::chat::store::check_id(id)?;
    let Some(id) = ctx.store.find(id) else {
        return Err(
            Error::not_found(format!("no chat '{id}'")).hint("`ai chat list` shows your chats")
        );
    };
    let route = match model {
        Some(word) => Some(
            alias::resolve(word, &ctx.config)?.ok_or_else(|| alias::unknown(word, &ctx.config))?,
        ),
        None => None,
    };
    let modes = Modes {
        json: false,
        yolo: args.yolo,
        cmd: args.cmd,
        run: args.run,
    };
    let turn = Turn {
        route,
        present: Present::of(modes, args.json, args.yes),
        modes,
        prompt: String::new(),
        title: String::new(),
    };
    let present = turn.present;
    match chat_turn(&ctx, args, Target::Existing(id), turn, Some(()))? {
        Some(done) => present.show(&ctx, &done),
        None => Ok(()),
    }
}

/// A call saved nowhere (`--no-chat`, or config `chat.save: false`).
/// `None` after `--dry-run`.
pub(crate) fn one_shot(ctx: &Ctx, args: &CallArgs, turn: Turn) -> Result<Option<Done>> {
    let route = match turn.route {
        Some(r) => r,
        None => default_route(&ctx.config)?,
    };
    let messages = [Message {
        role: Role::User,
        content: turn.prompt,
    }];
    let system = with_instruction(
        args.system
            .clone()
            .or_else(|| ctx.config.chat.system.clone()),
        turn.present,
    );
    let req = Request {
        route: &route,
        system: system.as_deref(),
        messages: &messages,
        modes: turn.modes,
        timeout: args.timeout.unwrap_or(ctx.config.timeout),
        timeout_given: args.timeout.is_some(),
        no_wait: args.no_wait,
    };
    if args.dry_run {
        output::print_stdout(&backend::dry_run(&req, &ctx.config)?)?;
        return Ok(None);
    }
    let started = Instant::now();
    let mut sink = ReplySink::new(turn.present == Present::Stream);
    if turn.present != Present::Collect {
        sink = sink.spinning(&ctx.ui, &route.label);
    }
    let sent = backend::send(&req, &ctx.config, &mut sink, &ctx.ui);
    sink.stop_spinner();
    let outcome = sent?;
    let usage = outcome.usage.clone();
    outcome.into_result()?;
    let reply = sink.finish()?;
    let ms = started.elapsed().as_millis();
    Ok(Some(Done {
        route,
        chat: None,
        reply,
        usage,
        ms,
    }))
}

/// One turn of a chat: lock → load → window → send → append → unlock → footer.
pub(crate) fn chat_turn(
    ctx: &Ctx,
    args: &CallArgs,
    target: Target,
    mut turn: Turn,
    retry: Option<()>,
) -> Result<Option<Done>> {
    let timeout = args.timeout.unwrap_or(ctx.config.timeout);
    let wait = if args.no_wait {
        Wait::No
    } else {
        Wait::UpTo(timeout)
    };
    let budget = ctx.budget();
    // Read enough of the history to fill the window: a message costs at least a token per 4
    // characters, so that much content (and a little more) always fills it.
    let need = budget.saturating_mul(4).saturating_add(4096);

    let mut chat: Option<Chat> = match &target {
        Target::Existing(id) => Some(ctx.store.open(id, wait, Some(need), &ctx.ui)?),
        // A named chat is created first thing; if another call just created it, this one
        // continues it (after that call's turn) instead of failing.
        Target::New(Some(name)) if !args.dry_run => {
            let route = match &turn.route {
                Some(r) => r.clone(),
                None => default_route(&ctx.config)?,
            };
            let header = Header {
                v: record::VERSION,
                id: String::new(),
                created: record::now(),
                model: Some(route.label),
                system: args
                    .system
                    .clone()
                    .or_else(|| ctx.config.chat.system.clone()),
                title: Some(turn.title.clone()).filter(|t| !t.is_empty()),
                summary: None,
            };
            match ctx.store.create_named(name, header)? {
                Some(c) => Some(c),
                None => Some(
                    ctx.store
                        .open(&store::file_id(name), wait, Some(need), &ctx.ui)?,
                ),
            }
        }
        Target::New(_) => None,
    };
    if retry.is_some() {
        let Some(c) = chat.as_ref() else {
            return Err(Error::usage("nothing to retry"));
        };
        // The last turn's record (a summary written since does not count).
        let last = c
            .records
            .iter()
            .rev()
            .find(|r| matches!(r, Record::Message(_) | Record::Pending(_)));
        match last {
            Some(Record::Pending(p)) => {
                turn.prompt = p.content.clone();
                if turn.route.is_none() {
                    turn.route = route_of(&p.origin, &ctx.config);
                }
            }
            _ => {
                return Err(Error::usage(format!(
                    "the last turn of chat {} did not fail; there is nothing to retry",
                    c.id
                ))
                .hint(format!("continue it instead: ai chat {} \"…\"", c.id)));
            }
        }
    }
    let route = match (turn.route.take(), chat.as_ref()) {
        (Some(r), _) => r,
        (None, Some(c)) => chat_route(c, &ctx.config)?,
        (None, None) => default_route(&ctx.config)?,
    };

    let system: Option<String> = match &chat {
        Some(c) => {
            if let Some(new) = &args.system {
                if c.header.system.as_deref() != Some(new.as_str()) && !args.dry_run {
                    let mut header = c.header.clone();
                    header.system = Some(new.clone());
                    if let Some(c) = chat.as_mut() {
                        c.rewrite_header(header)?;
                        ctx.ui
                            .notice(&format!("ai: chat {}: system prompt changed", c.id));
                    }
                }
                Some(new.clone())
            } else {
                c.header.system.clone()
            }
        }
        None => args
            .system
            .clone()
            .or_else(|| ctx.config.chat.system.clone()),
    };

    // The model's context caps the window; a long history gets a warning, or the chat's
    // `on_overflow` policy.
    let context = context::tokens(&route, &ctx.config);
    let budget = budget
        .min(usize::try_from(context.saturating_mul(3) / 4).unwrap_or(usize::MAX))
        .max(1);
    if let Some(c) = chat.as_mut() {
        let weight = compact::weigh(c, system.as_deref(), &turn.prompt);
        if weight * 100 > context * 85 {
            match ctx.config.chat.on_overflow.unwrap_or_default() {
                Overflow::Window => ctx
                    .ui
                    .warn(&compact::overflow_warning(c, &route, weight, context)),
                Overflow::Fail => {
                    let e = Error::usage(format!(
                        "chat {} is about {weight} tokens, {}% of the {context} that {} accepts",
                        c.id,
                        weight * 100 / context.max(1),
                        route.label
                    ))
                    .hint(format!(
                        "summarize it (ai chat compact {id}) and resend with ai chat retry {id}, or start a new chat",
                        id = c.id
                    ));
                    if !args.dry_run {
                        keep_pending(c, &turn.prompt, &route, &e, &ctx.ui)?;
                    }
                    return Err(e);
                }
                Overflow::Compact if !args.dry_run => {
                    ctx.ui.notice(&format!(
                        "ai: chat {} is about {weight} tokens, {}% of what {} accepts; summarizing older turns first",
                        c.id,
                        weight * 100 / context.max(1),
                        route.label
                    ));
                    // The prompt is never lost: if summarizing fails (or is interrupted), it is
                    // kept for `ai chat retry`, as a failed turn's would be.
                    let _defer = signal::Defer::start();
                    let compacted =
                        compact::run(ctx, c, &route, compact::DEFAULT_KEEP, args.timeout).and_then(
                            |_| {
                                if signal::interrupted() {
                                    Err(Error::Interrupted)
                                } else {
                                    Ok(())
                                }
                            },
                        );
                    if let Err(e) = compacted {
                        keep_pending(c, &turn.prompt, &route, &e, &ctx.ui)?;
                        return Err(e);
                    }
                }
                Overflow::Compact => {}
            }
        }
    }
    let summary = chat.as_ref().and_then(|c| c.header.summary.clone());
    let through = summary.as_ref().map_or(0, |s| s.through_turn);
    // What a new chat stores is the system prompt alone; what is sent adds the summary and a
    // mode's instruction.
    let chat_system = system;
    let system = with_instruction(
        compact::with_summary(chat_system.as_deref(), summary.as_ref()),
        turn.present,
    );
    let history: Vec<&MessageRec> = chat
        .as_ref()
        .map(|c| {
            c.messages()
                .filter(|m| m.turn.is_none_or(|t| t > through))
                .collect()
        })
        .unwrap_or_default();
    let unloaded = match &chat {
        Some(c) if !c.complete => history
            .first()
            .and_then(|m| m.turn)
            .map_or(0, |t| 2 * t.saturating_sub(1 + through) as usize),
        _ => 0,
    };
    let win = window::select(&history, unloaded, system.as_deref(), &turn.prompt, budget);
    let prior_weight = chat.as_ref().map_or(0, compact::prior_tokens);
    let turn_no = chat.as_ref().map_or(0, |c| c.turns) + 1;
    if win.left_out > 0 {
        let id = chat.as_ref().map_or("", |c| c.id.as_str());
        ctx.ui.notice(&format!(
            "ai: {} older message{} of chat {id} {} not sent (window of {budget} estimated tokens; raise \"chat.window_tokens\" in config.json to send more)",
            win.left_out,
            if win.left_out == 1 { "" } else { "s" },
            if win.left_out == 1 { "was" } else { "were" },
        ));
    }
    let req = Request {
        route: &route,
        system: system.as_deref(),
        messages: &win.messages,
        modes: turn.modes,
        timeout,
        timeout_given: args.timeout.is_some(),
        no_wait: args.no_wait,
    };
    if args.dry_run {
        output::print_stdout(&backend::dry_run(&req, &ctx.config)?)?;
        return Ok(None);
    }

    let mut chat = match chat {
        Some(c) => c,
        None => {
            let header = Header {
                v: record::VERSION,
                id: String::new(),
                created: record::now(),
                model: Some(route.label.clone()),
                system: chat_system.clone(),
                title: Some(turn.title.clone()).filter(|t| !t.is_empty()),
                summary: None,
            };
            let name = match &target {
                Target::New(name) => name.as_deref(),
                Target::Existing(_) => None,
            };
            ctx.store.create(name, header)?
        }
    };
    // From here a Ctrl+C only stops the backend: what was typed and received gets saved.
    let _defer = signal::Defer::start();

    let started = Instant::now();
    let mut sink = ReplySink::new(turn.present == Present::Stream);
    if turn.present != Present::Collect {
        sink = sink.spinning(&ctx.ui, &route.label);
    }
    let sent = backend::send(&req, &ctx.config, &mut sink, &ctx.ui);
    sink.stop_spinner();
    let outcome = match sent {
        Ok(o) => o,
        Err(e) => backend::Outcome {
            text: String::new(),
            end: End::Failed(e),
            usage: None,
        },
    };
    let ms = started.elapsed().as_millis() as u64;
    let origin = Origin {
        alias: Some(route.label.clone()),
        provider: Some(route.provider.name().to_owned()),
        model: Some(route.model.clone()),
        effort: route.effort.clone(),
    };
    let now = record::now();
    let user = |turn: u64| {
        Record::Message(MessageRec {
            role: Role::User,
            content: turn_prompt(&req),
            ts: now.clone(),
            origin: origin.clone(),
            turn: Some(turn),
            usage: None,
            ms: None,
            history_tokens: None,
            interrupted: false,
        })
    };
    let assistant = |text: &str, interrupted: bool| {
        Record::Message(MessageRec {
            role: Role::Assistant,
            content: text.to_owned(),
            ts: record::now(),
            origin: origin.clone(),
            turn: Some(turn_no),
            usage: outcome.usage.clone(),
            ms: Some(ms),
            history_tokens: Some(
                prior_weight
                    + window::estimate(&turn_prompt(&req)) as u64
                    + window::estimate(text) as u64,
            ),
            interrupted,
        })
    };
    let partial = !outcome.text.is_empty();
    let outcome_usage = outcome.usage.clone();
    let (records, result) = match outcome.end {
        End::Complete => (vec![user(turn_no), assistant(&outcome.text, false)], Ok(())),
        End::Interrupted => (
            vec![user(turn_no), assistant(&outcome.text, true)],
            Err(Error::Interrupted),
        ),
        End::Failed(Error::BrokenPipe) => (
            vec![user(turn_no), assistant(&outcome.text, true)],
            Err(Error::BrokenPipe),
        ),
        // A reply cut short (a dropped stream, an error frame): keep what arrived.
        End::Failed(e) if !outcome.text.is_empty() => {
            (vec![user(turn_no), assistant(&outcome.text, true)], Err(e))
        }
        End::Failed(e) => {
            let pending = Record::Pending(PendingRec {
                content: turn_prompt(&req),
                ts: now.clone(),
                origin: origin.clone(),
                error: e.to_string().lines().next().unwrap_or("").to_owned(),
            });
            // A failed retry leaves the one pending record it resent; no copy.
            let records = if retry.is_some() {
                Vec::new()
            } else {
                vec![pending]
            };
            (records, Err(e))
        }
    };
    chat.append(&records, &ctx.ui)?;
    let _ = write_atomic_unsynced(
        &ctx.home.dir.join("last_chat"),
        format!("{}\n", chat.id).as_bytes(),
    );
    let id = chat.id.clone();
    drop(chat); // unlock before printing the rest

    match result {
        Ok(()) => {
            let reply = sink.finish()?;
            if turn.present != Present::Collect {
                ctx.ui.notice(&format!("[chat: {id}]"));
            }
            if signal::interrupted() {
                return Err(Error::Interrupted);
            }
            Ok(Some(Done {
                route: route.clone(),
                chat: Some(id),
                reply,
                usage: outcome_usage,
                ms: u128::from(ms),
            }))
        }
        Err(Error::Interrupted) => {
            let _ = sink.finish();
            ctx.ui.notice(&format!(
                "ai: interrupted; the prompt and the partial reply are saved [chat: {id}]"
            ));
            Err(Error::Interrupted)
        }
        Err(Error::BrokenPipe) => Err(Error::BrokenPipe),
        Err(e) if partial => {
            let _ = sink.finish();
            ctx.ui.notice(&format!(
                "ai: the reply was cut short; what arrived is saved in chat {id}, marked interrupted"
            ));
            Err(e)
        }
        Err(e) => {
            ctx.ui.notice(&format!(
                "ai: the prompt is kept in chat {id}; resend it with: ai chat retry {id}"
            ));
            Err(e)
        }
    }
}

/// Save a prompt that was not sent, so `ai chat retry` can send it later.
fn keep_pending(chat: &mut Chat, prompt: &str, route: &Route, e: &Error, ui: &Ui) -> Result<()> {
    let rec = Record::Pending(PendingRec {
        content: prompt.to_owned(),
        ts: record::now(),
        origin: Origin {
            alias: Some(route.label.clone()),
            provider: Some(route.provider.name().to_owned()),
            model: Some(route.model.clone()),
            effort: route.effort.clone(),
        },
        error: e.to_string(),
    });
    chat.append(&[rec], ui)?;
    ui.notice(&format!("ai: the prompt is kept in chat {}", chat.id));
    Ok(())
}

/// The new prompt of a request (its last message).
fn turn_prompt(req: &Request<'_>) -> String {
    req.prompt().to_owned()
}

/// The route a chat's next turn takes when it names no model.
pub(crate) fn chat_route(chat: &Chat, config: &Config) -> Result<Route> {
    match last_route(chat, config) {
        Some(r) => Ok(r),
        None => default_route(config),
    }
}

/// A chat's model for a turn that names none: the last one that answered (or was asked).
fn last_route(chat: &Chat, config: &Config) -> Option<Route> {
    let from_records = chat.records.iter().rev().find_map(|r| match r {
        Record::Message(m) if m.role == Role::Assistant => route_of(&m.origin, config),
        Record::Pending(p) => route_of(&p.origin, config),
        _ => None,
    });
    from_records.or_else(|| {
        chat.header
            .model
            .as_deref()
            .and_then(|a| alias::resolve(a, config).ok().flatten())
    })
}

fn route_of(origin: &Origin, config: &Config) -> Option<Route> {
    if let Some(a) = origin.alias.as_deref()
        && let Ok(Some(r)) = alias::resolve(a, config)
    {
        return Some(r);
    }
    let (p, m) = (origin.provider.as_deref()?, origin.model.as_deref()?);
    let word = match &origin.effort {
        Some(e) => format!("{p}:{m}@{e}"),
        None => format!("{p}:{m}"),
    };
    alias::resolve(&word, config).ok().flatten()
}

/// The most recently used chat, for `ai reply`.
fn last_chat(ctx: &Ctx) -> Result<String> {
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
fn title_of(words: &str, prompt: &str) -> String {
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

/// The route of `default_alias`, when the call names no model.
fn default_route(config: &Config) -> Result<Route> {
    let Some(name) = config.default_alias.as_deref() else {
        return Err(Error::usage("no model named, and no default model is set")
            .hint("name one (ai sonnet \"…\"), or set a default: ai default sonnet"));
    };
    match alias::resolve(name, config)? {
        Some(route) => Ok(route),
        None => Err(
            Error::config(format!("the default model '{name}' is not a known alias"))
                .hint("set another with `ai default ALIAS`, or clear it with `ai default --clear`"),
        ),
    }
}
