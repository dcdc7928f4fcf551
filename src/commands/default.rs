//! `ai default [ALIAS | --clear]`.

use serde_json::Value;

use crate::alias;
use crate::config::{Config, Home};
use crate::error::Result;
use crate::output::{self, Ui};

pub(crate) fn run(alias_name: Option<&str>, clear: bool, ui: &Ui) -> Result<()> {
    let home = Home::locate()?;
    if clear {
        Config::update(&home, |config| {
            config.set_key("default_alias", None);
            Ok(())
        })?;
        ui.notice("ai: default model cleared");
        return Ok(());
    }
    let config = Config::load(&home)?;
    let Some(name) = alias_name else {
        return match &config.default_alias {
            Some(name) => output::print_stdout(&format!("{name}\n")),
            None => {
                ui.notice("ai: no default model is set (set one with: ai default sonnet)");
                Ok(())
            }
        };
    };
    // Checked against the file as it is when it is changed (under the config lock).
    let (_, route) = Config::update(&home, |config| {
        let Some(route) = alias::resolve(name, config)? else {
            return Err(alias::unknown(name, config));
        };
        config.set_key("default_alias", Some(Value::String(name.to_owned())));
        Ok(route)
    })?;
    ui.notice(&format!(
        "ai: default model is now {name} ({} {})",
        route.provider.name(),
        route.model
    ));
    Ok(())
}
