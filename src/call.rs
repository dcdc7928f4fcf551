//! A prompt call: words → route, prompt → backend → reply on stdout.

use std::time::Instant;

use serde::Serialize;

use crate::alias::{self, Route};
use crate::backend::{self, Message, Request, Role};
use crate::cli::{self, CallArgs, Modes};
use crate::config::{Config, Home};
use crate::error::{Error, Result};
use crate::input;
use crate::output::{self, ReplySink, Ui};

pub(crate) fn run(args: &CallArgs, words: &[String], literal_from: usize) -> Result<()> {
    let ui = Ui::new(args.quiet);
    let home = Home::locate()?;
    let config = Config::load(&home)?;
    let parsed = cli::resolve_words(words, literal_from, &config)?;
    let modes = Modes {
        json: parsed.modes.json || args.json,
        yolo: parsed.modes.yolo || args.yolo,
    };
    let route = match parsed.models.into_iter().next() {
        Some(route) => route,
        None => default_route(&config)?,
    };

    let files = input::read_files(&args.files, &ui)?;
    let stdin = if args.no_stdin {
        None
    } else {
        input::read_stdin(!parsed.prompt.is_empty() || !files.is_empty(), &ui)?
    };
    let prompt = input::assemble(&files, stdin.as_deref(), &parsed.prompt);
    if prompt.trim().is_empty() {
        return Err(Error::usage("no prompt given").hint(format!(
            "ai {} \"your question\", or pipe text in: echo hi | ai {}",
            route.label, route.label
        )));
    }

    let messages = [Message {
        role: Role::User,
        content: prompt,
    }];
    let req = Request {
        route: &route,
        system: None,
        messages: &messages,
        modes,
        timeout: args.timeout.unwrap_or(config.timeout),
    };
    if args.dry_run {
        return output::print_stdout(&backend::dry_run(&req, &config)?);
    }

    let started = Instant::now();
    let mut sink = ReplySink::new(!modes.json);
    let outcome = backend::send(&req, &config, &mut sink, &ui)?;
    outcome.into_result()?;
    let reply = sink.finish()?;
    if modes.json {
        print_json(&route, &reply, started.elapsed().as_millis())?;
    }
    Ok(())
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

#[derive(Serialize)]
struct JsonReply<'a> {
    reply: &'a str,
    model: &'a str,
    provider: &'a str,
    alias: &'a str,
    elapsed_ms: u128,
}

fn print_json(route: &Route, reply: &str, elapsed_ms: u128) -> Result<()> {
    let obj = JsonReply {
        reply,
        model: &route.model,
        provider: route.provider.name(),
        alias: &route.label,
        elapsed_ms,
    };
    let mut text = serde_json::to_string(&obj)
        .map_err(|e| Error::backend(format!("cannot encode JSON: {e}")))?;
    text.push('\n');
    output::print_stdout(&text)
}
