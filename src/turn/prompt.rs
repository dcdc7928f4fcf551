//! The second step: what the model is sent. The system prompt (the chat's, and a mode's
//! instruction), the summary of older turns as quoted data in the first user message (never in
//! the system role), the newest whole exchanges that fit the window, and the new prompt. The
//! chat's overflow policy runs here.

use super::open::Opened;
use super::pending;
use super::types::{Kind, Options};
use crate::alias::Provider;
use crate::chat::window;
use crate::compact;
use crate::config::Overflow;
use crate::context;
use crate::conversation::{Message, Part, Role};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::kb::{self, ground::Choice};
use crate::present::Present;
use crate::signal;

/// A turn ready to send.
pub(crate) struct Prepared {
    /// The system prompt as sent: the chat's (or the config's), then a mode's instruction.
    pub(crate) system: Option<String>,
    /// The system prompt a new chat stores.
    pub(crate) chat_system: Option<String>,
    /// The window of earlier exchanges, then the new prompt.
    pub(crate) messages: Vec<Message>,
    /// Estimated tokens of the conversation before this turn (since the latest summary).
    pub(crate) prior_weight: u64,
    /// The number this turn gets.
    pub(crate) turn_no: u64,
    /// The notes retrieved for this turn (knowledge bases), in the order they were quoted.
    pub(crate) sources: Vec<crate::kb::Hit>,
    /// The knowledge bases a new chat remembers.
    pub(crate) chat_kb: Vec<String>,
    /// A new chat remembers that they are tools (`--tools`).
    pub(crate) chat_kb_tools: bool,
    /// The tools the model may call this turn (HTTP providers).
    pub(crate) tools: Option<crate::tools::Toolbox>,
}

impl Prepared {
    /// Take the new prompt out (to be stored once the turn is sent).
    pub(crate) fn take_prompt(&mut self) -> String {
        match self.messages.last_mut().and_then(|m| m.parts.last_mut()) {
            Some(Part::Text(t)) => std::mem::take(t),
            _ => String::new(),
        }
    }
}

/// The whole prompt of a chat turn (or of a new chat's first turn).
pub(super) fn prepare(ctx: &Ctx, opts: &Options, opened: &mut Opened) -> Result<Prepared> {
    let route = opened.route.clone();
    // The prompt is held once: it moves into the new message at the end of this step.
    let prompt = std::mem::take(&mut opened.turn.prompt);
    // A new system prompt for an existing chat is written once the turn is known to go ahead
    // (after the overflow policy), so a refused turn changes nothing.
    let mut new_system = false;
    let chat_system: Option<String> = match opened.chat.as_ref() {
        Some(c) => match &opts.system {
            Some(new) => {
                new_system = c.header.system.as_deref() != Some(new.as_str()) && !opts.dry_run;
                Some(new.clone())
            }
            None => c.header.system.clone(),
        },
        None => opts
            .system
            .clone()
            .or_else(|| ctx.config.chat.system.clone()),
    };
    // A refused resend adds nothing: its prompt is on disk already (pending, or as the prompt
    // of the turn it replaces).
    let keep_pending = opened.kind != Kind::Retry;
    let system = instructed(chat_system.clone(), opened);

    // The model's context caps the window; a long history gets a warning, or the chat's
    // `on_overflow` policy.
    let context = context::tokens(&route, &ctx.config);
    let budget = ctx
        .budget()
        .min(usize::try_from(context.saturating_mul(3) / 4).unwrap_or(usize::MAX))
        .max(1);
    if opened.chat.is_none() {
        alone(ctx, &route, system.as_deref(), &prompt, context)?;
    }
    if let Some(c) = opened.chat.as_mut() {
        // A retry replaces a turn: that turn is not sent, so it does not count.
        let replaced: u64 = opened.supersedes.map_or(0, |t| {
            window::history(&c.records, 0)
                .iter()
                .filter(|e| e.turn() == Some(t))
                .map(|e| match e {
                    window::Entry::Message(m) => window::estimate(&m.content) as u64,
                    window::Entry::Round(r) => {
                        let [calls, results] = window::round(r);
                        (window::estimate_message(&calls) + window::estimate_message(&results))
                            as u64
                    }
                })
                .sum()
        });
        let weight = compact::weigh(c, system.as_deref(), &prompt).saturating_sub(replaced);
        let share = u128::from(weight) * 100 / u128::from(context.max(1));
        if u128::from(weight) * 100 > u128::from(context) * 85 {
            match ctx.config.chat.on_overflow.unwrap_or_default() {
                // `ai -i` asked already ([c]ontinue, [s]ummarize, [n]ew chat).
                Overflow::Window if opts.in_session => {}
                Overflow::Window => ctx
                    .ui
                    .warn(&compact::overflow_warning(c, &route, weight, context)),
                Overflow::Fail => {
                    let e = Error::usage(format!(
                        "chat {} is about {weight} tokens, {share}% of the {context} that {} accepts",
                        c.id, route.label
                    ))
                    .hint(format!(
                        "summarize it (ai chat compact {id}) and resend with ai chat retry {id}, or start a new chat",
                        id = c.id
                    ));
                    if !opts.dry_run && keep_pending {
                        pending::keep(c, &prompt, &route, &e, opened.turn.records(), &ctx.ui)?;
                    }
                    return Err(e);
                }
                Overflow::Compact if !opts.dry_run => {
                    ctx.ui.notice(&format!(
                        "ai: chat {} is about {weight} tokens, {share}% of what {} accepts; summarizing older turns first",
                        c.id, route.label
                    ));
                    // The prompt is never lost: if summarizing fails (or is interrupted), it is
                    // kept for `ai chat retry`, as a failed turn's would be.
                    let _defer = signal::Defer::start();
                    let compacted = compact::run(
                        ctx,
                        c,
                        &route,
                        compact::DEFAULT_KEEP,
                        opts.timeout_given.then_some(opts.timeout),
                    )
                    .and_then(|_| {
                        if signal::interrupted() {
                            Err(Error::Interrupted)
                        } else {
                            Ok(())
                        }
                    });
                    if let Err(e) = compacted {
                        if keep_pending {
                            pending::keep(c, &prompt, &route, &e, opened.turn.records(), &ctx.ui)?;
                        }
                        return Err(e);
                    }
                }
                Overflow::Compact => {}
            }
        }
    }

    if new_system && let Some(c) = opened.chat.as_mut() {
        let mut header = c.header.clone();
        header.system = chat_system.clone();
        c.rewrite_header(header)?;
        ctx.ui
            .notice(&format!("ai: chat {}: system prompt changed", c.id));
    }
    let chat_kb = opened
        .chat
        .as_ref()
        .map(|c| c.header.kb.clone())
        .unwrap_or_default();
    let chat_kb_tools = opened.chat.as_ref().is_some_and(|c| c.header.kb_tools);
    let previous = opened.chat.as_ref().and_then(|c| {
        window::history(&c.records, 0)
            .iter()
            .rev()
            .find_map(|e| match e {
                window::Entry::Message(m) if m.role == crate::chat::record::Role::User => {
                    Some(m.content.clone())
                }
                _ => None,
            })
    });
    let (system, sources, tools, kb_tools) = ground(
        ctx,
        opts,
        &route,
        (&chat_kb, chat_kb_tools),
        system,
        &prompt,
        previous.as_deref(),
    )?;
    // `--kb` names what the chat uses from now on; `--tools` (when it gave the model knowledge
    // bases) that they are tools, `--kb` without it that they are not.
    let remember = match &opts.kb {
        Choice::Names(n) if !opts.dry_run => Some(n.clone()),
        _ => None,
    };
    let asked_tools = opts.tools.as_ref().is_some_and(|s| s.kb_tools);
    let remember_tools = match () {
        _ if opts.dry_run => None,
        _ if asked_tools && kb_tools => Some(true),
        _ if remember.is_some() && !asked_tools => Some(false),
        _ => None,
    };
    if let Some(c) = opened.chat.as_mut() {
        let mut header = c.header.clone();
        if let Some(names) = &remember {
            header.kb = names.clone();
        }
        if let Some(t) = remember_tools {
            header.kb_tools = t;
        }
        if header != c.header {
            c.rewrite_header(header)?;
        }
    }
    let new = grounded_message(prompt, &sources, opened.turn.attachments.clone());
    let Some(chat) = opened.chat.as_ref() else {
        return Ok(Prepared {
            system,
            chat_system,
            messages: vec![new],
            prior_weight: 0,
            turn_no: 1,
            sources: sources.unwrap_or_default(),
            chat_kb: remember.unwrap_or_default(),
            chat_kb_tools: remember_tools.unwrap_or(false),
            tools,
        });
    };
    let summary = chat.header.summary.as_ref().map(|s| Part::Summary {
        through_turn: s.through_turn,
        text: s.content.clone(),
    });
    let through = chat.header.summary.as_ref().map_or(0, |s| s.through_turn);
    let mut history = window::history(&chat.records, through);
    if let Some(old) = opened.supersedes {
        history.retain(|e| e.turn() != Some(old));
    }
    let unloaded = if chat.complete {
        0
    } else {
        history
            .first()
            .and_then(|e| e.turn())
            .map_or(0, |t| 2 * t.saturating_sub(1 + through) as usize)
    };
    let fixed = system.as_deref().map_or(0, window::estimate)
        + window::estimate_message(&new)
        + summary.as_ref().map_or(0, |s| {
            window::estimate_message(&Message {
                role: Role::User,
                parts: vec![s.clone()],
            })
        });
    let win = window::select(&history, unloaded, fixed, budget);
    if win.left_out > 0 {
        ctx.ui.notice(&format!(
            "ai: {} older message{} of chat {} {} not sent (window of {budget} estimated tokens; raise \"chat.window_tokens\" in config.json to send more)",
            win.left_out,
            if win.left_out == 1 { "" } else { "s" },
            chat.id,
            if win.left_out == 1 { "was" } else { "were" },
        ));
    }
    let mut messages = win.messages;
    crate::attach::resend_kept(
        &ctx.store,
        &chat.id,
        &route,
        &ctx.config,
        &mut messages,
        &opened.turn.attachments,
    );
    messages.push(new);
    // The summary leads the first user message, quoted: it is a record of the conversation,
    // not an instruction.
    if let Some(s) = summary {
        messages[0].parts.insert(0, s);
    }
    Ok(Prepared {
        system,
        chat_system,
        messages,
        prior_weight: compact::prior_tokens(chat),
        turn_no: chat.turns + 1,
        sources: sources.unwrap_or_default(),
        chat_kb: Vec::new(),
        chat_kb_tools: false,
        tools,
    })
}

/// What a grounded turn returns: the system prompt, the notes retrieved, the tools, and
/// whether its knowledge bases are tools.
type Grounded = (
    Option<String>,
    Option<Vec<crate::kb::Hit>>,
    Option<crate::tools::Toolbox>,
    bool,
);

/// Retrieval for a grounded turn: the system prompt with the grounding instruction, and the
/// notes found. Not grounded: the system prompt as it was, no notes. With knowledge-base tools
/// (`--tools`, a chat that remembers it, config `kb.mode: "tools"`; an HTTP provider, and a
/// call that reads tools) nothing is retrieved: the model gets the tools, and the instruction
/// to use them. `chat`: the chat's knowledge bases, and whether they are tools.
fn ground(
    ctx: &Ctx,
    opts: &Options,
    route: &crate::alias::Route,
    chat: (&[String], bool),
    system: Option<String>,
    prompt: &str,
    previous: Option<&str>,
) -> Result<Grounded> {
    let (chat_kb, chat_tools) = chat;
    let mut names = kb::ground::names(&opts.kb, chat_kb, &ctx.config);
    let setup = opts.tools.as_ref();
    let http = matches!(route.provider, Provider::Http(_));
    let asked = setup.is_some_and(|s| s.kb_tools);
    // `--tools`; else `--kb` without it chooses anew (the config decides); else the chat's.
    let remembered = chat_tools && !matches!(opts.kb, Choice::Names(_));
    if (asked || remembered) && names.is_empty() && opts.kb == Choice::Default {
        // `--tools` alone: every registered knowledge base.
        names = ctx.config.kb.bases.keys().cloned().collect();
    }
    // (A CLI backend retrieves instead.)
    let kb_tools = http
        && setup.is_some()
        && (asked || remembered || ctx.config.kb.mode == Some(crate::config::kb::Mode::Tools))
        && !names.is_empty();
    let kb_names = kb_tools.then(|| names.clone());
    let tools = match setup {
        Some(s) if http => crate::tools::Toolbox::new(s, kb_names),
        _ => None,
    };
    if kb_tools {
        let ask = ctx
            .config
            .kb
            .system
            .clone()
            .unwrap_or_else(|| crate::tools::kb::SYSTEM.to_owned());
        let system = Some(match system {
            Some(s) => format!("{s}\n\n{ask}"),
            None => ask,
        });
        return Ok((system, None, tools, true));
    }
    if names.is_empty() {
        return Ok((system, None, tools, false));
    }
    // Notes written since the last sync count (a dry run changes nothing).
    if !opts.dry_run {
        for name in &names {
            if let Ok(base) = kb::base(&ctx.config, name)
                && kb::store::exists(&ctx.home, name, base)
            {
                kb::fresh::refresh(&ctx.home, &ctx.config, name, base, &ctx.ui);
            }
        }
    }
    let query = kb::ground::query(prompt, previous);
    let deadline = std::time::Instant::now().checked_add(opts.timeout);
    let hits = kb::ground::retrieve(
        &ctx.home,
        &ctx.config,
        &names,
        &query,
        !opts.dry_run,
        deadline,
        &ctx.ui,
    )?;
    let ask = kb::ground::system(&ctx.config, !hits.is_empty());
    let system = Some(match system {
        Some(s) => format!("{s}\n\n{ask}"),
        None => ask,
    });
    Ok((system, Some(hits), tools, false))
}

/// The new user message: the quoted notes (when grounded), the attachments, then the prompt
/// (last: `Prepared::take_prompt` takes it from there).
fn grounded_message(
    prompt: String,
    sources: &Option<Vec<crate::kb::Hit>>,
    attachments: Vec<crate::media::Attachment>,
) -> Message {
    let mut parts = Vec::with_capacity(attachments.len() + 2);
    if let Some(hits) = sources {
        parts.push(Part::Sources(kb::ground::sources(hits)));
    }
    parts.extend(attachments.into_iter().map(Part::Attachment));
    parts.push(Part::Text(prompt));
    Message {
        role: Role::User,
        parts,
    }
}

/// The overflow policy for a prompt with no history (a new chat, or one saved nowhere): the
/// prompt alone may pass 85% of what the model accepts.
fn alone(
    ctx: &Ctx,
    route: &crate::alias::Route,
    system: Option<&str>,
    prompt: &str,
    context: u64,
) -> Result<()> {
    let weight = (system.map_or(0, window::estimate) + window::estimate(prompt)) as u64;
    if u128::from(weight) * 100 <= u128::from(context) * 85 {
        return Ok(());
    }
    let share = u128::from(weight) * 100 / u128::from(context.max(1));
    let what = format!(
        "the prompt alone is about {weight} estimated tokens, {share}% of the {context} that {} accepts",
        route.label
    );
    match ctx.config.chat.on_overflow.unwrap_or_default() {
        Overflow::Fail => Err(Error::usage(what)
            .hint("send less of it, or a model with a larger context (\"context_tokens\" in config.json sets one)")),
        Overflow::Window | Overflow::Compact => {
            ctx.ui.warn(&format!("{what}; it may be refused or cut"));
            Ok(())
        }
    }
}

/// The prompt of a turn saved nowhere.
pub(super) fn unsaved(ctx: &Ctx, opts: &Options, opened: &mut Opened) -> Result<Prepared> {
    let chat_system = opts
        .system
        .clone()
        .or_else(|| ctx.config.chat.system.clone());
    let context = context::tokens(&opened.route, &ctx.config);
    let system = instructed(chat_system.clone(), opened);
    alone(
        ctx,
        &opened.route,
        system.as_deref(),
        &opened.turn.prompt,
        context,
    )?;
    let prompt = std::mem::take(&mut opened.turn.prompt);
    let route = opened.route.clone();
    let (system, sources, tools, _) =
        ground(ctx, opts, &route, (&[], false), system, &prompt, None)?;
    Ok(Prepared {
        system,
        chat_system,
        messages: vec![grounded_message(
            prompt,
            &sources,
            opened.turn.attachments.clone(),
        )],
        prior_weight: 0,
        turn_no: 1,
        sources: sources.unwrap_or_default(),
        chat_kb: Vec::new(),
        chat_kb_tools: false,
        tools,
    })
}

/// The system prompt as sent: the chat's, then what the mode asks of the model.
fn instructed(system: Option<String>, opened: &Opened) -> Option<String> {
    let mut asks: Vec<String> = Vec::new();
    if let Some(i) = opened.turn.present.instruction() {
        asks.push(i);
    }
    // The `json` word asks the model for JSON. HTTP providers have a native switch; a CLI
    // backend (but ollama, which has --format json) is asked in words, and its own JSON
    // envelope is never requested: the answer is what gets stored.
    if opened.turn.modes.json && opened.turn.present != Present::Command {
        let cli = matches!(
            &opened.route.provider,
            Provider::Cli(c) if *c != crate::alias::Cli::Ollama
        ) || matches!(&opened.route.provider, Provider::Custom(_));
        if cli {
            asks.push(crate::target::JSON_ASK.to_owned());
        }
    }
    // `--schema`: HTTP providers are given the schema in their own way (a response format, a
    // forced tool), and so are the CLIs with a flag for it (claude, codex); another CLI is
    // told in the system prompt.
    if let Some(schema) = &opened.turn.schema
        && !matches!(&opened.route.provider, Provider::Http(_))
        && !matches!(&opened.route.provider, Provider::Cli(c) if crate::backend::cli::takes_schema(*c))
    {
        asks.push(crate::schema::instruction(schema));
    }
    let mut out = system;
    for ask in asks {
        out = Some(match out {
            Some(s) => format!("{s}\n\n{ask}"),
            None => ask,
        });
    }
    out
}
