//! The bundled real sample (tests/data/sample): `stat` of the native file and of the raw tracefs
//! text it was imported from must agree, and match the golden summary (which the wasm tests also
//! compare against, so host and browser agree).

use blocksight_tests::{assert_golden, data_dir, run_blocksight};

fn stat_json(file: &str) -> String {
    let path = data_dir().join("sample").join(file);
    let out = run_blocksight([
        std::ffi::OsStr::new("stat"),
        path.as_os_str(),
        "--json".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "stat failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn sample_stat_matches_golden() {
    let native = stat_json("pgbench.bst");
    assert_golden(
        &data_dir().join("sample").join("pgbench.stat.json"),
        &native,
    );
    let summary: serde_json::Value = serde_json::from_str(&native).expect("json");
    // Facts of the recording (README.md there): 40 s of pgbench, every request completed.
    assert_eq!(summary["events"], 118_741);
    assert_eq!(summary["events_with_latency"], 118_741);
    assert_eq!(summary["skipped_records"], 0);
}

#[test]
fn native_import_preserves_every_event() {
    assert_eq!(
        stat_json("pgbench.tracefs.txt.zst"),
        stat_json("pgbench.bst")
    );
}
