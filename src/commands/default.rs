//! `ai default [ALIAS | --clear]`.

use serde_json::Value;

use crate::alias;
use crate::config::{Config, Home};
use crate::error::Result;
use crate::output::{self, Ui};

pub(crate) fn run(alias_name: Option<&str>, clear: bool, ui: &Ui) -> Result<()> {
    let home = Home::locate()?;
    let mut config = Config::load(&home)?;
    if clear {
        config.set_key("default_alias", None);
        config.save()?;
        ui.notice("ai: default model cleared");
        return Ok(());
    }
    let Some(name) = alias_name else {
        return match &config.default_alias {
            Some(name) => output::print_stdout(&format!("{name}\n")),
            None => {
                ui.notice("ai: no default model is set (set one with: ai default sonnet)");
                Ok(())
            }
        };
    };
    let Some(route) = alias::resolve(name, &config)? else {
        return Err(alias::unknown(name, &config));
    };
    config.set_key("default_alias", Some(Value::String(name.to_owned())));
    config.save()?;
    ui.notice(&format!(
        "ai: default model is now {name} ({} {})",
        route.provider.name(),
        route.model
    ));
    Ok(())
}
