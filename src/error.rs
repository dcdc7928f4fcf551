//! One error type for the whole program: each variant knows its message, its hint and its exit
//! code, so `main` never has to guess how a failure should look or end.

use std::fmt;
use std::path::PathBuf;

/// Exit codes, as documented in the README.
pub(crate) mod code {
    pub(crate) const BACKEND: i32 = 1;
    pub(crate) const USAGE: i32 = 2;
    pub(crate) const CONFIG: i32 = 3;
    pub(crate) const NOT_FOUND: i32 = 4;
    pub(crate) const BUSY: i32 = 75;
}

#[derive(Debug)]
pub(crate) enum Error {
    /// Bad arguments or input (exit 2).
    Usage { msg: String, hint: Option<String> },
    /// Invalid or unreadable config (exit 3).
    Config { msg: String, hint: Option<String> },
    /// Unknown alias, provider or chat (exit 4).
    NotFound { msg: String, hint: Option<String> },
    /// A backend failed, could not start, or timed out (exit 1).
    Backend { msg: String, hint: Option<String> },
    /// Something is busy and `--no-wait` was given (exit 75).
    Busy { msg: String, hint: Option<String> },
    /// Ctrl+C, SIGTERM, SIGHUP or SIGQUIT (exit 128 + the signal: 130, 143, 129, 131). Nothing
    /// more to say.
    Interrupted,
    /// stdout was closed by the reader (`ai … | head -1`): end quietly with 0.
    BrokenPipe,
    /// A command `ai` ran for the user (`run` mode) ended with this code; it spoke for itself.
    Exit(i32),
    /// An I/O failure on a file of ours.
    Io {
        path: PathBuf,
        what: &'static str,
        source: std::io::Error,
    },
}

pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

/// `Err(Interrupted)` when a signal came, also one still on its way to the listening thread
/// ([`crate::signal::interrupted_now`]): the one check before a point of no return (the commit
/// of a `kb copy`, the switch of a rebuilt index, the deletions of a sync), so that a Ctrl+C
/// that came before it is never answered by an exit 0 after it. Here, not in `signal`, which
/// `error` imports.
pub(crate) fn stop_if_interrupted() -> Result<()> {
    if crate::signal::interrupted_now() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

impl Error {
    pub(crate) fn usage(msg: impl Into<String>) -> Self {
        Error::Usage {
            msg: msg.into(),
            hint: None,
        }
    }
    pub(crate) fn config(msg: impl Into<String>) -> Self {
        Error::Config {
            msg: msg.into(),
            hint: None,
        }
    }
    pub(crate) fn not_found(msg: impl Into<String>) -> Self {
        Error::NotFound {
            msg: msg.into(),
            hint: None,
        }
    }
    pub(crate) fn backend(msg: impl Into<String>) -> Self {
        Error::Backend {
            msg: msg.into(),
            hint: None,
        }
    }
    pub(crate) fn busy(msg: impl Into<String>) -> Self {
        Error::Busy {
            msg: msg.into(),
            hint: None,
        }
    }
    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            what,
            source,
        }
    }

    /// Attach (or replace) the hint line.
    pub(crate) fn hint(mut self, text: impl Into<String>) -> Self {
        let text = Some(text.into());
        match &mut self {
            Error::Usage { hint, .. }
            | Error::Config { hint, .. }
            | Error::NotFound { hint, .. }
            | Error::Backend { hint, .. }
            | Error::Busy { hint, .. } => *hint = text,
            Error::Interrupted | Error::BrokenPipe | Error::Exit(_) | Error::Io { .. } => {}
        }
        self
    }

    /// Add lines to the message (indented under it); errors without a message are kept as
    /// they are.
    pub(crate) fn with_detail(mut self, detail: &str) -> Self {
        match &mut self {
            Error::Usage { msg, .. }
            | Error::Config { msg, .. }
            | Error::NotFound { msg, .. }
            | Error::Backend { msg, .. }
            | Error::Busy { msg, .. } => {
                msg.push_str("\n  ");
                msg.push_str(detail);
            }
            Error::Interrupted | Error::BrokenPipe | Error::Exit(_) | Error::Io { .. } => {}
        }
        self
    }

    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            Error::Usage { .. } => code::USAGE,
            Error::Config { .. } => code::CONFIG,
            Error::NotFound { .. } => code::NOT_FOUND,
            Error::Backend { .. } | Error::Io { .. } => code::BACKEND,
            Error::Busy { .. } => code::BUSY,
            // 130 for Ctrl+C, 143 for SIGTERM: 128 + the signal's number.
            Error::Interrupted => crate::signal::exit_code(),
            Error::BrokenPipe => 0,
            Error::Exit(code) => *code,
        }
    }

    pub(crate) fn hint_text(&self) -> Option<&str> {
        match self {
            Error::Usage { hint, .. }
            | Error::Config { hint, .. }
            | Error::NotFound { hint, .. }
            | Error::Backend { hint, .. }
            | Error::Busy { hint, .. } => hint.as_deref(),
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => {
                Some("check the permissions of the file and its folder")
            }
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage { msg, .. }
            | Error::Config { msg, .. }
            | Error::NotFound { msg, .. }
            | Error::Backend { msg, .. }
            | Error::Busy { msg, .. } => f.write_str(msg),
            Error::Interrupted => f.write_str("interrupted"),
            Error::BrokenPipe => f.write_str("broken pipe"),
            Error::Exit(code) => write!(f, "the command exited with {code}"),
            Error::Io { path, what, source } => {
                write!(f, "cannot {what} {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for Error {}
