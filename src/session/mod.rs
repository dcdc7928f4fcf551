//! `ai -i [MODEL] [--kb NAME]` and `ai chat ID -i`: a conversation at the terminal, line after
//! line. It is only a face over the stateless turn: every message is one ordinary
//! [`turn::chat`] (the chat locked, loaded, sent, appended, unlocked), so another shell can
//! continue the same chat between two lines and the next line sees it.
//!
//! Nothing here runs unless `-i` was given: a plain `ai MODEL "…"` never builds the editor.

mod ask;
mod commands;
mod editor;
mod line;

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, PoisonError};

use editor::{Complete, Editor, Read};
use line::{Command, Line, Overflow};

use crate::alias::{self, Route};
use crate::backend;
use crate::call;
use crate::chat::store::{Chat, Wait};
use crate::cli::{self, CallArgs, ChatRef, Entry};
use crate::compact;
use crate::config;
use crate::context;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::kb::ground::{self, Choice};
use crate::output;
use crate::present::Present;
use crate::route;
use crate::signal;
use crate::target::Modes;
use crate::turn::{self, Kind, Options, Target, Turn};

/// The line editor, shared with the tools' approver (which asks through it).
type Shared = Arc<Mutex<Editor>>;

/// The editor, locked for one read (never across a turn: the approver asks through it then).
fn lock(editor: &Shared) -> std::sync::MutexGuard<'_, Editor> {
    editor.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The file that keeps what was typed, in the `ai` home.
const HISTORY_FILE: &str = "history";

/// Start a session: `entry` and `words` as for a prompt call (a model, a chat ID), no prompt.
pub(crate) fn run(
    entry: Entry,
    args: &CallArgs,
    words: &[String],
    literal_from: usize,
) -> Result<()> {
    refuse(args)?;
    if !std::io::stdin().is_terminal() {
        return Err(
            Error::usage("-i needs a terminal, and standard input is not one").hint(
                "run it in a terminal; to send a prompt from a pipe, leave out -i: echo \"…\" | ai MODEL",
            ),
        );
    }
    let ctx = Ctx::load(args.quiet)?;
    let parsed = cli::resolve_words(
        entry,
        words,
        literal_from,
        args.chat.as_deref(),
        &ctx.config,
        &|w| ctx.store.find(w),
    )?;
    if !parsed.prompt.is_empty() {
        let first = parsed.prompt.split_whitespace().next().unwrap_or("");
        return Err(Error::usage(format!(
            "-i takes a model and a chat, not a prompt ('{}' is neither)",
            output::sanitize(first)
        ))
        .hint(
            "type the prompt in the session; `ai list` shows the models, `ai chat list` the chats",
        ));
    }
    if parsed.models.len() > 1 {
        return Err(Error::usage("-i takes one model")
            .hint("switch models in the session with /model NAME"));
    }
    if parsed.modes.json || parsed.modes.cmd || parsed.modes.run {
        return Err(Error::usage("-i cannot be used with json, cmd or run")
            .hint("a session shows each reply as it streams in"));
    }
    let mut opts = call::options(&ctx, args);
    opts.in_session = true;
    // Replies with their markdown styled, on a terminal only (a pipe gets them exactly).
    if ctx.config.chat.markdown.unwrap_or(true) && std::io::stdout().is_terminal() {
        output::set_markdown();
    }
    if let Choice::Names(names) = &opts.kb {
        ground::check(&ctx.home, &ctx.config, names)?;
    }
    // The tools' files are read (and checked) before anything else; the MCP servers of
    // `--mcp` start once, below, and serve every turn of the session.
    call::check_tools(&ctx, args)?;
    let (chat, name) = match parsed.chat {
        ChatRef::Plain | ChatRef::New => (None, None),
        ChatRef::Named(name) => (None, Some(name)),
        ChatRef::Existing(id) => (Some(id), None),
        ChatRef::Last => (Some(call::last_chat(&ctx)?), None),
    };
    let route = parsed.models.into_iter().next();
    if let Some(r) = &route {
        usable(r, &ctx.config)?;
    }
    let mut session = Session {
        yolo: parsed.modes.yolo || args.yolo,
        ctx,
        opts,
        route,
        chat,
        name,
        label: String::new(),
        files: Vec::new(),
        attachments: Vec::new(),
        pages: Vec::new(),
        keep_attachments: args.keep_attachments,
        last: None,
    };
    let view = session.view()?;
    // A model that cannot answer (its CLI missing, no key) is said now, not at the first line.
    usable(&view.route, &session.ctx.config)?;
    session.label = view.route.label.clone();
    let complete = Complete::new(
        alias::table(&session.ctx.config).into_keys().collect(),
        session.ctx.config.kb.bases.keys().cloned().collect(),
    );
    let editor = Editor::new(
        session.ctx.home.dir.join(HISTORY_FILE),
        complete,
        &session.ctx.ui,
    )?;
    let editor: Shared = Arc::new(Mutex::new(editor));
    // Tools that act are asked for here, in the session, through its line editor.
    session.opts.tools = Some(crate::tools::setup_asking(
        &session.ctx.config,
        args,
        Arc::new(ask::InSession {
            editor: Arc::clone(&editor),
            ui: session.ctx.ui,
        }),
    )?);
    session.welcome(&view);
    session.converse(&editor)
}

/// Options that make no sense in a session, refused before anything else.
fn refuse(args: &CallArgs) -> Result<()> {
    let refused = [
        (args.json, "--json"),
        (args.json_stream, "--json-stream"),
        (args.dry_run, "--dry-run"),
        (args.no_chat, "--no-chat"),
        (args.cmd, "--cmd"),
        (args.run, "--run"),
        (!args.files.is_empty(), "--file"),
        (args.prompting.saved_prompt.is_some(), "--prompt"),
        (args.prompting.schema.is_some(), "--schema"),
    ];
    if let Some((_, name)) = refused.iter().find(|(given, _)| *given) {
        return Err(Error::usage(format!("-i cannot be used with {name}")).hint(
            "a session streams each reply and saves every line in its chat; leave out one of them",
        ));
    }
    Ok(())
}

struct Session {
    ctx: Ctx,
    /// The turn options; `/kb` changes the knowledge bases.
    opts: Options,
    /// The model named (`-i MODEL`, `/model`); `None`: the chat's own, else the default.
    route: Option<Route>,
    /// The chat the next line continues; `None`: it starts one.
    chat: Option<String>,
    /// `--chat NAME` for a chat not yet created.
    name: Option<String>,
    yolo: bool,
    /// The label of the model that answers, for the prompt.
    label: String,
    /// Files for the next message (`/file`).
    files: Vec<crate::input::FileBlock>,
    /// Images and PDFs for the next message (`/file photo.png`).
    attachments: Vec<crate::media::Attachment>,
    /// Web pages for the next message (`/file https://…`), as its record names them.
    pages: Vec<crate::chat::record::AttachmentRec>,
    /// `--keep-attachments`: a copy of each `/file` image or PDF in the chat's folder.
    keep_attachments: bool,
    /// The last answer of this session: `/copy`, `/sources`.
    last: Option<Last>,
}

/// What the session keeps of its last answer.
struct Last {
    reply: String,
    sources: Vec<crate::kb::Hit>,
}

/// What the next turn would use.
struct View {
    route: Route,
    /// The knowledge bases it is grounded in.
    kb: Vec<String>,
    /// Exchanges so far, when a chat is continued.
    turns: Option<u64>,
}

/// What to do with a message after the context question.
enum Go {
    Send,
    /// Not sent (the question was dismissed, or summarizing failed).
    Drop,
}

impl Session {
    /// Read, dispatch, repeat, until `/exit`, `exit`, `quit` or Ctrl+D.
    fn converse(&mut self, editor: &Shared) -> Result<()> {
        loop {
            // A second signal during the last message: the process is ending (with its code,
            // 130 for Ctrl+C), whichever thread gets there first; never back to the prompt.
            if signal::ending() {
                return Err(Error::Interrupted);
            }
            // Lines set aside while a tool's question was asked come first; all others
            // (typed while a reply streamed, pasted in a burst) the line editor reads in
            // order, one by one: it keeps what it read ahead between two reads.
            let typed = lock(editor).next_ahead();
            let prompt = format!("{}> ", output::sanitize(&self.label));
            let text = match typed {
                Some(text) => {
                    self.ctx.ui.say(&format!("{prompt}{text}"));
                    text
                }
                None => {
                    let read = lock(editor).message(&prompt, &self.ctx.ui)?;
                    match read {
                        Read::End if signal::ending() => return Err(Error::Interrupted),
                        Read::End => return Ok(()),
                        Read::Cleared => continue,
                        Read::Message(text) => text,
                    }
                }
            };
            match line::classify(&text) {
                Line::Empty => {}
                Line::Unknown(word) => output::print_error(
                    &Error::usage(format!("there is no command /{word}")).hint(
                        "/help lists the commands; to send the line as it is, start it with a blank",
                    ),
                ),
                Line::Command(Command::Exit) => return Ok(()),
                Line::Command(Command::Retry) => self.retry(editor)?,
                Line::Command(Command::Edit) => {
                    if let Some(text) = self.edit() {
                        self.send(text, editor)?;
                    }
                }
                Line::Command(command) => self.command(command),
                Line::Send(message) => self.send(message.to_owned(), editor)?,
            }
        }
    }

    fn command(&mut self, command: Command<'_>) {
        match command {
            Command::Exit | Command::Retry | Command::Edit => {}
            Command::Help => self.ctx.ui.say(line::HELP),
            Command::File(arg) => self.attach(arg),
            Command::System(arg) => self.system(arg),
            Command::Copy => self.copy(),
            Command::Rename(arg) => self.rename(arg),
            Command::Sources => self.sources(),
            Command::Clear => {
                if let Some(id) = self.chat.take() {
                    self.ctx.ui.say(&format!(
                        "ai: the next line starts a new chat; chat {id} is kept (ai chat {id} -i continues it)"
                    ));
                } else {
                    self.ctx.ui.say("ai: the next line starts a new chat");
                }
                self.name = None;
                if self.route.is_none()
                    && let Ok(r) = route::default(&self.ctx.config)
                {
                    self.label = r.label;
                }
            }
            Command::Model(None) => match self.view() {
                Ok(v) => self
                    .ctx
                    .ui
                    .say(&format!("ai: {} answers", describe(&v.route))),
                Err(e) => output::print_error(&e),
            },
            Command::Model(Some(word)) => match self.switch(word) {
                Ok(r) => {
                    self.ctx
                        .ui
                        .say(&format!("ai: {} answers from now on", describe(&r)));
                    self.label = r.label.clone();
                    self.route = Some(r);
                }
                Err(e) => output::print_error(&e),
            },
            Command::Kb(None) => match self.view() {
                Ok(v) if v.kb.is_empty() => self.ctx.ui.say("ai: no knowledge base is used"),
                Ok(v) => self.ctx.ui.say(&format!(
                    "ai: answers are grounded in {}",
                    self.bases(&v.kb)
                )),
                Err(e) => output::print_error(&e),
            },
            Command::Kb(Some(arg)) => {
                let names = line::kb_names(arg);
                if let Err(e) = ground::check(&self.ctx.home, &self.ctx.config, &names) {
                    output::print_error(&e);
                    return;
                }
                if names.is_empty() {
                    self.ctx.ui.say("ai: no knowledge base from now on");
                } else {
                    self.ctx.ui.say(&format!(
                        "ai: answers are grounded in {} from now on",
                        self.bases(&names)
                    ));
                }
                // Named, as `--kb` names them: the chat remembers the choice (none for
                // `/kb off`), so another shell continuing it grounds the same way.
                self.opts.kb = Choice::Names(names);
            }
        }
    }

    /// The route of `/model WORD`, checked as a turn would check it.
    fn switch(&self, word: &str) -> Result<Route> {
        let config = &self.ctx.config;
        let route = alias::resolve(word, config)?.ok_or_else(|| alias::unknown(word, config))?;
        usable(&route, config)?;
        Ok(route)
    }

    /// One message: the context question when the chat is nearly full, then one turn. Errors of
    /// the turn are shown and the session goes on; only a signal other than Ctrl+C (or a closed
    /// stdout) ends it.
    fn send(&mut self, prompt: String, editor: &Shared) -> Result<()> {
        // Ctrl+C from here on stops this message's work, never the session.
        let _defer = signal::Defer::start();
        if !signal::forget_interrupt() {
            return Err(Error::Interrupted);
        }
        let go = match self.chat.clone() {
            Some(id) => self.room(&id, &prompt, editor),
            None => Ok(Go::Send),
        };
        let go = match go {
            Ok(go) => go,
            Err(e) if self.chat_gone() => {
                drop(e);
                Go::Drop
            }
            Err(e) => {
                self.report(e)?;
                Go::Drop
            }
        };
        if let Go::Drop = go {
            self.ctx
                .ui
                .say("ai: the line was not sent (the up arrow brings it back)");
            return if signal::forget_interrupt() {
                Ok(())
            } else {
                Err(Error::Interrupted)
            };
        }
        // Files given with /file go with this message, as -F gives them.
        let prompt = if self.files.is_empty() {
            prompt
        } else {
            crate::input::assemble(&std::mem::take(&mut self.files), None, &prompt)
        };
        let title = call::title_of(&prompt, &prompt);
        let turn = Turn {
            route: self.route.clone(),
            modes: Modes {
                yolo: self.yolo,
                ..Modes::default()
            },
            present: Present::Stream,
            prompt,
            title,
            attachments: std::mem::take(&mut self.attachments),
            pages: std::mem::take(&mut self.pages),
            schema: None,
        };
        let target = match &self.chat {
            Some(id) => Target::Existing(id.clone()),
            None => Target::New(self.name.clone()),
        };
        self.run_turn(&target, turn, Kind::Fresh)
    }

    /// One turn, its outcome kept (`/copy`, `/sources`) and its errors shown.
    fn run_turn(&mut self, target: &Target, turn: Turn, kind: Kind) -> Result<()> {
        let finished = turn::chat(&self.ctx, &self.opts, target, turn, kind);
        if let Some(id) = finished.chat {
            self.chat = Some(id);
            self.name = None;
        }
        match finished.result {
            Ok(Some(done)) => {
                self.label = done.route.label;
                self.last = Some(Last {
                    reply: done.reply,
                    sources: done.sources,
                });
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) if self.chat_gone() => {
                drop(e);
                self.ctx
                    .ui
                    .say("ai: the line was not sent (the up arrow brings it back)");
                Ok(())
            }
            Err(e) => self.report(e),
        }
    }

    /// Was the session's chat deleted (from another shell)? Then say so, once, and let the
    /// next line start a new chat rather than fail on the missing one again and again.
    fn chat_gone(&mut self) -> bool {
        let Some(id) = &self.chat else {
            return false;
        };
        if self.ctx.store.path(id).exists() {
            return false;
        }
        self.ctx.ui.say(&format!(
            "ai: chat {id} was deleted (from another shell?); the next line starts a new chat"
        ));
        self.chat = None;
        self.name = None;
        true
    }

    /// Show what went wrong with a message; `Err` only when the session must end.
    fn report(&self, e: Error) -> Result<()> {
        match e {
            // Ctrl+C: the turn saved what it had and said so; the next prompt comes.
            Error::Interrupted if signal::forget_interrupt() => Ok(()),
            Error::Interrupted | Error::BrokenPipe => Err(e),
            // Reported already, with the chat's footer.
            Error::Exit(_) => Ok(()),
            e => {
                output::print_error(&e);
                Ok(())
            }
        }
    }

    /// Past 85% of what the model accepts, ask what to do: continue as is, summarize older
    /// turns first (`ai chat compact`), or start a new chat. Asked only under the default
    /// overflow policy (`window`): `compact` and `fail` act by themselves.
    fn room(&mut self, id: &str, prompt: &str, editor: &Shared) -> Result<Go> {
        if self.ctx.config.chat.on_overflow.unwrap_or_default() != config::Overflow::Window {
            return Ok(Go::Send);
        }
        let (weight, context, route) = {
            let chat = self.peek(id)?;
            let route = self.route_of(Some(&chat))?;
            let system = self
                .opts
                .system
                .as_deref()
                .or(chat.header.system.as_deref());
            let weight = compact::weigh(&chat, system, prompt);
            (weight, context::tokens(&route, &self.ctx.config), route)
        }; // unlocked before asking
        if u128::from(weight) * 100 <= u128::from(context) * 85 {
            return Ok(Go::Send);
        }
        self.ctx.ui.say(&format!(
            "ai: chat {id} is about {weight} estimated tokens, {}% of the {context} that {} accepts",
            u128::from(weight) * 100 / u128::from(context.max(1)),
            route.label
        ));
        let choice = loop {
            let answer = lock(editor).ask("[c]ontinue, [s]ummarize, [n]ew chat? ", &self.ctx.ui)?;
            match answer {
                None => return Ok(Go::Drop),
                Some(answer) => match line::overflow_answer(&answer) {
                    Some(choice) => break choice,
                    None => self.ctx.ui.say("ai: answer c, s or n"),
                },
            }
        };
        match choice {
            Overflow::Continue => {}
            Overflow::NewChat => {
                self.ctx.ui.say(&format!(
                    "ai: a new chat starts with this line; chat {id} is kept"
                ));
                self.chat = None;
            }
            Overflow::Summarize => {
                let mut chat = self.peek(id)?;
                let timeout = self.opts.timeout_given.then_some(self.opts.timeout);
                let done =
                    compact::run(&self.ctx, &mut chat, &route, compact::DEFAULT_KEEP, timeout)?;
                drop(chat);
                if signal::interrupted() {
                    return Err(Error::Interrupted);
                }
                if done.is_none() {
                    // Said why (too few exchanges); ask again without that choice.
                    return self.continue_or_new(id, editor);
                }
            }
        }
        Ok(Go::Send)
    }

    /// After `s` found nothing to summarize: continue as is, or a new chat.
    fn continue_or_new(&mut self, id: &str, editor: &Shared) -> Result<Go> {
        loop {
            let answer = lock(editor).ask("[c]ontinue, [n]ew chat? ", &self.ctx.ui)?;
            match answer {
                None => return Ok(Go::Drop),
                Some(answer) => match line::overflow_answer(&answer) {
                    Some(Overflow::Continue) => return Ok(Go::Send),
                    Some(Overflow::NewChat) => {
                        self.ctx.ui.say(&format!(
                            "ai: a new chat starts with this line; chat {id} is kept"
                        ));
                        self.chat = None;
                        return Ok(Go::Send);
                    }
                    _ => self.ctx.ui.say("ai: answer c or n"),
                },
            }
        }
    }

    /// The chat, locked and loaded as a turn would (released when dropped).
    fn peek(&self, id: &str) -> Result<Chat> {
        let wait = if self.opts.no_wait {
            Wait::No
        } else {
            Wait::UpTo(self.opts.timeout)
        };
        let need = self.ctx.budget().saturating_mul(4).saturating_add(4096);
        self.ctx.store.open(id, wait, Some(need), &self.ctx.ui)
    }

    /// The model a turn would take: the one named, else the chat's, else the default.
    fn route_of(&self, chat: Option<&Chat>) -> Result<Route> {
        match (&self.route, chat) {
            (Some(r), _) => Ok(r.clone()),
            (None, Some(c)) => route::of_chat(c, &self.ctx.config),
            (None, None) => route::default(&self.ctx.config),
        }
    }

    /// The model, knowledge bases and size the next turn would have.
    fn view(&self) -> Result<View> {
        let chat = match &self.chat {
            Some(id) => Some(self.peek(id)?),
            None => None,
        };
        let route = self.route_of(chat.as_ref())?;
        let chat_kb = chat
            .as_ref()
            .map(|c| c.header.kb.clone())
            .unwrap_or_default();
        Ok(View {
            route,
            kb: ground::names(&self.opts.kb, &chat_kb, &self.ctx.config),
            turns: chat.as_ref().map(|c| c.turns),
        })
    }

    /// The welcome line: model, provider, chat, knowledge bases, commands.
    fn welcome(&self, view: &View) {
        let mut text = format!("ai: {}", describe(&view.route));
        if let (Some(id), Some(turns)) = (&self.chat, view.turns) {
            text.push_str(&format!(
                "; chat {id} ({turns} exchange{})",
                if turns == 1 { "" } else { "s" }
            ));
        }
        if !view.kb.is_empty() {
            text.push_str(&format!("; knowledge bases: {}", self.bases(&view.kb)));
        }
        text.push_str(&format!(". Commands: {}; Ctrl+D ends.", line::COMMANDS));
        self.ctx.ui.notice(&text);
    }

    /// `notes (120 notes), docs (no index yet)`.
    fn bases(&self, names: &[String]) -> String {
        names
            .iter()
            .map(|n| match note_count(&self.ctx.home, &self.ctx.config, n) {
                Some(1) => format!("{n} (1 note)"),
                Some(k) => format!("{n} ({k} notes)"),
                None => format!("{n} (no index yet)"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Can this model answer here: checked as a turn checks it (a key, a declared backend), and
/// its program found on PATH, so `/model NAME` says at once what the next line would say.
fn usable(route: &Route, config: &config::Config) -> Result<()> {
    backend::check(route, config)?;
    let program = match &route.provider {
        alias::Provider::Cli(cli) => cli.name(),
        alias::Provider::Custom(name) => config
            .backends
            .get(name)
            .map_or(name.as_str(), |b| b.program.as_str()),
        alias::Provider::Echo | alias::Provider::Http(_) => return Ok(()),
    };
    if backend::cli::find_program(program).is_some() {
        return Ok(());
    }
    Err(Error::backend(format!(
        "{} cannot answer here: `{}` was not found on PATH",
        route.label,
        output::sanitize(program)
    ))
    .hint("install it, or pick a model that works here (`ai list` shows them)"))
}

/// `sonnet (claude, model claude-sonnet-4-5)`.
fn describe(route: &Route) -> String {
    let mut model = route.model.clone();
    if let Some(e) = &route.effort {
        model.push_str(&format!(", effort {e}"));
    }
    format!("{} ({}, model {model})", route.label, route.provider.name())
}

/// The notes in knowledge base `name`'s index; `None` when it has none (or cannot be read).
fn note_count(home: &config::Home, config: &config::Config, name: &str) -> Option<u64> {
    let base = crate::kb::base(config, name).ok()?;
    if !crate::kb::store::exists(home, name, base) {
        return None;
    }
    let index = crate::kb::store::Index::open_base(home, name, base, false).ok()?;
    index.notes().ok()
}
