//! The first step of a turn: settle the route, lock and load the chat, and (for a retry) find
//! the prompt to resend. Everything that can fail for lack of a key or a bad provider setting
//! fails here, before anything is written.

use super::types::{Kind, Options, Target, Turn};
use crate::alias::Route;
use crate::backend;
use crate::chat::record::{self, Header, Record, Role};
use crate::chat::store::{self, Chat, Wait};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::route;

/// A turn with its route settled and its chat (if any) locked and loaded.
pub(super) struct Opened {
    pub(super) chat: Option<Chat>,
    pub(super) route: Route,
    pub(super) turn: Turn,
    pub(super) kind: Kind,
    /// A retry of a turn whose reply was cut short or empty: that turn's number. Its exchange
    /// is left out of what is sent (the new turn replaces it); it stays on disk.
    pub(super) supersedes: Option<u64>,
    /// A retry resends a pending record: the prompt is on disk as that record already.
    pub(super) from_pending: bool,
}

/// Open the chat a turn continues (or the named chat it starts).
pub(super) fn open(
    ctx: &Ctx,
    opts: &Options,
    target: &Target,
    mut turn: Turn,
    kind: Kind,
) -> Result<Opened> {
    let wait = if opts.no_wait {
        Wait::No
    } else {
        Wait::UpTo(opts.timeout)
    };
    // Read enough of the history to fill the window: a message costs at least a token per 4
    // characters, so that much content (and a little more) always fills it.
    let need = ctx.budget().saturating_mul(4).saturating_add(4096);
    if let Some(r) = &turn.route {
        backend::check(r, &ctx.config)?;
        crate::attach::check(r, &turn.attachments, &ctx.config)?;
        if !opts.dry_run {
            backend::installed(r, &ctx.config)?;
        }
    }
    let mut chat: Option<Chat> = match target {
        Target::Existing(id) => Some(ctx.store.open(id, wait, Some(need), &ctx.ui)?),
        // A named chat is created first thing; if another call just created it, this one
        // continues it (after that call's turn) instead of failing.
        Target::New(Some(name)) if !opts.dry_run => {
            let route = match &turn.route {
                Some(r) => r.clone(),
                None => {
                    let r = route::default(&ctx.config)?;
                    backend::check(&r, &ctx.config)?;
                    crate::attach::check(&r, &turn.attachments, &ctx.config)?;
                    backend::installed(&r, &ctx.config)?;
                    r
                }
            };
            let header = header(
                &route,
                opts.system
                    .clone()
                    .or_else(|| ctx.config.chat.system.clone()),
                &turn.title,
            );
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
    let mut supersedes = None;
    let mut from_pending = false;
    if kind == Kind::Retry {
        let Some(c) = chat.as_mut() else {
            return Err(Error::usage("nothing to retry"));
        };
        let (prompt, origin, turn_no, pending, attached) = resend(c)?;
        turn.prompt = prompt;
        // The turn goes again with what was attached to it: the web pages as recorded (their
        // text is in the prompt), the images and PDFs read again, each checked against its
        // recorded hash.
        for rec in attached {
            if rec.url.is_some() {
                turn.pages.push(rec);
            } else {
                turn.attachments
                    .push(crate::attach::reread(&ctx.store, &c.id, rec)?);
            }
        }
        supersedes = turn_no;
        from_pending = pending;
        if turn.route.is_none() {
            turn.route = route::of_origin(&origin, &ctx.config);
        }
    }
    let route = match (turn.route.take(), chat.as_ref()) {
        (Some(r), _) => r,
        (None, Some(c)) => route::of_chat(c, &ctx.config)?,
        (None, None) => route::default(&ctx.config)?,
    };
    backend::check(&route, &ctx.config)?;
    crate::attach::check(&route, &turn.attachments, &ctx.config)?;
    if !opts.dry_run {
        backend::installed(&route, &ctx.config)?;
    }
    Ok(Opened {
        chat,
        route,
        turn,
        kind,
        supersedes,
        from_pending,
    })
}

/// A turn saved nowhere.
pub(super) fn unsaved(ctx: &Ctx, mut turn: Turn) -> Result<Opened> {
    let route = match turn.route.take() {
        Some(r) => r,
        None => route::default(&ctx.config)?,
    };
    backend::check(&route, &ctx.config)?;
    crate::attach::check(&route, &turn.attachments, &ctx.config)?;
    Ok(Opened {
        chat: None,
        route,
        turn,
        kind: Kind::Fresh,
        supersedes: None,
        from_pending: false,
    })
}

/// What `ai chat retry` resends: the prompt of a failed last turn (a pending record), or of a
/// turn whose reply was cut short or came back empty. With the record's origin, and the turn
/// it replaces (none for a pending prompt, which never became a turn).
type Resend = (
    String,
    record::Origin,
    Option<u64>,
    bool,
    Vec<record::AttachmentRec>,
);

fn resend(chat: &mut Chat) -> Result<Resend> {
    // The last turn's record (a summary written since does not count).
    let last = chat
        .records
        .iter()
        .rev()
        .find(|r| matches!(r, Record::Message(_) | Record::Pending(_)));
    let nothing = || {
        Error::usage(format!(
            "the last turn of chat {} did not fail; there is nothing to retry",
            chat.id
        ))
        .hint(format!("continue it instead: ai chat {} \"…\"", chat.id))
    };
    match last {
        Some(Record::Pending(p)) => Ok((
            p.content.clone(),
            p.origin.clone(),
            p.replaces,
            true,
            p.attachments.clone(),
        )),
        Some(Record::Message(m)) if m.role == Role::Assistant && (m.interrupted || m.empty) => {
            let turn = m.turn;
            let origin = m.origin.clone();
            let asked = chat.records.iter().rev().find_map(|r| match r {
                Record::Message(u) if u.role == Role::User && u.turn == turn => {
                    Some((u.content.clone(), u.attachments.clone()))
                }
                _ => None,
            });
            match asked {
                Some((prompt, attached)) => Ok((prompt, origin, turn, false, attached)),
                None => Err(nothing()),
            }
        }
        // A prompt whose turn got rounds but never its reply (cut short after them).
        Some(Record::Message(m)) if m.role == Role::User => Ok((
            m.content.clone(),
            m.origin.clone(),
            m.turn,
            false,
            m.attachments.clone(),
        )),
        _ => Err(nothing()),
    }
}

pub(super) fn header(route: &Route, system: Option<String>, title: &str) -> Header {
    Header {
        v: record::VERSION,
        id: String::new(),
        created: record::now(),
        model: Some(route.label.clone()),
        system,
        title: Some(title.to_owned()).filter(|t| !t.is_empty()),
        summary: None,
        kb: Vec::new(),
        kb_tools: false,
    }
}
