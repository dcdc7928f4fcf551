//! Chat IDs and names: what a valid one is, how a name is stored, and fresh generated IDs.

use rand::Rng;

use crate::error::{Error, Result};

/// Is `s` a valid chat ID or name? (`[A-Za-z0-9_-]{1,64}`: never a path.)
pub(crate) fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Does `s` have the shape of a generated ID (3–8 letters and digits, at least one digit)?
pub(crate) fn id_shaped(s: &str) -> bool {
    (3..=8).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_alphanumeric())
        && s.bytes().any(|b| b.is_ascii_digit())
}

/// How a chat given a name is stored: an ID of the generated shape as it is (upper-case), any
/// other name lower-case. So `find` needs only the word as typed, upper- and lower-cased.
pub(crate) fn file_id(name: &str) -> String {
    if id_shaped(name) && name == name.to_ascii_uppercase() {
        name.to_owned()
    } else {
        name.to_ascii_lowercase()
    }
}

pub(crate) fn check_id(s: &str) -> Result<()> {
    if valid_id(s) {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "'{}' is not a valid chat ID",
            crate::output::sanitize(s)
        ))
        .hint("chat IDs are letters, digits, - and _ (up to 64); `ai chat list` shows yours"))
    }
}

/// Generated IDs: `len` characters of A–Z0–9, at least one a digit.
pub(super) fn random_id(len: usize) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    loop {
        let id: String = (0..len)
            .map(|_| CHARS[rng.random_range(0..CHARS.len())] as char)
            .collect();
        if id.bytes().any(|b| b.is_ascii_digit()) {
            return id;
        }
    }
}

/// How many generated IDs of this length exist.
pub(super) fn space(len: usize) -> u64 {
    let len = u32::try_from(len).unwrap_or(12).min(12);
    36u64.pow(len) - 26u64.pow(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(id_shaped("K7Q") && id_shaped("k7q") && !id_shaped("fix") && !id_shaped("ab"));
        assert!(valid_id("work-notes_1") && !valid_id("../../etc/passwd") && !valid_id(""));
        for _ in 0..100 {
            let id = random_id(3);
            assert!(id_shaped(&id) && id == id.to_ascii_uppercase());
        }
        assert_eq!(space(3), 46656 - 17576);
    }
}
