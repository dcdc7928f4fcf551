//! What every command needs, settled once per call: the UI, the home folder, the config and
//! the chat store.

use crate::chat::store::Store;
use crate::config::{Config, DEFAULT_WINDOW_TOKENS, Home};
use crate::error::Result;
use crate::output::Ui;

pub(crate) struct Ctx {
    pub(crate) ui: Ui,
    pub(crate) home: Home,
    pub(crate) config: Config,
    pub(crate) store: Store,
}

impl Ctx {
    pub(crate) fn load(quiet: bool) -> Result<Ctx> {
        let ui = Ui::new(quiet);
        let home = Home::locate()?;
        let config = Config::load(&home)?;
        let store = Store::new(&home);
        Ok(Ctx {
            ui,
            home,
            config,
            store,
        })
    }

    /// The window budget in estimated tokens (`chat.window_tokens`).
    pub(crate) fn budget(&self) -> usize {
        self.config
            .chat
            .window_tokens
            .unwrap_or(DEFAULT_WINDOW_TOKENS)
    }
}
