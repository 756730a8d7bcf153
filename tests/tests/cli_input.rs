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
