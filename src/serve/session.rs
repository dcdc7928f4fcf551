//! Browser sessions for the page. A plain link (a source opening `/kb/NAME/note/ID`) cannot
//! carry an `Authorization` header, so the page trades the bearer token once (`POST /session`)
//! for a cookie: a random ID, kept in memory only (a restart ends every session), sent back as
//! `HttpOnly` (no script reads it) and `SameSite=Strict` (no other site's page or link makes the
//! browser send it). The server accepts either the bearer header or such a cookie.
//!
//! The cookie is named after the port (`ai_session_8765`): browsers share cookies between the
//! ports of one host, and two servers must not overwrite each other's.

use std::collections::VecDeque;
use std::sync::Mutex;

use rand::Rng;

/// The most sessions kept; the oldest is forgotten when a new one would pass it.
const MAX_SESSIONS: usize = 64;

pub(super) struct Sessions {
    port: u16,
    ids: Mutex<VecDeque<String>>,
}

impl Sessions {
    pub(super) fn new(port: u16) -> Sessions {
        Sessions {
            port,
            ids: Mutex::new(VecDeque::new()),
        }
    }

    fn cookie_name(&self) -> String {
        format!("ai_session_{}", self.port)
    }

    /// A new session: its `Set-Cookie` value.
    pub(super) fn open(&self) -> String {
        let mut rng = rand::rng();
        let id: String = (0..32)
            .map(|_| format!("{:x}", rng.random_range(0..16u8)))
            .collect();
        if let Ok(mut ids) = self.ids.lock() {
            if ids.len() >= MAX_SESSIONS {
                ids.pop_front();
            }
            ids.push_back(id.clone());
        }
        format!(
            "{}={id}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie_name()
        )
    }

    /// Does this `Cookie` header hold a session of this server?
    pub(super) fn valid(&self, cookie: Option<&str>) -> bool {
        let Some(given) = cookie.and_then(|c| find_cookie(c, &self.cookie_name())) else {
            return false;
        };
        let Ok(ids) = self.ids.lock() else {
            return false;
        };
        // Every one compared, in time that does not depend on where they differ.
        ids.iter().fold(false, |found, id| {
            super::guard::same_secret(given, id) | found
        })
    }
}

/// The value of cookie `name` in a `Cookie` header (`a=1; b=2`).
fn find_cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|pair| {
        let (k, v) = pair.trim().split_once('=')?;
        (k.trim() == name).then(|| v.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_opened_and_recognised() {
        let s = Sessions::new(8765);
        let set = s.open();
        assert!(set.starts_with("ai_session_8765="), "{set}");
        assert!(
            set.ends_with("; Path=/; HttpOnly; SameSite=Strict"),
            "{set}"
        );
        let pair = set.split(';').next().unwrap();
        assert!(s.valid(Some(pair)));
        assert!(s.valid(Some(&format!("x=1; {pair}; y=2"))));
        let value = pair.split_once('=').unwrap().1;
        assert_eq!(value.len(), 32);
        for bad in [
            None,
            Some(""),
            Some("ai_session_8765="),
            Some("ai_session_8765=0123"),
            Some("ai_session_8766=x"),
        ] {
            assert!(!s.valid(bad), "{bad:?}");
        }
        // Another port's cookie with the same value is not this server's.
        assert!(!s.valid(Some(&format!("ai_session_8766={value}"))));
        assert!(!Sessions::new(8766).valid(Some(pair)));
    }

    #[test]
    fn old_sessions_are_forgotten() {
        let s = Sessions::new(1);
        let first = s.open();
        let first = first.split(';').next().unwrap().to_owned();
        for _ in 0..MAX_SESSIONS {
            s.open();
        }
        assert!(!s.valid(Some(&first)));
    }
}
