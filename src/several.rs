//! Several models at once: `ai opus pro gpt "prompt"`.

use std::time::Instant;

use crate::alias::Route;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::output;
use crate::present::{Done, JsonReply, Present, print_json};
use crate::turn::{self, Finished, Kind, Options, Target, Turn};

/// Several models at once (`ai opus pro gpt "…"`): each runs in parallel as a turn of its own
/// (and, when saving, its own new chat); the answers come in the order given, each under a
/// header with its model and time, as soon as it and those before it are done. One failure
/// does not hide the others; the exit code reports the first one.
pub(crate) fn several(
    ctx: &Ctx,
    opts: &Options,
    turn: Turn,
    models: Vec<Route>,
    save: bool,
    target: Target,
) -> Result<()> {
    match target {
        Target::New(None) => {}
        _ => {
            return Err(Error::usage(
                "several models at once start new chats; they cannot continue one",
            )
            .hint("name one model to continue a chat, e.g. ai chat ID opus \"…\""));
        }
    }
    if matches!(turn.present, Present::Command | Present::Run { .. }) {
        return Err(Error::usage("cmd and run take one model")
            .hint("name one model, e.g. ai run sonnet \"…\""));
    }
    let json = turn.present == Present::Json;
    let each = |route: Route| Turn {
        route: Some(route),
        modes: turn.modes,
        present: Present::Collect,
        prompt: turn.prompt.clone(),
        title: turn.title.clone(),
        attachments: turn.attachments.clone(),
        pages: turn.pages.clone(),
        schema: turn.schema.clone(),
    };
    // Each model's result, and the chat it wrote to (also when it failed).
    let go = |t: Turn| -> Finished {
        if save {
            turn::chat(ctx, opts, &Target::New(None), t, Kind::Fresh)
        } else {
            Finished {
                result: turn::one_shot(ctx, opts, t),
                chat: None,
            }
        }
    };
    if opts.dry_run {
        for route in models {
            output::print_stdout(&format!("── {} ──\n", route.label))?;
            go(each(route)).result?;
        }
        return Ok(());
    }
    let started = Instant::now();
    let done = std::sync::atomic::AtomicBool::new(false);
    let reader_gone = std::sync::atomic::AtomicBool::new(false);
    let results: Vec<(Route, Finished, u128)> = std::thread::scope(|scope| {
        // The reader of stdout may leave while the models still run (`| head -1` after the
        // first answer): then nothing else will be read, so every call is stopped at once.
        if !json {
            let (done, reader_gone) = (&done, &reader_gone);
            scope.spawn(move || watch_stdout(done, reader_gone));
        }
        let handles: Vec<_> = models
            .iter()
            .map(|route| {
                let t = each(route.clone());
                let go = &go;
                scope.spawn(move || go(t))
            })
            .collect();
        let mut results = Vec::new();
        let mut gone = false;
        for (route, handle) in models.into_iter().zip(handles) {
            let mut finished = handle.join().unwrap_or_else(|_| Finished {
                result: Err(Error::backend("this model's call failed unexpectedly")),
                chat: None,
            });
            let ms = started.elapsed().as_millis();
            if !json && !gone {
                // Printed as soon as this answer and those before it are in.
                if let Err(Error::BrokenPipe) = show_one(&route, &finished.result, ms) {
                    // Nobody reads the other answers: stop them rather than wait and pay;
                    // their chats are still listed.
                    crate::signal::stop_everything();
                    gone = true;
                    reader_gone.store(true, std::sync::atomic::Ordering::SeqCst);
                    finished.result = Err(Error::BrokenPipe);
                }
            }
            results.push((route, finished, ms));
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        results
    });
    if json {
        let items: Vec<JsonReply<'_>> = results
            .iter()
            .map(|(route, Finished { result, chat }, ms)| match result {
                Ok(Some(done)) => JsonReply::of(done),
                Ok(None) | Err(_) => JsonReply {
                    sources: Vec::new(),
                    tool_calls: &[],
                    reply: None,
                    // A failed model's prompt is kept in its chat: scripts need that ID.
                    chat: chat.as_deref(),
                    model: &route.model,
                    provider: route.provider.name(),
                    alias: &route.label,
                    usage: None,
                    elapsed_ms: *ms,
                    error: Some(match result {
                        Err(e) => e.to_string(),
                        _ => String::new(),
                    }),
                },
            })
            .collect();
        print_json(&items, true)?;
    }
    let chats: Vec<String> = results
        .iter()
        .filter_map(|(route, finished, _)| {
            finished
                .chat
                .as_ref()
                .map(|id| format!("{} {id}", route.label))
        })
        .collect();
    if !chats.is_empty() {
        ctx.ui.notice(&format!("[chats: {}]", chats.join(", ")));
    }
    // Nobody reads stdout any more: end quietly, as one model would.
    if reader_gone.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(Error::BrokenPipe);
    }
    let mut failures = results.into_iter().filter_map(|(_, f, _)| f.result.err());
    match failures.next() {
        None => Ok(()),
        Some(Error::BrokenPipe) => Err(Error::BrokenPipe),
        Some(first) => Err(Error::Exit(first.exit_code())),
    }
}

/// One answer of several: a header on stdout, then the reply (or the error on stderr).
fn show_one(route: &Route, result: &Result<Option<Done>>, ms: u128) -> Result<()> {
    let secs = ms as f64 / 1000.0;
    match result {
        Ok(Some(done)) => {
            let secs = done.ms as f64 / 1000.0;
            let mut text = format!("── {} · {secs:.1}s ──\n{}", route.label, done.reply);
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push('\n');
            output::print_foreign(&text)
        }
        Ok(None) => Ok(()),
        Err(e) => {
            output::print_stdout(&format!(
                "── {} · failed after {secs:.1}s ──\n\n",
                route.label
            ))?;
            output::print_error(e);
            Ok(())
        }
    }
}

/// Until `done`: if stdout is a pipe whose reader has gone, stop every call under way.
fn watch_stdout(done: &std::sync::atomic::AtomicBool, gone: &std::sync::atomic::AtomicBool) {
    use std::sync::atomic::Ordering;
    while !done.load(Ordering::SeqCst) {
        let mut fd = libc::pollfd {
            fd: libc::STDOUT_FILENO,
            events: 0,
            revents: 0,
        };
        // SAFETY: one pollfd on our own stdout, for at most 100 ms.
        let n = unsafe { libc::poll(&mut fd, 1, 100) };
        if n > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
            gone.store(true, Ordering::SeqCst);
            crate::signal::stop_everything();
            return;
        }
        if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}
