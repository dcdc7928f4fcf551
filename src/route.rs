//! Which model a turn goes to when the call names none: the chat's own (the last one that
//! answered, or was asked), else the default.

use crate::alias::{self, Route};
use crate::chat::record::{Origin, Record, Role};
use crate::chat::store::Chat;
use crate::config::Config;
use crate::error::{Error, Result};

/// The route a chat's next turn takes when it names no model.
pub(crate) fn of_chat(chat: &Chat, config: &Config) -> Result<Route> {
    match last(chat, config) {
        Some(r) => Ok(r),
        None => default(config),
    }
}

/// A chat's model for a turn that names none: the last one that answered (or was asked).
fn last(chat: &Chat, config: &Config) -> Option<Route> {
    let from_records = chat.records.iter().rev().find_map(|r| match r {
        Record::Message(m) if m.role == Role::Assistant => of_origin(&m.origin, config),
        Record::Pending(p) => of_origin(&p.origin, config),
        _ => None,
    });
    from_records.or_else(|| {
        chat.header
            .model
            .as_deref()
            .and_then(|a| alias::resolve(a, config).ok().flatten())
    })
}

/// The route a record was written by, if it still resolves.
pub(crate) fn of_origin(origin: &Origin, config: &Config) -> Option<Route> {
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

/// The route of `default_alias`, when the call names no model.
pub(crate) fn default(config: &Config) -> Result<Route> {
    let Some(name) = config.default_alias.as_deref() else {
        return Err(
            Error::usage("no model named, and no default model is set").hint(format!(
                "name one (`ai list` shows them all), or {}",
                alias::default_hint(config)
            )),
        );
    };
    match alias::resolve(name, config)? {
        Some(route) => Ok(route),
        None => Err(
            Error::config(format!("the default model '{name}' is not a known alias"))
                .hint("set another with `ai default ALIAS`, or clear it with `ai default --clear`"),
        ),
    }
}

/// Who answered, as recorded with each message.
pub(crate) fn origin(route: &Route) -> Origin {
    Origin {
        alias: Some(route.label.clone()),
        provider: Some(route.provider.name().to_owned()),
        model: Some(route.model.clone()),
        effort: route.effort.clone(),
    }
}
