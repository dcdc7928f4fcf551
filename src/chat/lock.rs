//! Exclusive locks on chat files: a bounded wait that says who holds the chat, and the check
//! that the path still names the file a waiter finally locked.

use std::fs::{self, File};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::output::Ui;

/// Whether to wait for a chat another call is using.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wait {
    /// Wait up to this long (saying so on stderr after a moment).
    UpTo(Duration),
    /// `--no-wait`: fail at once with the busy exit code.
    No,
}

pub(super) fn lock(file: &File, id: &str, wait: Wait, ui: &Ui, path: &Path) -> Result<()> {
    match file.try_lock() {
        Ok(()) => return Ok(()),
        Err(fs::TryLockError::WouldBlock) => {}
        Err(fs::TryLockError::Error(e)) => return Err(Error::io("lock", path, e)),
    }
    let limit = match wait {
        Wait::No => {
            return Err(
                Error::busy(format!("chat {id} is in use by another ai call"))
                    .hint("try again when it is done, or leave out --no-wait to wait for it"),
            );
        }
        Wait::UpTo(limit) => limit,
    };
    let start = Instant::now();
    let mut told = false;
    let mut pause = Duration::from_millis(2);
    loop {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
        // Ctrl+C while waiting (a turn defers signals from before the lock on).
        if crate::signal::interrupted() {
            return Err(Error::Interrupted);
        }
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(e)) => return Err(Error::io("lock", path, e)),
        }
        if !told && start.elapsed() > Duration::from_millis(700) {
            told = true;
            ui.notice(&format!("ai: chat {id} is in use by another ai call; waiting for it (--no-wait fails at once)"));
        }
        if start.elapsed() > limit {
            return Err(Error::busy(format!(
                "chat {id} stayed in use by another ai call for {}",
                crate::fmt::human_duration(limit)
            ))
            .hint("check for a hung ai process (ps), or try again later"));
        }
    }
}

/// Does `path` still name the file we hold? Err(()) when the path is gone.
pub(super) fn same_file(file: &File, path: &Path) -> std::result::Result<bool, ()> {
    let held = file.metadata().map_err(|_| ())?;
    match fs::metadata(path) {
        Ok(now) => Ok(held.dev() == now.dev() && held.ino() == now.ino()),
        Err(_) => Err(()),
    }
}
