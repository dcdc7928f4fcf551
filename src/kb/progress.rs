//! A one-line progress bar on stderr while a sync works: only on a terminal, never with `-q`,
//! redrawn at most ten times a second, and cleared when done.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::output::Ui;

pub(crate) struct Progress {
    on: bool,
    what: &'static str,
    total: u64,
    last: Option<Instant>,
    shown: bool,
    /// Said with the count: items a second since the start.
    rate: Option<Instant>,
}

impl Progress {
    pub(crate) fn new(ui: &Ui, what: &'static str, total: u64) -> Progress {
        Progress {
            on: !ui.quiet && total > 0 && std::io::stderr().is_terminal(),
            what,
            total,
            last: None,
            shown: false,
            rate: None,
        }
    }

    /// Also show how many items a second are done (passages/s while embedding).
    pub(crate) fn with_rate(mut self) -> Progress {
        self.rate = Some(Instant::now());
        self
    }

    pub(crate) fn set(&mut self, done: u64) {
        if !self.on {
            return;
        }
        let now = Instant::now();
        match self.last {
            // The first draw waits a moment: a quick sync never flashes a bar.
            None => {
                self.last = Some(now);
                return;
            }
            Some(t) if now.duration_since(t) < Duration::from_millis(100) => return,
            Some(_) => {}
        }
        self.last = Some(now);
        const WIDTH: u64 = 30;
        let filled = (done.min(self.total) * WIDTH / self.total.max(1)) as usize;
        let bar = format!(
            "{}{}",
            "█".repeat(filled),
            "░".repeat(WIDTH as usize - filled)
        );
        let rate = self.rate.map_or_else(String::new, |t| {
            let secs = now.duration_since(t).as_secs_f64().max(0.001);
            format!(" ({:.0}/s)", done as f64 / secs)
        });
        let _ = write!(
            std::io::stderr().lock(),
            "\r{bar} {done}/{} {}{rate}\x1b[K",
            self.total,
            self.what
        );
        self.shown = true;
    }

    pub(crate) fn finish(&mut self) {
        if self.shown {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
            self.shown = false;
        }
        self.on = false;
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
