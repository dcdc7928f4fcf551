//! `max_requests_per_minute` per provider. Every call is its own process, so the budget lives in
//! a small locked state file, `<home>/state/rate-<provider>.json`, holding the start times of
//! the requests of the last minute.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::config::create_private_dir;
use crate::error::{Error, Result};
use crate::output::Ui;

const WINDOW_MS: u64 = 60_000;

#[derive(Serialize, Deserialize, Default)]
struct State {
    /// Unix milliseconds at which requests started.
    starts: Vec<u64>,
}

/// Take one request from the budget, waiting for room (or failing with `no_wait`).
pub(crate) fn acquire(
    home: &Path,
    provider: &str,
    per_minute: u32,
    no_wait: bool,
    ui: &Ui,
) -> Result<()> {
    let dir = home.join("state");
    create_private_dir(&dir)?;
    let path = dir.join(format!("rate-{provider}.json"));
    let mut told = false;
    loop {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|e| Error::io("open", &path, e))?;
        file.lock().map_err(|e| Error::io("lock", &path, e))?;
        let now = now_ms();
        let mut state = read(&mut file);
        state
            .starts
            .retain(|t| now.saturating_sub(*t) < WINDOW_MS && *t <= now + WINDOW_MS);
        if state.starts.len() < per_minute as usize {
            state.starts.push(now);
            write(&mut file, &state).map_err(|e| Error::io("write", &path, e))?;
            return Ok(());
        }
        let oldest = state.starts.iter().copied().min().unwrap_or(now);
        let wait = Duration::from_millis((oldest + WINDOW_MS).saturating_sub(now).max(10));
        drop(file); // unlock while waiting
        if no_wait {
            return Err(Error::busy(format!(
                "the rate limit of {per_minute} requests a minute for {provider} is used up (room again in {:.0}s)",
                wait.as_secs_f64().ceil()
            ))
            .hint("wait, or leave out --no-wait to wait for it; the limit is \"max_requests_per_minute\" in config.json"));
        }
        if !told {
            told = true;
            ui.notice(&format!(
                "ai: waiting {:.0}s for the rate limit of {provider} ({per_minute} requests a minute)",
                wait.as_secs_f64().ceil()
            ));
        }
        // In short steps: Ctrl+C ends the wait (and nothing is sent).
        let until = std::time::Instant::now() + wait;
        while std::time::Instant::now() < until {
            if crate::signal::interrupted() {
                return Err(Error::Interrupted);
            }
            std::thread::sleep(
                Duration::from_millis(50)
                    .min(until.saturating_duration_since(std::time::Instant::now())),
            );
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn read(file: &mut File) -> State {
    let mut text = String::new();
    let _ = file.read_to_string(&mut text);
    serde_json::from_str(&text).unwrap_or_default()
}

fn write(file: &mut File, state: &State) -> std::io::Result<()> {
    let text = serde_json::to_vec(state).unwrap_or_default();
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&text)
}
