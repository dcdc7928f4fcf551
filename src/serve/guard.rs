//! Who may talk to `ai serve`: the `Host` must name the address served (a page whose own name
//! was pointed at 127.0.0.1 by DNS rebinding is refused), an `Origin` must be that same
//! address (a page elsewhere is refused), a POST body must be JSON (so a browser sends a
//! preflight, which a cross-origin page cannot pass), and the bearer token must match.

use std::net::{IpAddr, SocketAddr};

use crate::error::{Error, Result};

/// The fewest characters a token may have.
const MIN_TOKEN: usize = 16;

/// A token given with `--token` or `AI_CLI_SERVER_TOKEN`: long enough to resist guessing, and
/// one word that a client can send in a header as it is.
pub(super) fn check_token(token: &str, from: &str) -> Result<()> {
    let hint =
        "leave --token and AI_CLI_SERVER_TOKEN out, and ai serve makes a strong one and prints it";
    if token.chars().count() < MIN_TOKEN {
        return Err(Error::usage(format!(
            "the token from {from} is too short: use at least {MIN_TOKEN} characters"
        ))
        .hint(hint));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::usage(format!(
            "the token from {from} holds spaces or control characters, which a header cannot carry"
        ))
        .hint(hint));
    }
    Ok(())
}

/// The address being served.
#[derive(Debug, Clone, Copy)]
pub(super) struct Served {
    pub(super) addr: SocketAddr,
}

impl Served {
    /// Does `host` (a `Host` header) name this server? Its port must be ours, and its name the
    /// address we are bound to, `localhost` when that is a loopback address, or (bound to all
    /// addresses) any address literal. A name other than `localhost` is never accepted: an IP
    /// literal cannot be rebound by DNS, a name can.
    pub(super) fn host_ok(&self, host: &str) -> bool {
        let Some((name, port)) = split_host(host) else {
            return false;
        };
        if port != self.addr.port() {
            return false;
        }
        let bound = self.addr.ip();
        if name.eq_ignore_ascii_case("localhost") {
            return bound.is_loopback() || bound.is_unspecified();
        }
        match name.parse::<IpAddr>() {
            Ok(ip) => ip == bound || bound.is_unspecified() || same_v4(ip, bound),
            Err(_) => false,
        }
    }

    /// Is `origin` (an `Origin` header) this server, as named by `host` (already checked)?
    pub(super) fn origin_ok(&self, origin: &str, host: &str) -> bool {
        origin
            .strip_prefix("http://")
            .is_some_and(|o| o.eq_ignore_ascii_case(host))
    }
}

/// `::ffff:127.0.0.1` and `127.0.0.1` are the same address.
fn same_v4(a: IpAddr, b: IpAddr) -> bool {
    let v4 = |ip: IpAddr| match ip {
        IpAddr::V4(v) => Some(v),
        IpAddr::V6(v) => v.to_ipv4_mapped(),
    };
    v4(a).is_some() && v4(a) == v4(b)
}

/// `name:port`, `[v6]:port`, or a name alone (port 80).
fn split_host(host: &str) -> Option<(&str, u16)> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        match after {
            "" => (name, None),
            p => (name, Some(p.strip_prefix(':')?)),
        }
    } else {
        match host.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (host, None),
        }
    };
    if name.is_empty() {
        return None;
    }
    let port = match port {
        None => 80,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok()?,
        Some(_) => return None,
    };
    Some((name, port))
}

/// Is this `Content-Type` JSON (`application/json`, with parameters or not)?
pub(super) fn is_json(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|ct| ct.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// Does an `Authorization` header carry `token`? The scheme is compared case-insensitively
/// (`bearer x` works), the token in time that does not depend on it or on its length.
pub(super) fn authorized(header: Option<&str>, token: &str) -> bool {
    let Some(value) = header else { return false };
    let value = value.trim();
    let Some((scheme, given)) = value.split_once([' ', '\t']) else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer") && same_secret(given.trim(), token)
}

/// Compare two secrets by their SHA-256 digests, in constant time: neither where they differ
/// nor how long they are shows in the time taken.
pub(super) fn same_secret(given: &str, token: &str) -> bool {
    use ring::digest::{SHA256, digest};
    let (a, b) = (
        digest(&SHA256, given.as_bytes()),
        digest(&SHA256, token.as_bytes()),
    );
    same(a.as_ref(), b.as_ref())
}

/// Equal bytes, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(addr: &str) -> Served {
        Served {
            addr: addr.parse().unwrap(),
        }
    }

    #[test]
    fn hosts_must_name_the_served_address() {
        let s = served("127.0.0.1:8765");
        for ok in [
            "127.0.0.1:8765",
            "localhost:8765",
            "LOCALHOST:8765",
            "[::ffff:127.0.0.1]:8765",
        ] {
            assert!(s.host_ok(ok), "{ok}");
        }
        for bad in [
            "evil.com:8765",
            "127.0.0.1:8766",
            "127.0.0.1",
            "127.0.0.2:8765",
            "localhost.evil.com:8765",
            "127.0.0.1.nip.io:8765",
            "",
            ":8765",
            "127.0.0.1:",
            "127.0.0.1:+8765",
            "[::1:8765",
            "127.0.0.1:8765:1",
        ] {
            assert!(!s.host_ok(bad), "{bad}");
        }
        let v6 = served("[::1]:9000");
        assert!(v6.host_ok("[::1]:9000") && v6.host_ok("localhost:9000"));
        assert!(!v6.host_ok("127.0.0.1:9000") && !v6.host_ok("::1:9000"));
        let all = served("0.0.0.0:80");
        assert!(all.host_ok("192.168.1.9") && all.host_ok("10.0.0.1:80"));
        assert!(!all.host_ok("evil.com") && !all.host_ok("10.0.0.1:81"));
        let lan = served("192.168.1.9:8765");
        assert!(lan.host_ok("192.168.1.9:8765") && !lan.host_ok("localhost:8765"));
    }

    #[test]
    fn origins_must_be_the_server_itself() {
        let s = served("127.0.0.1:8765");
        assert!(s.origin_ok("http://127.0.0.1:8765", "127.0.0.1:8765"));
        assert!(s.origin_ok("http://localhost:8765", "localhost:8765"));
        for bad in [
            "http://evil.com",
            "null",
            "https://127.0.0.1:8765",
            "http://localhost:8765",
            "http://127.0.0.1:8765/",
        ] {
            assert!(!s.origin_ok(bad, "127.0.0.1:8765"), "{bad}");
        }
    }

    #[test]
    fn bearer_tokens() {
        let t = "0123456789abcdef";
        for ok in [
            "Bearer 0123456789abcdef",
            "bearer 0123456789abcdef",
            "BEARER   0123456789abcdef ",
            "Bearer\t0123456789abcdef",
        ] {
            assert!(authorized(Some(ok), t), "{ok}");
        }
        for bad in [
            None,
            Some(""),
            Some("Bearer"),
            Some("Bearer "),
            Some("Basic 0123456789abcdef"),
            Some("Bearer 0123456789abcde"),
            Some("Bearer 0123456789abcdefX"),
            Some("0123456789abcdef"),
        ] {
            assert!(!authorized(bad, t), "{bad:?}");
        }
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"abc", b"ab"));
    }

    #[test]
    fn tokens_must_be_long_and_one_word() {
        assert!(check_token("0123456789abcdef", "--token").is_ok());
        for bad in [
            "",
            "short",
            "0123456789abcde",
            "0123456789 abcdef",
            "0123456789abcdef\n",
        ] {
            let e = check_token(bad, "--token").unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
        }
    }

    #[test]
    fn json_content_types() {
        assert!(is_json(Some("application/json")));
        assert!(is_json(Some("Application/JSON; charset=utf-8")));
        for bad in [
            None,
            Some("text/plain"),
            Some("application/jsonx"),
            Some(""),
        ] {
            assert!(!is_json(bad), "{bad:?}");
        }
    }
}
