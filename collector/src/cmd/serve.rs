//! `blocksight serve [IN] [--port P]`: serves the web app on 127.0.0.1 with the trace preloaded
//! (`/?url=/trace/NAME`). A minimal std-only HTTP/1.1 server: GET and HEAD of the bundle's own
//! files and of the one trace given on the command line, nothing else.
//!
//! Safety: it listens on loopback only; request paths are matched against the bundle's file
//! names (no path is ever joined from the request, so `..` cannot escape); requests whose `Host`
//! is not this loopback address are refused (DNS rebinding); responses carry a
//! Content-Security-Policy that limits the page to its own origin.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use super::report::web_dir;

/// Requests' header block larger than this is refused.
const MAX_HEADER_BYTES: usize = 16 * 1024;

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
}

struct Site {
    web: PathBuf,
    /// The bundle's files by URL path (`/index.html`, `/web-app.js`, ...).
    files: Vec<(String, PathBuf)>,
    trace: Option<(String, PathBuf)>,
    host: String,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let web = web_dir()?;
    let mut files = Vec::new();
    for entry in
        std::fs::read_dir(&web).with_context(|| format!("cannot list {}", web.display()))?
    {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            files.push((format!("/{name}"), entry.path()));
        }
    }
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
        files,
        trace,
        host: format!("127.0.0.1:{port}"),
    });
    let url = match &site.trace {
        Some((path, _)) => format!("http://127.0.0.1:{port}/?url={path}"),
        None => format!("http://127.0.0.1:{port}/"),
    };
    eprintln!(
        "blocksight: serving {} at {url} (Ctrl-C stops)",
        site.web.display()
    );
    println!("{url}");
    std::io::stdout().flush()?;
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let site = site.clone();
        std::thread::spawn(move || {
            // A client that goes away mid-response is not our error.
            let _ = handle(stream, &site);
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

fn handle(stream: TcpStream, site: &Site) -> std::io::Result<()> {
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    let mut head = Vec::new();
    // Read the request line and headers, bounded.
    loop {
        let mut line = Vec::new();
        let n = (&mut reader)
            .take(MAX_HEADER_BYTES as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&line);
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        if head.len() > MAX_HEADER_BYTES {
            return respond(&mut out, 431, "Request Header Fields Too Large", None);
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines = head.lines();
    let request = lines.next().unwrap_or_default();
    let mut parts = request.split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let host = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("host"))
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_default();
    if host != site.host && host != site.host.replace("127.0.0.1", "localhost") {
        return respond(&mut out, 421, "Misdirected Request", None);
    }
    if method != "GET" && method != "HEAD" {
        return respond(&mut out, 405, "Method Not Allowed", None);
    }
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let path = if path == "/" { "/index.html" } else { path };
    let file = site
        .files
        .iter()
        .chain(site.trace.iter())
        .find(|(p, _)| p == path)
        .map(|(_, f)| f.clone());
    match file {
        Some(f) => send_file(&mut out, &f, method == "HEAD"),
        None => respond(&mut out, 404, "Not Found", None),
    }
}

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

fn send_file(out: &mut TcpStream, path: &Path, head_only: bool) -> std::io::Result<()> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(_) => return respond(out, 404, "Not Found", None),
    };
    let len = file.metadata()?.len();
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {len}\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nContent-Security-Policy: {CSP}\r\nConnection: close\r\n\r\n",
        content_type(path)
    )?;
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
