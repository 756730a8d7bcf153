//! Regression tests for issue 13 (hostile inputs and faults) that run the `blocksight` binary:
//! fleet traces with tens of thousands of devices, a recording without its end marker, a report
//! whose block sample keeps nothing, and `serve` facing slow and over-long request heads
//! (loopback only). The recorder's ones (real loop devices, root) are in `record.rs`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use analyzer_core::native::NativeDecoder;
use analyzer_core::report::TraceCopy;
use analyzer_core::{Decoder, IoEvent, Op};
use blocksight_tests::{blocksight_bin, data_dir};

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("bs-hostile-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn blocksight(args: &[&std::ffi::OsStr], env: &[(&str, &Path)]) -> std::process::Output {
    let mut cmd = Command::new(blocksight_bin());
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run blocksight")
}

fn stat_events(path: &Path) -> (u64, String) {
    let out = blocksight(&["stat".as_ref(), "--json".as_ref(), path.as_os_str()], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    (
        v["events"].as_u64().expect("events"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A CSV trace with one request on each of `devices` devices.
fn csv_one_event_per_device(path: &Path, devices: usize) {
    let mut text = String::from("time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid\n");
    for i in 0..devices {
        text.push_str(&format!("{},dev{i},0,4096,read,100,1\n", i * 1000));
    }
    std::fs::write(path, text).expect("write csv");
}

#[test]
fn issue_13_import_keeps_every_device_of_a_fleet_trace_in_linear_size() {
    let tmp = TempDir::new("devices");
    let mut sizes = Vec::new();
    for devices in [5_000, 20_000] {
        let csv = tmp.0.join(format!("d{devices}.csv"));
        let bst = tmp.0.join(format!("d{devices}.bst"));
        csv_one_event_per_device(&csv, devices);
        let out = blocksight(
            &[
                "import".as_ref(),
                csv.as_os_str(),
                "-o".as_ref(),
                bst.as_os_str(),
            ],
            &[],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Before: stat counted 4,096 of 5,000 and warned "device index 4096 is over the limit".
        let (events, warnings) = stat_events(&bst);
        assert_eq!(events, devices as u64, "{warnings}");
        assert!(!warnings.contains("warning"), "{warnings}");
        sizes.push(std::fs::metadata(&bst).expect("bst").len());
    }
    // Before: 8.7 MB for 2,000 devices and 837 MB for 20,000 (a header rewrite per device).
    assert!(sizes[1] < 40 * 20_000, "{sizes:?}");
    assert!(sizes[1] < 5 * sizes[0], "not linear: {sizes:?}");
}

#[test]
fn issue_13_stat_warns_about_a_recording_without_its_end_marker() {
    // A file cut exactly after a complete chunk, as a SIGKILLed recorder leaves it: no partial
    // record, so the old reader said nothing at all.
    let tmp = TempDir::new("end");
    let whole = std::fs::read(data_dir().join("native/0001_fio_loop.bst")).expect("fixture");
    let mut d = NativeDecoder::new();
    d.push(&whole);
    d.finish();
    while d.next_event().expect("decodes").is_some() {}
    // Walk the frames to the end of the last events chunk.
    let mut pos = 12;
    let mut last_events_end = 0;
    while pos + 20 <= whole.len() {
        let len = u32::from_le_bytes(whole[pos + 8..pos + 12].try_into().expect("4")) as usize;
        if whole[pos + 4] == 2 {
            last_events_end = pos + 20 + len;
        }
        pos += 20 + len;
    }
    let cut = tmp.0.join("killed.bst");
    std::fs::write(&cut, &whole[..last_events_end]).expect("write");
    let out = blocksight(&["stat".as_ref(), cut.as_os_str()], &[]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no end marker"), "{err}");
    let out = blocksight(
        &[
            "stat".as_ref(),
            data_dir().join("native/0001_fio_loop.bst").as_os_str(),
        ],
        &[],
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("no end marker"));
}

/// A stand-in for the built web bundle: `report` and `serve` only need its five files.
fn fake_bundle(dir: &Path) -> PathBuf {
    let web = dir.join("web");
    std::fs::create_dir_all(&web).expect("web dir");
    for (name, body) in [
        ("index.html", "<!DOCTYPE html><title>t</title>"),
        ("web-app.js", "async function __wbg_init(x) {}"),
        ("web-app_bg.wasm", "\0asm"),
        ("worker.js", "let wasm_bindgen;"),
        ("worker_bg.wasm", "\0asm"),
    ] {
        std::fs::write(web.join(name), body).expect("bundle file");
    }
    web
}

fn ev(block: u64, i: u64) -> IoEvent {
    IoEvent {
        time_nanos: i,
        device: 0,
        offset_bytes: block * 4096,
        len_bytes: 4096,
        op: Op::Read,
        latency_nanos: None,
        pid: None,
    }
}

#[test]
fn issue_13_report_states_the_real_copy_count_and_never_embeds_an_empty_sample() {
    let tmp = TempDir::new("report");
    let web = fake_bundle(&tmp.0);
    // 2,000 requests, all on one block that a 5% block sample leaves out.
    let threshold = analyzer_core::report::sample_threshold(100, 2_000);
    let block = (0u64..)
        .find(|&b| !TraceCopy::new(1, threshold).keeps(&ev(b, 0)))
        .expect("a block outside the sample");
    let csv = tmp.0.join("one-block.csv");
    let mut text = String::from("time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid\n");
    for i in 0..2_000u64 {
        text.push_str(&format!(
            "{},sda,{},4096,read,100,1\n",
            i * 1000,
            block * 4096
        ));
    }
    std::fs::write(&csv, text).expect("csv");
    let html = tmp.0.join("r.html");
    let out = blocksight(
        &[
            "report".as_ref(),
            csv.as_os_str(),
            "-o".as_ref(),
            html.as_os_str(),
            "--embed-events".as_ref(),
            "100".as_ref(),
        ],
        &[("BLOCKSIGHT_WEB_DIR", &web)],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Before: "a 5.00% spatial sample of the trace (…, about 100 events)" with 0 in the copy.
    assert!(err.contains("the first 100 of 2000 events"), "{err}");
    assert!(!err.contains("about"), "{err}");
    // The embedded copy really holds them.
    let page = std::fs::read_to_string(&html).expect("report");
    let open = "<script type=\"application/octet-stream\" id=\"bs-trace\">";
    let b64 = page
        .split(open)
        .nth(1)
        .and_then(|t| t.split("</script>").next())
        .expect("a trace copy");
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64");
    let mut d = NativeDecoder::new();
    d.push(&bytes);
    d.finish();
    let mut n = 0;
    while d.next_event().expect("decodes").is_some() {
        n += 1;
    }
    assert_eq!(n, 100);
}

/// `blocksight serve` on a free loopback port; killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(web: &Path) -> Server {
        let mut child = Command::new(blocksight_bin())
            .args(["serve", "--port", "0"])
            .env("BLOCKSIGHT_WEB_DIR", web)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the URL line");
        let port = line
            .trim()
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches('/')
            .parse()
            .unwrap_or_else(|_| panic!("a URL with a port: {line:?}"));
        Server { child, port }
    }

    fn connect(&self) -> TcpStream {
        TcpStream::connect(("127.0.0.1", self.port)).expect("connect")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn response(mut s: TcpStream) -> String {
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn issue_13_serve_answers_431_to_an_over_long_head_instead_of_resetting() {
    let tmp = TempDir::new("serve431");
    let server = Server::start(&fake_bundle(&tmp.0));
    let host = format!("Host: 127.0.0.1:{}\r\n", server.port);
    let mut s = server.connect();
    s.write_all(format!("GET / HTTP/1.1\r\n{host}\r\n").as_bytes())
        .expect("send");
    assert!(response(s).starts_with("HTTP/1.1 200 OK"));
    for _ in 0..3 {
        let mut s = server.connect();
        let mut head = b"GET / HTTP/1.1\r\nX-Long: ".to_vec();
        head.resize(64 << 10, b'a');
        // The server may stop reading part way; the answer must still arrive.
        let _ = s.write_all(&head);
        let got = response(s);
        assert!(got.starts_with("HTTP/1.1 431 "), "{got:?}");
    }
}

#[test]
fn issue_13_serve_drops_a_client_that_drips_its_head() {
    let tmp = TempDir::new("servedrip");
    let server = Server::start(&fake_bundle(&tmp.0));
    let mut s = server.connect();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    s.write_all(b"GET / HTTP/1.1\r\nX-Slow: ").expect("send");
    // One byte per 0.1 s for up to 60 s (the old server's 30 s timeout was per read, so a
    // dripping client was never dropped). The default header deadline is 10 s.
    let mut closed = false;
    for _ in 0..600 {
        if s.write_all(b"a").is_err() {
            closed = true;
            break;
        }
        let mut b = [0u8; 64];
        match s.read(&mut b) {
            Ok(0) => {
                closed = true;
                break;
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => {
                closed = true;
                break;
            }
        }
    }
    assert!(closed, "the server kept a dripping client for a minute");
}
