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

/// `url` as the client library reads it (`sslmode=verify-ca` and `verify-full` as `require`,
/// no `sslrootcert`), and how to check the server.
pub(super) fn tls_settings(url: &str) -> (String, Check) {
    tls_settings_in(url, dirs::home_dir().as_deref())
}

/// [`tls_settings`] with `home` as the home folder (where `.postgresql/root.crt` may be).
fn tls_settings_in(url: &str, home: Option<&std::path::Path>) -> (String, Check) {
    let home_root = || {
        home.map(|h| h.join(".postgresql/root.crt"))
            .filter(|f| f.is_file())
    };
    let Some((head, query)) = url.split_once('?') else {
        return (url.to_owned(), Check::Nothing);
    };
    let mut mode = String::new();
    let mut rootcert = None;
    let mut kept = Vec::new();
    for part in query.split('&') {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        match k {
            "sslrootcert" => rootcert = Some(percent_decode(v)),
            "sslmode" if v == "verify-ca" || v == "verify-full" => {
                mode = v.to_owned();
                kept.push("sslmode=require".to_owned());
            }
            _ => {
                if k == "sslmode" {
                    mode = v.to_owned();
                }
                kept.push(part.to_owned());
            }
        }
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
    (url, check)
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
/// `check` says.
pub(super) fn config(name: &str, check: &Check) -> Result<MakeTls> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let (roots, names) = match check {
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
                        "knowledge base {name}: sslmode asks to check the server's certificate, but no authority to check it against is given ({} does not exist)",
                        file.display()
                    ))
                    .hint("add sslrootcert=/path/to/root.crt (the CA that signed the server's certificate) to the URL, or sslrootcert=system for the public authorities"));
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
        let (url, check) = tls_settings("postgres://a@h/db?sslrootcert=system&sslmode=verify-ca");
        assert_eq!(url, "postgres://a@h/db?sslmode=require");
        assert_eq!(
            check,
            Check::Authority {
                roots: Roots::System
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
        assert_eq!(tls_settings_in(url, Some(home.path())).1, Check::Nothing);
        std::fs::create_dir(home.path().join(".postgresql")).unwrap();
        let root = home.path().join(".postgresql/root.crt");
        std::fs::write(&root, "").unwrap();
        assert_eq!(
            tls_settings_in(url, Some(home.path())).1,
            Check::Authority {
                roots: Roots::File(root.clone())
            }
        );
        assert_eq!(
            tls_settings_in("postgres://a@h/db", Some(home.path())).1,
            Check::Nothing
        );
        assert_eq!(
            tls_settings_in("postgres://a@h/db?sslmode=verify-full", Some(home.path())).1,
            Check::Full {
                roots: Roots::File(root)
            }
        );
        assert_eq!(percent_decode("a%2fb%zz%4"), "a/b%zz%4");
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
