//! AWS Signature Version 4 for one request with its headers: HMAC-SHA256 over a canonical form
//! of the request. Written here rather than taken from `aws-sigv4`, which brings in some 70
//! crates (tokio, tracing, the smithy runtime); the HMAC and SHA-256 are `ring`'s, which TLS
//! already links. Checked against AWS's published test suite (`get-vanilla`, …) below.

use ring::{digest, hmac};

/// AWS credentials from the environment. `Debug` shows only the access key ID (R2-7).
#[derive(Clone)]
pub(crate) struct Credentials {
    pub(crate) access_key: String,
    pub(crate) secret_key: String,
    pub(crate) session_token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key", &self.access_key)
            .field("secret_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn sha256_hex(data: &[u8]) -> String {
    hex(digest::digest(&digest::SHA256, data).as_ref())
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data)
        .as_ref()
        .to_vec()
}

/// Percent-encode every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`), as SigV4 wants.
pub(crate) fn uri_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What is signed: the scope and the request in parts.
pub(crate) struct Scope<'a> {
    pub(crate) region: &'a str,
    pub(crate) service: &'a str,
    /// `YYYYMMDDTHHMMSSZ`.
    pub(crate) amz_date: &'a str,
}

/// The canonical URI of a path as sent (already encoded once): every segment encoded again,
/// as every service but S3 expects.
fn canonical_uri(path: &str) -> String {
    if path.is_empty() {
        return "/".into();
    }
    path.split('/')
        .map(uri_encode)
        .collect::<Vec<_>>()
        .join("/")
}

/// The query as sent, its parameters sorted.
fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(&str, &str)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect();
    pairs.sort_unstable();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The `Authorization` value for a request whose `headers` (every one of them is signed) hold
/// `host` and `x-amz-date`.
pub(crate) fn authorization(
    creds: &Credentials,
    scope: &Scope<'_>,
    method: &str,
    path: &str,
    query: &str,
    headers: &[(String, String)],
    payload: &[u8],
) -> String {
    let mut canon: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| {
            let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
            (k.to_ascii_lowercase(), v)
        })
        .collect();
    canon.sort();
    let signed: Vec<&str> = canon.iter().map(|(k, _)| k.as_str()).collect();
    let signed = signed.join(";");
    let header_block: String = canon.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let request = format!(
        "{method}\n{}\n{}\n{header_block}\n{signed}\n{}",
        canonical_uri(path),
        canonical_query(query),
        sha256_hex(payload)
    );
    let date = scope.amz_date.get(..8).unwrap_or(scope.amz_date);
    let cred_scope = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{cred_scope}\n{}",
        scope.amz_date,
        sha256_hex(request.as_bytes())
    );
    let mut key = hmac(
        format!("AWS4{}", creds.secret_key).as_bytes(),
        date.as_bytes(),
    );
    for part in [scope.region, scope.service, "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    let signature = hex(&hmac(&key, to_sign.as_bytes()));
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{cred_scope}, SignedHeaders={signed}, Signature={signature}",
        creds.access_key
    )
}

/// `scheme://host[:port]/path?query` → (host as the Host header has it, path, query). Like
/// the HTTP client, the Host header leaves out the scheme's default port.
pub(crate) fn split_url(url: &str) -> (&str, &str, &str) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, path_query) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "https" => ":443",
        "http" => ":80",
        _ => "",
    };
    let host = match host.strip_suffix(default_port) {
        Some(h) if !default_port.is_empty() => h,
        _ => host,
    };
    let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
    (host, path, query)
}

/// The headers to add to a POST of `body` to `url` at `amz_date`: `x-amz-date`, the session
/// token when there is one, and `authorization`. `content-type` is signed too.
pub(crate) fn sign_post(
    creds: &Credentials,
    region: &str,
    service: &str,
    url: &str,
    body: &[u8],
    amz_date: &str,
) -> Vec<(String, String)> {
    let (host, path, query) = split_url(url);
    let mut signed = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("host".to_owned(), host.to_owned()),
        ("x-amz-date".to_owned(), amz_date.to_owned()),
    ];
    if let Some(t) = &creds.session_token {
        signed.push(("x-amz-security-token".to_owned(), t.clone()));
    }
    let scope = Scope {
        region,
        service,
        amz_date,
    };
    let auth = authorization(creds, &scope, "POST", path, query, &signed, body);
    let mut out: Vec<(String, String)> = signed
        .into_iter()
        .filter(|(k, _)| k != "content-type" && k != "host")
        .collect();
    out.push(("authorization".to_owned(), auth));
    out
}

/// Now, as SigV4 writes it.
pub(crate) fn amz_date_now() -> String {
    chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_secret() {
        let c = Credentials {
            access_key: "AKIDEXAMPLE".into(),
            secret_key: "SECRET-xyz".into(),
            session_token: Some("TOKEN-abc".into()),
        };
        let built = crate::backend::http::Built {
            url: "https://h/v1/models/m:generate?key=QUERY-SECRET".into(),
            headers: vec![("authorization".into(), "Bearer HEADER-SECRET".into())],
            body: b"{}".to_vec(),
        };
        let shown = format!("{c:?} {built:?}");
        for secret in ["SECRET-xyz", "TOKEN-abc", "QUERY-SECRET", "HEADER-SECRET"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(shown.contains("AKIDEXAMPLE") && shown.contains("authorization"));
    }

    /// The credentials and scope of AWS's SigV4 test suite (aws-sig-v4-test-suite).
    fn suite() -> (Credentials, Scope<'static>) {
        (
            Credentials {
                access_key: "AKIDEXAMPLE".into(),
                secret_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
                session_token: None,
            },
            Scope {
                region: "us-east-1",
                service: "service",
                amz_date: "20150830T123600Z",
            },
        )
    }

    fn base() -> Vec<(String, String)> {
        vec![
            ("Host".into(), "example.amazonaws.com".into()),
            ("X-Amz-Date".into(), "20150830T123600Z".into()),
        ]
    }

    #[test]
    fn aws_test_suite() {
        let (c, s) = suite();
        let prefix = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=";
        // get-vanilla
        assert_eq!(
            authorization(&c, &s, "GET", "/", "", &base(), b""),
            format!("{prefix}5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
        );
        // post-vanilla
        assert_eq!(
            authorization(&c, &s, "POST", "/", "", &base(), b""),
            format!("{prefix}5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")
        );
        // get-vanilla-query-order-key-case: the query is sorted first.
        assert_eq!(
            authorization(
                &c,
                &s,
                "GET",
                "/",
                "Param2=value2&Param1=value1",
                &base(),
                b""
            ),
            format!("{prefix}b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")
        );
    }

    #[test]
    fn urls_and_paths() {
        assert_eq!(
            split_url("http://127.0.0.1:8080/model/a%3A0/converse?x=1"),
            ("127.0.0.1:8080", "/model/a%3A0/converse", "x=1")
        );
        assert_eq!(split_url("https://h"), ("h", "", ""));
        assert_eq!(split_url("https://u:p@h:443/x"), ("h", "/x", ""));
        assert_eq!(split_url("http://h:80"), ("h", "", ""));
        assert_eq!(split_url("http://h:8080"), ("h:8080", "", ""));
        // A model ID's `:` is encoded in the path, and encoded again in the canonical form.
        assert_eq!(canonical_uri("/model/a%3A0/x"), "/model/a%253A0/x");
        assert_eq!(uri_encode("us.anthropic.c-3:0"), "us.anthropic.c-3%3A0");
    }

    #[test]
    fn post_headers_carry_the_token_and_sign_it() {
        let (mut c, _) = suite();
        c.session_token = Some("TOKEN".into());
        let h = sign_post(
            &c,
            "us-west-2",
            "bedrock",
            "https://bedrock-runtime.us-west-2.amazonaws.com/model/m/converse",
            b"{}",
            "20240101T000000Z",
        );
        let names: Vec<&str> = h.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["x-amz-date", "x-amz-security-token", "authorization"]
        );
        assert!(h[2].1.contains("Credential=AKIDEXAMPLE/20240101/us-west-2/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature="));
    }
}
