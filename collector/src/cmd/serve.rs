//! `blocksight serve [IN] [--port P]`: serves the web app on 127.0.0.1 with the trace preloaded
//! (`/?url=/trace/NAME`). A minimal std-only HTTP/1.1 server: GET and HEAD of the bundle's own
//! files and of the one trace given on the command line, nothing else.
//!
//! Safety: it listens on loopback only; request paths are matched against the bundle's file
//! names (no path is ever joined from the request, so `..` cannot escape); requests whose `Host`
//! is not this loopback address are refused (DNS rebinding); responses carry a
//! Content-Security-Policy that limits the page to its own origin. The request head is parsed by
//! `analyzer_core::http` (bounded, fuzzed): it must arrive whole within `--header-timeout`
//! seconds (slow-drip clients are dropped), and a head over 16 KiB is answered with 431.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use analyzer_core::http::{HeadError, HeadReader, RequestHead};

use anyhow::Context;

use crate::web::{self, WebBundle};

const CSP: &str = "default-src 'self'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' blob:; \
                   worker-src 'self' blob:; connect-src 'self'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A trace file to preload in the app.
    #[arg(value_name = "IN")]
    pub input: Option<PathBuf>,
    /// TCP port on 127.0.0.1 (0 picks a free one).
    #[arg(long, short = 'p', default_value_t = 8417)]
    pub port: u16,
    /// Seconds a client has to send its whole request head; slower clients are dropped.
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
}

struct Site {
    /// The bundle (its files by name: `/NAME` serves `NAME`).
    web: WebBundle,
    /// The trace's URL path and file.
    trace: Option<(String, PathBuf)>,
    host: String,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let web = web::bundle()?;
    let trace = match &args.input {
        Some(p) => {
            std::fs::metadata(p).with_context(|| format!("cannot open {}", p.display()))?;
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "trace".into());
            Some((format!("/trace/{}", url_encode(&name)), p.clone()))
        }
        None => None,
    };
    let listener = TcpListener::bind(("127.0.0.1", args.port))
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
    let port = listener.local_addr()?.port();
    let site = Arc::new(Site {
        web,
        trace,
        host: format!("127.0.0.1:{port}"),
    });
    let url = match &site.trace {
        Some((path, _)) => format!("http://127.0.0.1:{port}/?url={path}"),
        None => format!("http://127.0.0.1:{port}/"),
    };
    eprintln!(
        "blocksight: serving {} at {url} (Ctrl-C stops)",
        site.web.origin
    );
    println!("{url}");
    std::io::stdout().flush()?;
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let site = site.clone();
        let deadline = Duration::from_secs(args.header_timeout);
        std::thread::spawn(move || {
            // A client that goes away mid-response is not our error.
            let _ = handle(stream, &site, deadline);
        });
    }
    Ok(())
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

fn handle(stream: TcpStream, site: &Site, header_deadline: Duration) -> std::io::Result<()> {
    let mut out = stream.try_clone()?;
    let head = match read_head(&stream, header_deadline)? {
        Some(Ok(head)) => head,
        Some(Err(e)) => {
            let (status, reason) = e.status();
            respond(&mut out, status, reason, Some(&e.to_string()))?;
            return linger(&stream);
        }
        // The client went away, or sent nothing complete in time.
        None => return Ok(()),
    };
    let host = head.host.as_deref().unwrap_or_default();
    if host != site.host && host != site.host.replace("127.0.0.1", "localhost") {
        return respond(&mut out, 421, "Misdirected Request", None);
    }
    if head.method != "GET" && head.method != "HEAD" {
        return respond(&mut out, 405, "Method Not Allowed", None);
    }
    let path = head.path();
    let head_only = head.method == "HEAD";
    // Exact names only: no path is ever built from the request.
    let name = path.strip_prefix('/').unwrap_or_default();
    if let Some((_, bytes)) = site.web.files.iter().find(|(n, _)| n == name) {
        return send_bytes(&mut out, Path::new(name), bytes, head_only);
    }
    match &site.trace {
        Some((p, f)) if p == path => send_file(&mut out, f, head_only),
        _ => respond(&mut out, 404, "Not Found", None),
    }
}

/// Reads the request head, all of it within `deadline` of the connection's start (a client
/// that sends one byte a second is dropped when the deadline passes, not kept forever).
/// `None` when the client closed the connection or the deadline passed first.
fn read_head(
    mut stream: &TcpStream,
    deadline: Duration,
) -> std::io::Result<Option<Result<RequestHead, HeadError>>> {
    let until = Instant::now() + deadline;
    let mut reader = HeadReader::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        stream.set_read_timeout(Some(left))?;
        let n = match stream.read(&mut buf) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        match reader.push(&buf[..n]) {
            Ok(None) => {}
            Ok(Some(head)) => return Ok(Some(Ok(head))),
            Err(e) => return Ok(Some(Err(e))),
        }
    }
}

/// After answering a refused request whose bytes are still arriving: closes our side, then
/// reads and discards what the client still sends, for at most [`LINGER`]. Closing a socket
/// with unread input makes the kernel reset the connection, and the client's send would fail
/// ("connection reset") before it reads the 431.
fn linger(mut stream: &TcpStream) -> std::io::Result<()> {
    stream.shutdown(Shutdown::Write)?;
    let until = Instant::now() + LINGER;
    let mut buf = [0u8; 16 * 1024];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(_) => {}
        }
    }
}

/// How long a refused client may go on sending before the connection is closed anyway.
const LINGER: Duration = Duration::from_secs(2);

fn respond(
    out: &mut TcpStream,
    status: u16,
    reason: &str,
    body: Option<&str>,
) -> std::io::Result<()> {
    let body = body.unwrap_or(reason);
    write!(
        out,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()
}

fn send_bytes(
    out: &mut TcpStream,
    name: &Path,
    bytes: &[u8],
    head_only: bool,
) -> std::io::Result<()> {
    write_ok_head(out, name, bytes.len() as u64)?;
    if !head_only {
        out.write_all(bytes)?;
    }
    out.flush()
}

fn write_ok_head(out: &mut TcpStream, name: &Path, len: u64) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {len}\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nContent-Security-Policy: {CSP}\r\nConnection: close\r\n\r\n",
        content_type(name)
    )
}

fn send_file(out: &mut TcpStream, path: &Path, head_only: bool) -> std::io::Result<()> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(_) => return respond(out, 404, "Not Found", None),
    };
    let len = file.metadata()?.len();
    write_ok_head(out, path, len)?;
    if !head_only {
        std::io::copy(&mut file, out)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_trace_names_for_urls() {
        assert_eq!(url_encode("a b/../c.bst"), "a%20b%2F..%2Fc.bst");
        assert_eq!(content_type(Path::new("x.wasm")), "application/wasm");
    }
}
