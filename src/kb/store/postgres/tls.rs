//! TLS to the server, as libpq does it: which checks `sslmode` and `sslrootcert` ask for
//! ([`tls_settings`]), the rustls configuration that makes them ([`config`]), and the adapter
//! that gives the client library a rustls stream ([`MakeTls`]), with the channel binding that
//! SCRAM-SHA-256-PLUS ties the sign-in to.
//!
//! The adapter is ours rather than the `tokio-postgres-rustls` crate: that crate parses the
//! whole certificate with `x509-cert` (and `der`, `spki`, `const-oid`, `flagset`) to learn
//! which hash its signature used, where a few lines of DER reading find the same algorithm
//! ([`end_point_hash`]); the hash itself is ring's, which rustls links already.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::percent_decode;
use crate::error::{Error, Result};

/// How the server is checked, by libpq's `sslmode` and `sslrootcert` (which the client library
/// does not know: they are taken out of the URL it is given).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Check {
    /// Encrypted when the server offers it (`prefer`) or insists (`require`), without asking
    /// who the server is: libpq's way (SCRAM's channel binding still ties the sign-in to it).
    Nothing,
    /// The certificate is signed by an authority of `roots` (`verify-ca`, or `require` with an
    /// `sslrootcert`).
    Authority { roots: Roots },
    /// …and is made out to the host of the URL (`verify-full`).
    Full { roots: Roots },
}

/// The authorities a server's certificate is checked against.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Roots {
    /// A PEM file (`sslrootcert=FILE`, or `~/.postgresql/root.crt`).
    File(std::path::PathBuf),
    /// The public authorities (`sslrootcert=system`).
    System,
    /// None given and no `~/.postgresql/root.crt`.
    Missing,
}

/// What [`tls_settings`] found: the URL as the client library reads it, how to check the
/// server, and where the `sslmode` came from (for errors: "sslmode=verify-full in the URL",
/// "PGSSLMODE=verify-full in the environment", or "the default sslmode (prefer)").
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Settings {
    pub url: String,
    pub check: Check,
    pub said: String,
}

/// `url` as the client library reads it (`sslmode=verify-ca` and `verify-full` as `require`,
/// no `sslrootcert`), and how to check the server. As libpq, `sslmode`, `sslrootcert` and
/// `channel_binding` are taken from `PGSSLMODE`, `PGSSLROOTCERT` and `PGCHANNELBINDING` when
/// the URL does not give them (the URL's own win).
pub(super) fn tls_settings(name: &str, url: &str) -> Result<Settings> {
    tls_settings_in(name, url, dirs::home_dir().as_deref(), |k| {
        std::env::var(k).ok()
    })
}

/// [`tls_settings`] with `home` as the home folder (where `.postgresql/root.crt` may be) and
/// `env` for the environment's variables.
fn tls_settings_in(
    name: &str,
    url: &str,
    home: Option<&std::path::Path>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Settings> {
    let home_root = || {
        home.map(|h| h.join(".postgresql/root.crt"))
            .filter(|f| f.is_file())
    };
    let (head, query) = url.split_once('?').unwrap_or((url, ""));
    let mut mode = None;
    let mut mode_at = None;
    let mut rootcert = None;
    let mut binding = false;
    let mut kept = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        match k {
            "sslrootcert" => rootcert = Some(percent_decode(v)),
            "sslmode" => {
                mode = Some((percent_decode(v), format!("sslmode={v} in the URL")));
                mode_at = Some(kept.len());
                kept.push(String::new());
            }
            _ => {
                binding |= k == "channel_binding";
                kept.push(part.to_owned());
            }
        }
    }
    let env = |k: &str| env(k).filter(|v| !v.is_empty());
    let mode = mode.or_else(|| {
        env("PGSSLMODE").map(|v| (v.clone(), format!("PGSSLMODE={v} in the environment")))
    });
    let rootcert = rootcert.or_else(|| env("PGSSLROOTCERT"));
    let system = rootcert.as_deref() == Some("system");
    // libpq 16+: `sslrootcert=system` makes verify-full the default, and refuses a weaker mode
    // (the public authorities sign certificates for anyone's names: only the name proves it).
    let (mode, said) = match mode {
        Some(m) => m,
        None if system => (
            "verify-full".to_owned(),
            "sslrootcert=system (verify-full by default)".to_owned(),
        ),
        None => (
            "prefer".to_owned(),
            "the default sslmode (prefer)".to_owned(),
        ),
    };
    let library_mode = match mode.as_str() {
        "verify-ca" | "verify-full" | "require" => "require",
        // libpq's `allow` tries without TLS first; `prefer` connects wherever it does.
        "allow" | "prefer" => "prefer",
        "disable" => "disable",
        _ => {
            return Err(
                Error::config(format!("knowledge base {name}: {said} is not an sslmode"))
                    .hint("use disable, allow, prefer, require, verify-ca or verify-full"),
            );
        }
    };
    if system && mode != "verify-full" {
        return Err(Error::config(format!(
            "knowledge base {name}: {said} may not be used with sslrootcert=system (the public authorities), which needs sslmode=verify-full"
        ))
        .hint("use sslmode=verify-full (the server's certificate must then be made out to its host name), or give the authority that signed it with sslrootcert=/path/to/root.crt"));
    }
    // The URL's own sslmode stays where it was; the environment's (or system's verify-full)
    // is added; the default needs nothing.
    let library_mode = format!("sslmode={library_mode}");
    match mode_at {
        Some(at) => kept[at] = library_mode,
        None if said.starts_with("the default") => {}
        None => kept.push(library_mode),
    }
    if !binding && let Some(v) = env("PGCHANNELBINDING") {
        if !matches!(v.as_str(), "disable" | "prefer" | "require") {
            return Err(Error::config(format!(
                "knowledge base {name}: PGCHANNELBINDING={v} in the environment is not a channel_binding"
            ))
            .hint("use disable, prefer or require, or unset PGCHANNELBINDING"));
        }
        kept.push(format!("channel_binding={v}"));
    }
    let url = if kept.is_empty() {
        head.to_owned()
    } else {
        format!("{head}?{}", kept.join("&"))
    };
    let roots = || match rootcert.as_deref() {
        Some("system") => Roots::System,
        Some(f) => Roots::File(f.into()),
        None => home_root().map_or(Roots::Missing, Roots::File),
    };
    let check = match mode.as_str() {
        "verify-full" => Check::Full { roots: roots() },
        "verify-ca" => Check::Authority { roots: roots() },
        // As libpq: `require` with an authority (given, or in ~/.postgresql/root.crt) checks
        // that the authority signed the server's certificate, as verify-ca does.
        "require" if rootcert.is_some() || home_root().is_some() => {
            Check::Authority { roots: roots() }
        }
        _ => Check::Nothing,
    };
    Ok(Settings { url, check, said })
}

/// The server's certificate, checked as [`Check`] says.
#[derive(Debug)]
struct Verifier {
    /// `None`: not checked.
    webpki: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    /// Whether the certificate must name the host.
    names: bool,
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl rustls::client::danger::ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        use rustls::{CertificateError, Error as E};
        let Some(webpki) = &self.webpki else {
            return Ok(rustls::client::danger::ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(E::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.names => Ok(rustls::client::danger::ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// What the client library connects with for knowledge base `name`, checking the server as
/// `tls.check` says.
pub(super) fn config(name: &str, tls: &Settings) -> Result<MakeTls> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let (roots, names) = match &tls.check {
        Check::Nothing => (None, false),
        Check::Authority { roots } => (Some(roots), false),
        Check::Full { roots } => (Some(roots), true),
    };
    let webpki = match roots {
        None => None,
        Some(roots) => {
            let store = match roots {
                Roots::System => {
                    rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned())
                }
                Roots::File(f) => root_file(name, f)?,
                Roots::Missing => {
                    let file = dirs::home_dir()
                        .unwrap_or_default()
                        .join(".postgresql/root.crt");
                    return Err(Error::config(format!(
                        "knowledge base {name}: {} asks to check the server's certificate, but no authority to check it against is given ({} does not exist)",
                        tls.said,
                        file.display()
                    ))
                    .hint("add sslrootcert=/path/to/root.crt (the CA that signed the server's certificate) to the URL (or PGSSLROOTCERT), or sslrootcert=system with sslmode=verify-full for the public authorities"));
                }
            };
            let v = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(store),
                provider.clone(),
            )
            .build()
            .map_err(|e| Error::backend(format!("cannot set up TLS: {e}")))?;
            Some(v)
        }
    };
    let verifier = Verifier {
        webpki,
        names,
        algorithms: provider.signature_verification_algorithms,
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::backend(format!("cannot set up TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(MakeTls(Arc::new(config)))
}

/// The certificates of a PEM file of authorities (`sslrootcert`).
fn root_file(name: &str, file: &std::path::Path) -> Result<rustls::RootCertStore> {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let bad = |why: String| {
        Error::config(format!(
            "knowledge base {name}: cannot use sslrootcert {}: {why}",
            file.display()
        ))
        .hint("give a PEM file with the certificate of the authority that signed the server's")
    };
    let text = std::fs::read(file).map_err(|e| bad(e.to_string()))?;
    let mut store = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&text) {
        let cert = cert.map_err(|e| bad(e.to_string()))?;
        store.add(cert).map_err(|e| bad(e.to_string()))?;
    }
    if store.is_empty() {
        return Err(bad("it holds no certificate".into()));
    }
    Ok(store)
}

/// TLS for the client library's connections: one [`Handshake`] per host it tries.
#[derive(Clone)]
pub(super) struct MakeTls(Arc<rustls::ClientConfig>);

/// The handshake with one host, by the name the URL gives it (checked against the
/// certificate when `sslmode=verify-full`).
pub(super) struct Handshake {
    connector: tokio_rustls::TlsConnector,
    /// Not a name TLS can check (the client library asks for a handshake with every host, a
    /// Unix socket's folder as "", before it knows whether TLS is used): an error only if a
    /// handshake is made.
    host: std::result::Result<ServerName<'static>, rustls::pki_types::InvalidDnsNameError>,
}

/// An encrypted connection.
pub(super) struct Stream<S>(tokio_rustls::client::TlsStream<S>);

impl<S> MakeTlsConnect<S> for MakeTls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = Stream<S>;
    type TlsConnect = Handshake;
    type Error = std::convert::Infallible;

    fn make_tls_connect(&mut self, host: &str) -> std::result::Result<Handshake, Self::Error> {
        Ok(Handshake {
            connector: tokio_rustls::TlsConnector::from(self.0.clone()),
            // An IP address, or a DNS name.
            host: ServerName::try_from(host).map(|h| h.to_owned()),
        })
    }
}

impl<S> TlsConnect<S> for Handshake
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = Stream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Stream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        let host = match self.host {
            Ok(host) => host,
            Err(e) => {
                return Box::pin(std::future::ready(Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    e,
                ))));
            }
        };
        let connect = self.connector.connect(host, stream);
        Box::pin(async move { connect.await.map(Stream) })
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for Stream<S> {
    /// `tls-server-end-point` (RFC 5929): the hash of the server's certificate, for SCRAM's
    /// channel binding (SCRAM-SHA-256-PLUS), or none when it cannot be had.
    fn channel_binding(&self) -> ChannelBinding {
        match self.0.get_ref().1.peer_certificates() {
            Some([cert, ..]) => end_point_hash(cert).map_or_else(ChannelBinding::none, |hash| {
                ChannelBinding::tls_server_end_point(hash)
            }),
            _ => ChannelBinding::none(),
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Stream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Stream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// The `tls-server-end-point` channel binding of a certificate (RFC 5929, 4.1): its hash by
/// the hash function of its signature algorithm, SHA-256 where that is MD5 or SHA-1. `None`
/// for a signature without a hash of its own (Ed25519, Ed448), one whose hash ring lacks
/// (SHA-224), or DER that cannot be read: the client then signs in without channel binding
/// (SCRAM-SHA-256), or refuses to when the URL says `channel_binding=require`.
pub(super) fn end_point_hash(der: &[u8]) -> Option<Vec<u8>> {
    let hash = signature_hash(der)?;
    Some(ring::digest::digest(hash, der).as_ref().to_vec())
}

/// The hash of the signature of an X.509 certificate, as channel binding uses it.
fn signature_hash(der: &[u8]) -> Option<&'static ring::digest::Algorithm> {
    use ring::digest::{SHA256, SHA384, SHA512};
    // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm
    // AlgorithmIdentifier, signature BIT STRING }; AlgorithmIdentifier ::= SEQUENCE {
    // algorithm OBJECT IDENTIFIER, parameters ANY OPTIONAL }.
    let (certificate, _) = element(der, SEQUENCE)?;
    let (_, rest) = element(certificate, SEQUENCE)?;
    let (algorithm, _) = element(rest, SEQUENCE)?;
    let (oid, parameters) = element(algorithm, OID)?;
    // The arcs after 1.2.840.113549.1.1 (PKCS #1), 1.2.840.10045.4 (ECDSA) and
    // 2.16.840.1.101.3.4.3 (DSA with SHA-2).
    const PKCS1: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    const DSA_SHA1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x38, 0x04, 0x03];
    const DSA_SHA2: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03];
    if let Some(arc) = oid.strip_prefix(PKCS1) {
        match arc {
            // MD5, SHA-1, SHA-256 with RSA.
            [4] | [5] | [11] => Some(&SHA256),
            [12] => Some(&SHA384),
            [13] => Some(&SHA512),
            // RSASSA-PSS: the hash is among its parameters.
            [10] => pss_hash(parameters),
            _ => None,
        }
    } else if let Some(arc) = oid.strip_prefix(ECDSA) {
        match arc {
            // ecdsa-with-SHA1, ecdsa-with-SHA256.
            [1] | [3, 2] => Some(&SHA256),
            [3, 3] => Some(&SHA384),
            [3, 4] => Some(&SHA512),
            _ => None,
        }
    } else if oid == DSA_SHA1 {
        Some(&SHA256)
    } else if let Some(arc) = oid.strip_prefix(DSA_SHA2) {
        match arc {
            [2] => Some(&SHA256),
            _ => None,
        }
    } else {
        None
    }
}

/// The hash of RSASSA-PSS parameters (RFC 4055: `SEQUENCE { hashAlgorithm [0] EXPLICIT
/// AlgorithmIdentifier DEFAULT sha1, … }`), SHA-1 counted as SHA-256.
fn pss_hash(parameters: &[u8]) -> Option<&'static ring::digest::Algorithm> {
    use ring::digest::{SHA256, SHA384, SHA512};
    let (fields, _) = element(parameters, SEQUENCE)?;
    let Some((hash, _)) = element(fields, 0xa0) else {
        return Some(&SHA256);
    };
    let (algorithm, _) = element(hash, SEQUENCE)?;
    let (oid, _) = element(algorithm, OID)?;
    const SHA2: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02];
    const SHA1: &[u8] = &[0x2b, 0x0e, 0x03, 0x02, 0x1a];
    match oid.strip_prefix(SHA2) {
        Some([1]) => Some(&SHA256),
        Some([2]) => Some(&SHA384),
        Some([3]) => Some(&SHA512),
        _ if oid == SHA1 => Some(&SHA256),
        _ => None,
    }
}

const SEQUENCE: u8 = 0x30;
const OID: u8 = 0x06;

/// The contents of the DER element at the start of `der` if its tag is `tag`, and what
/// follows it.
fn element(der: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&first, rest) = der.split_first()?;
    if first != tag {
        return None;
    }
    let (&len, rest) = rest.split_first()?;
    let (len, rest) = if len < 0x80 {
        (usize::from(len), rest)
    } else {
        // The long form: the length in the next 1 to 4 bytes (0x80 alone, the indefinite
        // form, is not DER).
        let n = usize::from(len & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let (bytes, rest) = rest.split_at(n);
        (
            bytes.iter().fold(0usize, |l, &b| (l << 8) | usize::from(b)),
            rest,
        )
    };
    (rest.len() >= len).then(|| rest.split_at(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`tls_settings_in`] with `home` and the environment `vars`.
    fn settings(url: &str, home: Option<&std::path::Path>, vars: &[(&str, &str)]) -> Settings {
        tls_settings_in("team", url, home, |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
        .unwrap()
    }

    /// `(url, check)` of [`settings`] without a home or environment.
    fn tls_settings(url: &str) -> (String, Check) {
        let s = settings(url, None, &[]);
        (s.url, s.check)
    }

    /// The `error: … hint: …` of a refused [`tls_settings_in`].
    fn refused(url: &str, vars: &[(&str, &str)]) -> String {
        let e = tls_settings_in("team", url, None, |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
        .unwrap_err();
        assert_eq!(e.exit_code(), 3, "{e:?}");
        format!("{e:?}")
    }

    #[test]
    fn tls_settings_are_libpqs() {
        let (url, check) = tls_settings("postgres://a@h/db");
        assert_eq!((url.as_str(), check), ("postgres://a@h/db", Check::Nothing));
        let (url, check) = tls_settings("postgres://a@h/db?sslmode=require&application_name=x");
        assert_eq!(url, "postgres://a@h/db?sslmode=require&application_name=x");
        assert_eq!(check, Check::Nothing);
        // What the client library does not know is taken out; the URL still parses.
        let (url, check) =
            tls_settings("postgres://a@h/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fmy%20ca.crt");
        assert_eq!(url, "postgres://a@h/db?sslmode=require");
        assert!(url.parse::<postgres::Config>().is_ok());
        assert_eq!(
            check,
            Check::Full {
                roots: Roots::File("/tmp/my ca.crt".into())
            }
        );
        let (url, check) =
            tls_settings("postgres://a@h/db?sslrootcert=%2Fca.pem&sslmode=verify-ca");
        assert_eq!(url, "postgres://a@h/db?sslmode=require");
        assert_eq!(
            check,
            Check::Authority {
                roots: Roots::File("/ca.pem".into())
            }
        );
        // `require` with an authority checks it, as libpq does.
        let (_, check) = tls_settings("postgres://a@h/db?sslmode=require&sslrootcert=/ca.pem");
        assert_eq!(
            check,
            Check::Authority {
                roots: Roots::File("/ca.pem".into())
            }
        );
        let (url, check) = tls_settings("postgres://a@h/db?sslmode=disable");
        assert_eq!(url, "postgres://a@h/db?sslmode=disable");
        assert_eq!(check, Check::Nothing);
        // With ~/.postgresql/root.crt, `require` checks the authority in it (libpq: "if a root
        // CA file exists, sslmode=require behaves as verify-ca"); the default does not.
        let home = tempfile::tempdir().unwrap();
        let url = "postgres://a@h/db?sslmode=require";
        assert_eq!(settings(url, Some(home.path()), &[]).check, Check::Nothing);
        std::fs::create_dir(home.path().join(".postgresql")).unwrap();
        let root = home.path().join(".postgresql/root.crt");
        std::fs::write(&root, "").unwrap();
        assert_eq!(
            settings(url, Some(home.path()), &[]).check,
            Check::Authority {
                roots: Roots::File(root.clone())
            }
        );
        assert_eq!(
            settings("postgres://a@h/db", Some(home.path()), &[]).check,
            Check::Nothing
        );
        assert_eq!(
            settings(
                "postgres://a@h/db?sslmode=verify-full",
                Some(home.path()),
                &[]
            )
            .check,
            Check::Full {
                roots: Roots::File(root)
            }
        );
        assert_eq!(percent_decode("a%2fb%zz%4"), "a/b%zz%4");
    }

    #[test]
    fn libpqs_environment_is_read_when_the_url_does_not_say() {
        let url = "postgres://a@h/db";
        // PGSSLMODE=verify-full checks the server, against PGSSLROOTCERT or ~/.postgresql/root.crt.
        let s = settings(url, None, &[("PGSSLMODE", "verify-full")]);
        assert_eq!(s.url, "postgres://a@h/db?sslmode=require");
        assert!(s.url.parse::<postgres::Config>().is_ok());
        assert_eq!(
            s.check,
            Check::Full {
                roots: Roots::Missing
            }
        );
        assert_eq!(s.said, "PGSSLMODE=verify-full in the environment");
        let env = [("PGSSLMODE", "verify-ca"), ("PGSSLROOTCERT", "/ca.pem")];
        let s = settings("postgres://a@h/db?application_name=x", None, &env);
        assert_eq!(
            s.url,
            "postgres://a@h/db?application_name=x&sslmode=require"
        );
        assert_eq!(
            s.check,
            Check::Authority {
                roots: Roots::File("/ca.pem".into())
            }
        );
        // disable, and libpq's allow (prefer connects wherever it does).
        let s = settings(url, None, &[("PGSSLMODE", "disable")]);
        assert_eq!(
            (s.url.as_str(), s.check),
            ("postgres://a@h/db?sslmode=disable", Check::Nothing)
        );
        let s = settings(url, None, &[("PGSSLMODE", "allow")]);
        assert_eq!(s.url, "postgres://a@h/db?sslmode=prefer");
        // The URL's own win, each on its own: its sslmode over PGSSLMODE, its sslrootcert over
        // PGSSLROOTCERT, its channel_binding over PGCHANNELBINDING.
        let env = [
            ("PGSSLMODE", "disable"),
            ("PGSSLROOTCERT", "/env.pem"),
            ("PGCHANNELBINDING", "require"),
        ];
        let s = settings(
            "postgres://a@h/db?sslmode=verify-full&channel_binding=disable",
            None,
            &env,
        );
        assert_eq!(
            s.url,
            "postgres://a@h/db?sslmode=require&channel_binding=disable"
        );
        assert_eq!(
            s.check,
            Check::Full {
                roots: Roots::File("/env.pem".into())
            }
        );
        assert_eq!(s.said, "sslmode=verify-full in the URL");
        let s = settings(
            "postgres://a@h/db?sslrootcert=/url.pem",
            None,
            &[("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", "/env.pem")],
        );
        assert_eq!(
            s.check,
            Check::Full {
                roots: Roots::File("/url.pem".into())
            }
        );
        // PGCHANNELBINDING, as the client library reads channel_binding.
        let s = settings(url, None, &[("PGCHANNELBINDING", "require")]);
        assert_eq!(s.url, "postgres://a@h/db?channel_binding=require");
        assert!(s.url.parse::<postgres::Config>().is_ok());
        // Empty is unset; the default says nothing to the client library.
        let s = settings(url, None, &[("PGSSLMODE", ""), ("PGCHANNELBINDING", "")]);
        assert_eq!((s.url.as_str(), s.check), (url, Check::Nothing));
        assert_eq!(s.said, "the default sslmode (prefer)");
        // What is not a mode is refused, naming the variable.
        let e = refused(url, &[("PGSSLMODE", "verify")]);
        assert!(
            e.contains("PGSSLMODE=verify in the environment is not an sslmode"),
            "{e}"
        );
        let e = refused(url, &[("PGCHANNELBINDING", "yes")]);
        assert!(e.contains("PGCHANNELBINDING=yes"), "{e}");
    }

    #[test]
    fn the_public_authorities_are_trusted_with_verify_full_only() {
        // libpq 16+: sslrootcert=system makes verify-full the default and refuses weaker modes.
        let s = settings("postgres://a@h/db?sslrootcert=system", None, &[]);
        assert_eq!(s.url, "postgres://a@h/db?sslmode=require");
        assert_eq!(
            s.check,
            Check::Full {
                roots: Roots::System
            }
        );
        let s = settings("postgres://a@h/db", None, &[("PGSSLROOTCERT", "system")]);
        assert_eq!(
            s.check,
            Check::Full {
                roots: Roots::System
            }
        );
        for mode in ["disable", "allow", "prefer", "require", "verify-ca"] {
            let e = refused(
                &format!("postgres://a@h/db?sslmode={mode}&sslrootcert=system"),
                &[],
            );
            assert!(
                e.contains(&format!(
                    "sslmode={mode} in the URL may not be used with sslrootcert=system"
                )),
                "{e}"
            );
            assert!(e.contains("verify-full"), "{e}");
            let e = refused(
                "postgres://a@h/db?sslrootcert=system",
                &[("PGSSLMODE", mode)],
            );
            assert!(
                e.contains(&format!("PGSSLMODE={mode} in the environment may not")),
                "{e}"
            );
        }
        assert_eq!(
            settings(
                "postgres://a@h/db?sslmode=verify-full&sslrootcert=system",
                None,
                &[]
            )
            .check,
            Check::Full {
                roots: Roots::System
            }
        );
    }

    /// DER of one element: `tag`, the length (short or long form), `contents`.
    fn der(tag: u8, contents: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        match contents.len() {
            n if n < 0x80 => out.push(n as u8),
            n if n < 0x100 => out.extend([0x81, n as u8]),
            n => out.extend([0x82, (n >> 8) as u8, n as u8]),
        }
        out.extend_from_slice(contents);
        out
    }

    /// A certificate's shape around a signature algorithm `oid` (with `parameters`): a
    /// to-be-signed part of `tbs` bytes, the algorithm, a signature.
    fn certificate(oid: &[u8], parameters: &[u8], tbs: usize) -> Vec<u8> {
        let mut algorithm = der(OID, oid);
        algorithm.extend_from_slice(parameters);
        let mut body = der(SEQUENCE, &vec![0x02; tbs]);
        body.extend(der(SEQUENCE, &algorithm));
        body.extend(der(0x03, &[0, 1, 2, 3]));
        der(SEQUENCE, &body)
    }

    #[test]
    fn the_end_point_hash_is_that_of_the_certificates_signature_sha_256_for_weaker_ones() {
        use ring::digest::{SHA256, SHA384, SHA512};
        let null = [0x05, 0x00];
        let cases: [(&[u8], &[u8], Option<&ring::digest::Algorithm>); 12] = [
            // sha256WithRSAEncryption, sha384…, sha512…, sha1… and md5… (SHA-256 for both).
            (
                b"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0b",
                &null,
                Some(&SHA256),
            ),
            (
                b"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0c",
                &null,
                Some(&SHA384),
            ),
            (
                b"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0d",
                &null,
                Some(&SHA512),
            ),
            (
                b"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x05",
                &null,
                Some(&SHA256),
            ),
            (
                b"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x04",
                &null,
                Some(&SHA256),
            ),
            // ecdsa-with-SHA256, -SHA384, -SHA512, -SHA1.
            (b"\x2a\x86\x48\xce\x3d\x04\x03\x02", &[], Some(&SHA256)),
            (b"\x2a\x86\x48\xce\x3d\x04\x03\x03", &[], Some(&SHA384)),
            (b"\x2a\x86\x48\xce\x3d\x04\x03\x04", &[], Some(&SHA512)),
            (b"\x2a\x86\x48\xce\x3d\x04\x01", &[], Some(&SHA256)),
            // Ed25519: no hash of its own; sha224WithRSAEncryption: none in ring.
            (b"\x2b\x65\x70", &[], None),
            (b"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0e", &null, None),
            // An unknown algorithm.
            (b"\x2a\x03", &[], None),
        ];
        for (oid, parameters, hash) in cases {
            // A short certificate and one whose lengths take the long form.
            for tbs in [10, 300] {
                let cert = certificate(oid, parameters, tbs);
                let want = hash.map(|h| ring::digest::digest(h, &cert).as_ref().to_vec());
                assert_eq!(end_point_hash(&cert), want, "{oid:02x?}, {tbs}");
            }
        }
        // RSASSA-PSS: the hash of its parameters; SHA-1 (also by default) as SHA-256.
        let pss = b"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0a";
        let hash_param = |oid: &[u8]| {
            let mut alg = der(OID, oid);
            alg.extend(null);
            der(SEQUENCE, &der(0xa0, &der(SEQUENCE, &alg)))
        };
        for (parameters, hash) in [
            (hash_param(b"\x60\x86\x48\x01\x65\x03\x04\x02\x02"), &SHA384),
            (hash_param(b"\x60\x86\x48\x01\x65\x03\x04\x02\x03"), &SHA512),
            (hash_param(b"\x60\x86\x48\x01\x65\x03\x04\x02\x01"), &SHA256),
            (hash_param(b"\x2b\x0e\x03\x02\x1a"), &SHA256),
            (der(SEQUENCE, &[]), &SHA256),
        ] {
            let cert = certificate(pss, &parameters, 20);
            assert_eq!(
                end_point_hash(&cert).unwrap(),
                ring::digest::digest(hash, &cert).as_ref()
            );
        }
        // What is not a certificate has none, cut anywhere.
        let cert = certificate(b"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0b", &null, 300);
        for n in 0..cert.len() {
            assert_eq!(end_point_hash(&cert[..n]), None, "cut at {n}");
        }
        assert_eq!(end_point_hash(b""), None);
        assert_eq!(end_point_hash(b"\x30\x80\x00\x00"), None);
        assert_eq!(end_point_hash(b"\x30\x85\x01\x00\x00\x00\x00"), None);
    }
}
