//! `ai chat retry ID [MODEL]`: resend the prompt of a chat's last turn that failed, was cut
//! short or came back empty.

use crate::alias;
use crate::call;
use crate::cli::{CallArgs, Modes};
use crate::ctx::Ctx;
use crate::error::Result;
use crate::present::Present;
use crate::turn::{self, Kind, Target, Turn};

pub(crate) fn run(args: &CallArgs, id: &str, model: Option<&str>) -> Result<()> {
    if args.json_stream {
        crate::output::set_json_stream();
    }
    let ctx = Ctx::load(args.quiet)?;
    let id = super::chat::existing(&ctx, id)?;
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
    let present = call::present_of(args, modes, false)?;
    if let Present::Run { yes } = present {
        crate::modes::check_can_ask(yes)?;
    }
    let turn = Turn {
        route,
        present,
        modes,
        prompt: String::new(),
        title: String::new(),
        attachments: Vec::new(),
        pages: Vec::new(),
        schema: None,
    };
    let opts = call::options_with_tools(&ctx, args)?;
    match turn::chat(&ctx, &opts, &Target::Existing(id), turn, Kind::Retry).result? {
        Some(done) => present.show(&ctx.ui, &done),
        None => Ok(()),
    }
}
