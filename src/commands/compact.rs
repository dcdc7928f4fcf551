//! `ai chat compact ID [--keep N]`: summarize a chat's older turns now.

use std::time::Duration;

use crate::chat::store::Wait;
use crate::compact;
use crate::ctx::Ctx;
use crate::error::Result;
use crate::output;
use crate::route;

pub(crate) fn run(
    ctx: &Ctx,
    id: &str,
    keep: u64,
    timeout: Option<Duration>,
    no_wait: bool,
) -> Result<()> {
    let id = super::chat::existing(ctx, id)?;
    let wait = if no_wait {
        Wait::No
    } else {
        Wait::UpTo(timeout.unwrap_or(ctx.config.timeout))
    };
    let mut chat = ctx.store.open(&id, wait, None, &ctx.ui)?;
    let route = route::of_chat(&chat, &ctx.config)?;
    match compact::run(ctx, &mut chat, &route, keep, timeout)? {
        Some(summary) => output::print_foreign(&format!("{}\n", summary.content.trim_end())),
        None => Ok(()),
    }
}
