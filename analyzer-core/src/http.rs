//! The request-head parser behind `blocksight serve`: a push state machine over the bytes a
//! client sends, with a hard bound on what it buffers. It lives here, sans-IO, so that it is
//! fuzzed and unit-tested without sockets; the collector owns the socket, the deadline and the
//! responses.
//!
//! Only what the server needs is parsed: the request line (method, target, version) and the
//! `Host` header (the DNS-rebinding check). Everything else in the head is skipped, but every
//! line must still be well formed, so a request smuggling bytes past the parser is refused.

/// The largest request head accepted (request line and headers, with the blank line). Browsers
/// send well under 8 KiB; a longer head is answered with 431.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// What the server acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    /// The request target as sent (`/index.html?x`).
    pub target: String,
    /// The `Host` header, trimmed; `None` when absent.
    pub host: Option<String>,
}

impl RequestHead {
    /// The target's path, without query or fragment; `/` means `/index.html`.
    pub fn path(&self) -> &str {
        let path = self.target.split(['?', '#']).next().unwrap_or("/");
        if path == "/" {
            "/index.html"
        } else {
            path
        }
    }
}

/// Why a head was refused, with the HTTP status that answers it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeadError {
    /// The head is longer than [`MAX_HEAD_BYTES`] (status 431).
    #[error("the request head is over {MAX_HEAD_BYTES} bytes")]
    TooLarge,
    /// A malformed request line or header line (status 400).
    #[error("bad request at byte {at}: {what}")]
    Malformed { at: usize, what: &'static str },
}

impl HeadError {
    /// The status code and reason phrase to answer with.
    pub fn status(&self) -> (u16, &'static str) {
        match self {
            HeadError::TooLarge => (431, "Request Header Fields Too Large"),
            HeadError::Malformed { .. } => (400, "Bad Request"),
        }
    }
}

/// Collects a request head pushed in pieces of any size.
#[derive(Debug, Default)]
pub struct HeadReader {
    buf: Vec<u8>,
    /// Where to resume looking for the blank line.
    scanned: usize,
}

impl HeadReader {
    pub fn new() -> HeadReader {
        HeadReader::default()
    }

    /// Takes more bytes. Returns the head once its blank line has arrived (bytes after it, a
    /// request body, are ignored: the server answers GET and HEAD only), `Ok(None)` while it is
    /// incomplete, or why it is refused. Buffers at most [`MAX_HEAD_BYTES`].
    pub fn push(&mut self, bytes: &[u8]) -> Result<Option<RequestHead>, HeadError> {
        let room = (MAX_HEAD_BYTES + 1).saturating_sub(self.buf.len());
        self.buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
        // Look for LF CR? LF, resuming a little before the old end (the pair may straddle it).
        let from = self.scanned.saturating_sub(2);
        let end = find_blank_line(&self.buf[from..]).map(|e| from + e);
        self.scanned = self.buf.len();
        match end {
            Some(end) if end <= MAX_HEAD_BYTES => parse_head(&self.buf[..end]).map(Some),
            Some(_) => Err(HeadError::TooLarge),
            None if self.buf.len() > MAX_HEAD_BYTES => Err(HeadError::TooLarge),
            None => Ok(None),
        }
    }
}

/// The length of the head up to and including its blank line (`\n\n` or `\n\r\n`).
fn find_blank_line(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(p) = buf[i..].iter().position(|&b| b == b'\n') {
        let nl = i + p;
        match buf.get(nl + 1) {
            Some(b'\n') => return Some(nl + 2),
            Some(b'\r') if buf.get(nl + 2) == Some(&b'\n') => return Some(nl + 3),
            _ => i = nl + 1,
        }
    }
    None
}

/// Parses a complete head (ending with its blank line).
pub fn parse_head(head: &[u8]) -> Result<RequestHead, HeadError> {
    let mut lines = Lines { head, at: 0 };
    let (at, request) = lines.next().ok_or(HeadError::Malformed {
        at: 0,
        what: "no request line",
    })?;
    let bad = |at: usize, what: &'static str| HeadError::Malformed { at, what };
    let mut parts = request.split(|&b| b == b' ');
    let method = parts.next().unwrap_or_default();
    let target = parts.next().unwrap_or_default();
    let version = parts.next().unwrap_or_default();
    if parts.next().is_some() {
        return Err(bad(
            at,
            "expected METHOD TARGET HTTP/1.x with single spaces",
        ));
    }
    if method.is_empty() || !method.iter().all(|&b| is_token(b)) {
        return Err(bad(at, "expected a method name"));
    }
    if target.is_empty() || !target.iter().all(|&b| b.is_ascii_graphic()) {
        return Err(bad(at + method.len() + 1, "expected a request target"));
    }
    if version != b"HTTP/1.1" && version != b"HTTP/1.0" {
        return Err(bad(
            at + method.len() + target.len() + 2,
            "expected HTTP/1.0 or HTTP/1.1",
        ));
    }
    let mut host = None;
    for (at, line) in lines {
        if line.is_empty() {
            break;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Err(bad(at, "expected a header line NAME: VALUE"));
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if name.is_empty() || !name.iter().all(|&b| is_token(b)) {
            return Err(bad(at, "expected a header name"));
        }
        if value.iter().any(|&b| b.is_ascii_control() && b != b'\t') {
            return Err(bad(at + colon + 1, "a control character in a header value"));
        }
        if name.eq_ignore_ascii_case(b"host") {
            if host.is_some() {
                return Err(bad(at, "more than one Host header"));
            }
            host = Some(String::from_utf8_lossy(value.trim_ascii()).into_owned());
        }
    }
    Ok(RequestHead {
        method: String::from_utf8_lossy(method).into_owned(),
        target: String::from_utf8_lossy(target).into_owned(),
        host,
    })
}

/// RFC 9110 token characters (method and header names).
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The head's lines without their line ending, each with its byte offset.
struct Lines<'a> {
    head: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        let rest = self.head.get(self.at..).filter(|r| !r.is_empty())?;
        let start = self.at;
        let (line, used) = match rest.iter().position(|&b| b == b'\n') {
            Some(p) => (&rest[..p], p + 1),
            None => (rest, rest.len()),
        };
        self.at += used;
        Some((start, line.strip_suffix(b"\r").unwrap_or(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const GET: &[u8] =
        b"GET /web-app.js?v=1 HTTP/1.1\r\nHost: 127.0.0.1:8417\r\nAccept: */*\r\n\r\n";

    fn one_shot(bytes: &[u8]) -> Result<Option<RequestHead>, HeadError> {
        HeadReader::new().push(bytes)
    }

    #[test]
    fn parses_a_browser_request_in_any_chunking() {
        let head = one_shot(GET).expect("valid").expect("complete");
        assert_eq!(head.method, "GET");
        assert_eq!(head.path(), "/web-app.js");
        assert_eq!(head.host.as_deref(), Some("127.0.0.1:8417"));
        for chunk in [1, 2, 3, 7] {
            let mut r = HeadReader::new();
            let mut got = None;
            for piece in GET.chunks(chunk) {
                if let Some(h) = r.push(piece).expect("valid") {
                    got = Some(h);
                    break;
                }
            }
            assert_eq!(got.as_ref(), Some(&head), "chunk {chunk}");
        }
        assert_eq!(one_shot(&GET[..GET.len() - 1]), Ok(None));
    }

    #[test]
    fn issue_13_an_over_long_head_is_refused_with_431_once_past_the_limit() {
        let mut r = HeadReader::new();
        let mut line = b"GET / HTTP/1.1\r\nX-Long: ".to_vec();
        line.resize(MAX_HEAD_BYTES, b'a');
        assert_eq!(r.push(&line), Ok(None));
        let err = r.push(b"aaaa").expect_err("too long");
        assert_eq!(err.status().0, 431);
        // However much more arrives, nothing more is buffered.
        for _ in 0..100 {
            assert_eq!(r.push(&[b'a'; 4096]), Err(HeadError::TooLarge));
        }
        assert!(r.buf.len() <= MAX_HEAD_BYTES + 1);
    }

    #[test]
    fn malformed_heads_name_the_byte() {
        for (head, at) in [
            (&b"GET /\r\n\r\n"[..], 6),
            (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", 16),
            (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 25),
            (b"G\x1bT / HTTP/1.1\r\n\r\n", 0),
            (b"GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n", 18),
        ] {
            match one_shot(head) {
                Err(HeadError::Malformed { at: got, .. }) => assert_eq!(got, at, "{head:?}"),
                other => panic!("{head:?}: {other:?}"),
            }
        }
    }

    proptest! {
        #[test]
        fn any_bytes_in_any_chunking_agree_and_stay_bounded(
            bytes in proptest::collection::vec(any::<u8>(), 0..300),
            chunk in 1usize..16,
        ) {
            let whole = one_shot(&bytes);
            let mut r = HeadReader::new();
            let mut pieces = Vec::new();
            for piece in bytes.chunks(chunk) {
                let got = r.push(piece);
                let done = !matches!(got, Ok(None));
                pieces.push(got);
                if done {
                    break;
                }
            }
            let last = pieces.pop().unwrap_or(Ok(None));
            prop_assert_eq!(last, whole);
        }
    }
}
