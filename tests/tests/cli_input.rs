//! The CLI's shared input layer (collector/src/input.rs): per-CPU blktrace files given as NAME,
//! format detection across several inputs, and errors for unreadable inputs.

use blocksight_tests::{data_dir, run_blocksight};

fn stat(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let mut all = vec![std::ffi::OsStr::new("stat")];
    all.extend_from_slice(args);
    all.push("--json".as_ref());
    run_blocksight(all)
}

/// CPU 0's file of this recording is empty: detection must use the first file with data.
#[test]
fn per_cpu_name_with_empty_first_cpu_file_is_detected() {
    let name = data_dir().join("blktrace").join("seqwrite64k");
    assert_eq!(
        std::fs::metadata(name.with_extension("blktrace.0"))
            .map(|m| m.len())
            .ok(),
        Some(0)
    );
    let out = stat(&[name.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["source_format"], "blktrace");
    assert!(v["writes"].as_u64().unwrap_or(0) > 0);
}

#[test]
fn missing_input_names_the_file() {
    let out = stat(&["/nonexistent/trace.bst".as_ref()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/trace.bst"), "{err}");
}

#[test]
fn unknown_format_says_how_to_list_formats() {
    let path = data_dir().join("sample").join("README.md");
    let out = stat(&[path.as_os_str()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--format") && err.contains("blocksight formats"),
        "{err}"
    );
}

/// A tracefs trace of a dm device (bios only) read without `--action`: its bios are the
/// requests, stderr and the JSON say so; `--action D` still refuses it, naming the flag.
#[test]
fn a_dm_trace_without_an_action_is_read_as_bios_and_says_so() {
    let dir = std::env::temp_dir().join(format!("blocksight-dm-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("dm.trace");
    std::fs::write(
        &path,
        "fio-1 [000] 1.000000: block_bio_queue: 252,3 R 0 + 128 [fio]\n\
         fio-1 [000] 1.000010: block_bio_queue: 252,3 W 512 + 8 [fio]\n\
         <idle>-0 [001] 1.000200: block_bio_complete: 252,3 R 64 + 64 [0]\n\
         <idle>-0 [001] 1.000300: block_bio_complete: 252,3 W 512 + 8 [0]\n",
    )
    .expect("write");
    let out = stat(&[path.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("blocksight: note: no block_rq_issue record"),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["events"], 2);
    assert_eq!(v["events_with_latency"], 2);
    assert!(v["notes"][0]
        .as_str()
        .is_some_and(|n| n.contains("block_bio_queue")));
    let out = stat(&[path.as_os_str(), "--action".as_ref(), "D".as_ref()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("read it with --action Q"));
    std::fs::remove_dir_all(&dir).ok();
}
