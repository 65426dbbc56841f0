//! Secrets never reach the log. kbp's own logs name no secret, but with `RUST_LOG=trace` the AWS SDK, hyper and
//! kube log requests: the SDK hides the `authorization` and `x-amz-security-token` header values, yet not the
//! presigned query string of the canonical request it signs for an EKS token (`X-Amz-Security-Token=…`), and
//! a future crate version or another crate may print more. So every log line passes through [`redact`] on its
//! way to stderr, whatever its level or origin.
//!
//! A line is redacted whole, never a fragment: [`Redacting`] holds back a partial line until its newline (or
//! until the writer is dropped at the end of the event), so a secret split across two writes is still seen.
//! Redaction is by shape, not by knowing the values, so it also covers credentials kbp never saw (assumed-role
//! session tokens in an STS response, a kubeconfig's bearer token).

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::LazyLock;

use regex::bytes::{Captures, Regex};

const REDACTED: &str = "[redacted]";

/// The ANSI colour codes tracing puts around a field's name and `=` on a terminal.
const SGR: &str = r"(?:\x1b\[[0-9;]*m)*";

/// Characters that end an unquoted value: whitespace, the query-string `&`, quotes, list and struct punctuation.
const BARE_VALUE: &str = r#"[^\s&"',;(){}\[\]<>]+"#;

/// `key` + separator + value, for the header, query parameter, field and JSON names that hold secrets:
/// `X-Amz-Security-Token=…`, `"authorization": "…"`, `session_token: Some("…")`, `"SecretAccessKey":"…"`.
static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    let keys = [
        "x-amz-security-token",
        "x_amz_security_token",
        "x-amz-credential",
        "x-amz-signature",
        "(?:proxy-)?authorization",
        "(?:aws_)?secret_access_key",
        "secretaccesskey",
        "(?:aws_)?session_token",
        "sessiontoken",
    ]
    .join("|");
    // A quoted value, perhaps inside a wrapper (`Some("…")`, `("…", EnvConfigSource …)`,
    // `HeaderValue { inner: "…" }`); the SDK's own `** redacted (length=N) **`; or a bare value.
    let value = format!(r#"(?P<wrap>(?:\w*\(|\w+\s*\{{\s*\w+:\s*)*)"(?:[^"\\]|\\.)*"|\*\*[^*]*\*\*|{BARE_VALUE}"#);
    // The key may follow a colour code (`\x1b[3m`), whose closing `m` leaves no word boundary before it.
    let pattern = format!(r#"(?i)(?P<key>(?:\x1b\[[0-9;]*m|\b)(?:{keys})\b"?{SGR}\s*[:=]{SGR}\s*)(?P<value>{value})"#);
    Regex::new(&pattern).expect("invariant: the key-value redaction pattern is a valid regex")
});

/// The parts of a SigV4 `Authorization` header (or of any `Credential=` / `Signature=` pair) on their own.
static SIGV4_PART: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"(?i)(?P<key>\b(?:Credential|Signature)=){BARE_VALUE}"))
        .expect("invariant: the SigV4 redaction pattern is a valid regex")
});

/// An EKS token (`k8s-aws-v1.` + a base64url presigned STS URL), wherever it appears.
static EKS_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?P<key>k8s-aws-v1\.)[A-Za-z0-9_=-]+").expect("invariant: the EKS token pattern is a valid regex")
});

static BEARER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?P<key>\bBearer\s+)[A-Za-z0-9._~+/=-]+").expect("invariant: the bearer pattern is a valid regex")
});

/// The credentials in an STS `AssumeRole` / `GetSessionToken` XML response body.
static XML_CREDENTIAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?P<key><(?:SessionToken|SecretAccessKey)>)[^<]*")
        .expect("invariant: the XML credential pattern is a valid regex")
});

/// `line` with every secret value replaced by `[redacted]`; borrowed when there was nothing to hide.
pub fn redact(line: &[u8]) -> Cow<'_, [u8]> {
    let mut out = Cow::Borrowed(line);
    for re in [&*EKS_TOKEN, &*BEARER, &*XML_CREDENTIAL, &*SIGV4_PART] {
        if let Cow::Owned(changed) = re.replace_all(&out, |c: &Captures| [&c["key"], REDACTED.as_bytes()].concat()) {
            out = Cow::Owned(changed);
        }
    }
    if let Cow::Owned(changed) = KEY_VALUE.replace_all(&out, key_value) {
        out = Cow::Owned(changed);
    }
    out
}

/// A quoted value stays quoted (and in its wrapper), so the line still reads as the structure it was.
fn key_value(c: &Captures) -> Vec<u8> {
    let mut out = c["key"].to_vec();
    match c.name("wrap") {
        Some(wrap) => {
            out.extend_from_slice(wrap.as_bytes());
            out.extend_from_slice(format!("\"{REDACTED}\"").as_bytes());
        }
        None => out.extend_from_slice(REDACTED.as_bytes()),
    }
    out
}

/// Redacts each line of `text` (lines end in `\n`; a last one may not).
fn redact_lines(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.split_inclusive(|b| *b == b'\n') {
        let (body, newline) = match line.strip_suffix(b"\n") {
            Some(body) => (body, &b"\n"[..]),
            None => (line, &b""[..]),
        };
        out.extend_from_slice(&redact(body));
        out.extend_from_slice(newline);
    }
    out
}

/// A writer that redacts whole lines before passing them on: complete lines at once, the last partial line
/// when its newline comes or when the writer is dropped.
pub struct Redacting<W: Write> {
    inner: W,
    partial: Vec<u8>,
}

impl<W: Write> Redacting<W> {
    /// Redacts what is written through it, line by line, before it reaches `inner`.
    pub fn new(inner: W) -> Self {
        Redacting { inner, partial: Vec::new() }
    }
}

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.partial.extend_from_slice(buf);
        if let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') {
            let rest = self.partial.split_off(end + 1);
            let complete = std::mem::replace(&mut self.partial, rest);
            self.inner.write_all(&redact_lines(&complete))?;
        }
        Ok(buf.len())
    }

    /// Flushes the complete lines; a partial line waits for the rest of itself.
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Drop for Redacting<W> {
    fn drop(&mut self) {
        if !self.partial.is_empty() {
            let _ = self.inner.write_all(&redact_lines(&self.partial));
            let _ = self.inner.flush();
        }
    }
}

/// The log writer: one [`Redacting`] stderr per event (tracing's fmt layer writes an event whole, then drops
/// the writer).
pub struct RedactedStderr;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RedactedStderr {
    type Writer = Redacting<io::Stderr>;

    fn make_writer(&'a self) -> Self::Writer {
        Redacting::new(io::stderr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(line: &str) -> String {
        String::from_utf8(redact(line.as_bytes()).into_owned()).unwrap()
    }

    const TOKEN: &str = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLXdlc3QtMiJHMEUCIQD+abc/def==";

    #[test]
    fn the_presigned_canonical_request_of_an_eks_token_is_redacted() {
        // As aws-sigv4 logs it at trace (the query line of `canonical_request=GET\n/\n…`).
        let line = format!(
            "Action=GetCallerIdentity&Version=2011-06-15&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=\
             AKIAEXAMPLE%2F20261203%2Fus-west-2%2Fsts%2Faws4_request&X-Amz-Date=20261203T094847Z&X-Amz-Expires=60\
             &X-Amz-Security-Token={}&X-Amz-SignedHeaders=host%3Bx-k8s-aws-id",
            urlencoding::encode(TOKEN)
        );
        let out = r(&line);
        assert!(!out.contains("IQoJb3Jp") && !out.contains("AKIAEXAMPLE"), "{out}");
        assert!(out.contains("X-Amz-Security-Token=[redacted]&X-Amz-SignedHeaders=host%3Bx-k8s-aws-id"), "{out}");
        assert!(out.contains("X-Amz-Credential=[redacted]&X-Amz-Date=20261203T094847Z"), "{out}");
        // A presigned URL carries its signature in the query too.
        let url = "https://sts.us-west-2.amazonaws.com/?X-Amz-Signature=0123abcd&x-amz-security-token=abc";
        assert_eq!(
            r(url),
            "https://sts.us-west-2.amazonaws.com/?X-Amz-Signature=[redacted]&x-amz-security-token=[redacted]"
        );
    }

    #[test]
    fn header_maps_and_header_lines_are_redacted_and_the_rest_kept() {
        // The SDK's orchestrator at trace, with its own redaction, and hyper-style debug maps without it.
        let sdk = r#"headers: {"x-amz-date": "20261203T094846Z", "authorization": ** redacted (length=246) **, "x-amz-security-token": ** redacted (length=15) **, "amz-sdk-request": "attempt=1; max=3"} }"#;
        assert_eq!(
            r(sdk),
            r#"headers: {"x-amz-date": "20261203T094846Z", "authorization": [redacted], "x-amz-security-token": [redacted], "amz-sdk-request": "attempt=1; max=3"} }"#
        );
        let map = format!(
            r#"{{"X-Amz-Security-Token": "{TOKEN}", "Authorization": "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20261203/us-west-2/eks/aws4_request, SignedHeaders=host;x-amz-date, Signature=9f2c"}}"#
        );
        assert_eq!(r(&map), r#"{"X-Amz-Security-Token": "[redacted]", "Authorization": "[redacted]"}"#);
        // A canonical request's header lines, and a raw Authorization header.
        assert_eq!(r(&format!("x-amz-security-token:{TOKEN}")), "x-amz-security-token:[redacted]");
        let raw = "authorization: AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20261203/us-west-2/sts/aws4_request, \
                   SignedHeaders=host;x-amz-date, Signature=9f2c0e";
        let out = r(raw);
        assert!(!out.contains("AKIAEXAMPLE") && !out.contains("9f2c0e"), "{out}");
        // Header *names* alone (signed-header lists, excluded-header settings) are not values: kept as they are.
        for kept in [
            "content-type;host;x-amz-date;x-amz-security-token;x-amz-user-agent",
            r#"excluded_headers: Some(["authorization", "user-agent", "x-amzn-trace-id"])"#,
            "SignedHeaders=host;x-amz-date;x-amz-security-token, ",
        ] {
            assert_eq!(r(kept), kept);
        }
    }

    #[test]
    fn credentials_in_debug_output_json_xml_and_env_shapes_are_redacted() {
        for (line, secret) in [
            (r#"Credentials { access_key_id: "AKIAEXAMPLE", secret_access_key: "wJalrXUtnFEMI", session_token: Some("FwoGZXIvYXdz") }"#, "wJalrXUtnFEMI"),
            (r#"Credentials { access_key_id: "AKIAEXAMPLE", secret_access_key: "wJalrXUtnFEMI", session_token: Some("FwoGZXIvYXdz") }"#, "FwoGZXIvYXdz"),
            (r#"{"Credentials":{"AccessKeyId":"ASIAEXAMPLE","SecretAccessKey":"wJalrXUtnFEMI","SessionToken":"FwoGZXIvYXdz"}}"#, "wJalrXUtnFEMI"),
            (r#"{"Credentials":{"AccessKeyId":"ASIAEXAMPLE","SecretAccessKey":"wJalrXUtnFEMI","SessionToken":"FwoGZXIvYXdz"}}"#, "FwoGZXIvYXdz"),
            ("<Credentials><SessionToken>FwoGZXIvYXdz</SessionToken><SecretAccessKey>wJalrXUtnFEMI</SecretAccessKey>", "FwoGZXIvYXdz"),
            ("<Credentials><SessionToken>FwoGZXIvYXdz</SessionToken><SecretAccessKey>wJalrXUtnFEMI</SecretAccessKey>", "wJalrXUtnFEMI"),
            (r#"(global env) AWS_SESSION_TOKEN = ("FwoGZXIvYXdz", EnvConfigSource { key: "AWS_SESSION_TOKEN" })"#, "FwoGZXIvYXdz"),
            ("aws_secret_access_key = wJalrXUtnFEMI", "wJalrXUtnFEMI"),
            // A tracing field on a terminal: the name and `=` in colour.
            ("\x1b[3msession_token\x1b[0m\x1b[2m=\x1b[0m\"FwoGZXIvYXdz\"", "FwoGZXIvYXdz"),
        ] {
            let out = r(line);
            assert!(!out.contains(secret) && out.contains(REDACTED), "{secret} in {out}");
        }
        assert_eq!(r(r#"session_token: Some("FwoGZXIvYXdz")"#), r#"session_token: Some("[redacted]")"#);
        assert!(r(r#"access_key_id: "AKIAEXAMPLE""#).contains("AKIAEXAMPLE"), "an access key ID is not a secret");
    }

    #[test]
    fn eks_and_bearer_tokens_are_redacted() {
        let eks = "k8s-aws-v1.aHR0cHM6Ly9zdHMudXMtd2VzdC0yLmFtYXpvbmF3cy5jb20vP0FjdGlvbj1HZXRDYWxsZXJJZGVudGl0eQ";
        assert_eq!(r(&format!("token={eks} expires")), "token=k8s-aws-v1.[redacted] expires");
        assert_eq!(r(&format!(r#"{{"authorization": "Bearer {eks}"}}"#)), r#"{"authorization": "[redacted]"}"#);
        assert_eq!(
            r("Authorization: Bearer eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl"),
            "Authorization: [redacted] [redacted]"
        );
        assert_eq!(r("sent Bearer eyJhbGciOi.eyJzdWIiOi"), "sent Bearer [redacted]");
    }

    #[test]
    fn a_line_split_across_writes_is_redacted_whole() {
        let mut out = Vec::new();
        {
            let mut w = Redacting::new(&mut out);
            w.write_all(b"first line ok\nX-Amz-Secur").unwrap();
            w.write_all(b"ity-Token=FwoG").unwrap();
            w.flush().unwrap();
            w.write_all(b"ZXIvYXdz&next=1\nsession_token: \"Fwo").unwrap();
            w.write_all(b"GZXIvYXdz\"").unwrap();
            // Dropped without a newline: the rest is redacted too.
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "first line ok\nX-Amz-Security-Token=[redacted]&next=1\nsession_token: \"[redacted]\""
        );
    }

    #[test]
    fn complete_lines_go_out_at_once() {
        let mut out = Vec::new();
        let mut w = Redacting::new(&mut out);
        w.write_all(b"one\ntwo\nthr").unwrap();
        drop(w);
        assert_eq!(out, b"one\ntwo\nthr");
        let mut held = Redacting::new(Vec::new());
        held.write_all(b"one\ntwo\nthr").unwrap();
        assert_eq!(held.inner, b"one\ntwo\n", "the partial line waits");
    }
}
