//! The one way chat files are opened: only a regular file, never through a symbolic link,
//! never blocking on a FIFO. Below the readers ([`super::read`], [`super::scan`]) and the
//! store, which all open chats through it.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::error::{Error, Result};

/// Open a chat file: only a regular file, never through a symbolic link, and never blocking on
/// a FIFO (opened non-blocking, then its type is checked). `None` when there is no such file.
pub(crate) fn open_regular(path: &Path, append: bool) -> Result<Option<File>> {
    open_checked(path, append).map_err(|r| match r {
        Refused::NotRegular(t) => not_regular(path, &t),
        Refused::Io(e) => Error::io("open", path, e),
    })
}

pub(super) enum Refused {
    NotRegular(fs::FileType),
    Io(std::io::Error),
}

pub(super) fn open_checked(
    path: &Path,
    append: bool,
) -> std::result::Result<Option<File>, Refused> {
    let opened = OpenOptions::new()
        .read(true)
        .append(append)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path);
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            // O_NOFOLLOW fails on a link (ELOOP), append on a folder (EISDIR): say what it is.
            return match fs::symlink_metadata(path) {
                Ok(m) if !m.file_type().is_file() => Err(Refused::NotRegular(m.file_type())),
                _ => Err(Refused::Io(e)),
            };
        }
    };
    let meta = file.metadata().map_err(Refused::Io)?;
    if !meta.file_type().is_file() {
        return Err(Refused::NotRegular(meta.file_type()));
    }
    Ok(Some(file))
}

pub(super) fn kind_of(t: &fs::FileType) -> &'static str {
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a device"
    }
}

fn not_regular(path: &Path, t: &fs::FileType) -> Error {
    let hint = if t.is_symlink() {
        "ai does not follow symbolic links in the chats folder: move the file itself there"
    } else {
        "move it out of the chats folder; ai reads and writes only regular files there"
    };
    Error::config(format!(
        "chat file {} is not a regular file ({})",
        path.display(),
        kind_of(t)
    ))
    .hint(hint)
}
