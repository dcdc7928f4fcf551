//! Small text formatters shared by every layer: one version of each, so that a duration, a size
//! or a one-line quote reads the same in a notice, an error and a table.

use std::time::Duration;

use crate::sanitize::sanitize;

/// Foreign text as one line for a message, a heading or a table cell: made safe for a terminal
/// ([`sanitize`]), runs of whitespace (newlines included) joined into single spaces, and cut to
/// at most `max` characters with an ellipsis (`usize::MAX`: never cut).
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat = sanitize(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match flat.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// A duration as people write it: `45s`, `2.5s` (under 10 s, with a fraction), `3m`, `3m 20s`.
pub(crate) fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        format!("{}m", secs / 60)
    } else if secs >= 60 {
        format!("{}m {}s", secs / 60, secs % 60)
    } else if d.subsec_millis() > 0 && secs < 10 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{secs}s")
    }
}

/// A size in bytes: `512 B`, `1.5 KiB`, `5.0 MiB`.
pub(crate) fn human_size(bytes: u64) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    } else if bytes >= 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_flattens_cleans_and_cuts() {
        assert_eq!(one_line("a\n\n b\tc  ", 80), "a b c");
        assert_eq!(one_line("x\x1b]0;t\x07y \u{202e}z", 80), "xy \\u{202e}z");
        assert_eq!(one_line("héllo wörld", 5), "héllo…");
        assert_eq!(one_line("short", 5), "short");
        assert_eq!(one_line("", 3), "");
        assert_eq!(one_line("a b", usize::MAX), "a b");
    }

    #[test]
    fn durations() {
        assert_eq!(human_duration(Duration::from_secs(45)), "45s");
        assert_eq!(human_duration(Duration::from_millis(2500)), "2.5s");
        assert_eq!(human_duration(Duration::from_millis(12_500)), "12s");
        assert_eq!(human_duration(Duration::from_secs(180)), "3m");
        assert_eq!(human_duration(Duration::from_secs(200)), "3m 20s");
        assert_eq!(human_duration(Duration::ZERO), "0s");
    }

    #[test]
    fn sizes() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.0 MiB");
    }

    /// Same results as the copies still in use, so switching a call site changes nothing.
    #[test]
    fn agrees_with_the_copies_it_replaces() {
        for secs in [0.0, 0.25, 1.5, 9.99, 10.0, 59.0, 60.0, 61.0, 3600.0, 1e6] {
            let d = Duration::from_secs_f64(secs);
            assert_eq!(human_duration(d), crate::fmt::human_duration(d));
        }
        for n in [0, 1, 1023, 1024, 1_048_575, 1_048_576, u64::MAX] {
            assert_eq!(human_size(n), crate::fmt::human_size(n));
        }
    }
}
