//! `stat --json` of real public trace samples against golden outputs (tests/data/real). The
//! samples themselves are not in the repository (tests/data/real/README.md says where each comes
//! from, its commit, size and sha256): put them in one folder, then
//! `BLOCKSIGHT_REAL_SAMPLES=/that/folder cargo test -p blocksight-tests --test real -- --ignored`.

use blocksight_tests::{assert_golden, data_dir, run_blocksight};

/// File name, the format detection must find, and its size in bytes (to catch a different cut).
const SAMPLES: &[(&str, &str, u64)] = &[
    ("systor17-traces-sample.csv.gz", "systor", 14_312),
    ("systor17-additional-sample.csv.gz", "systor", 14_187),
    ("msr-cambridge1-sample.csv", "msr", 51_000),
    ("cloud_storage-sample.bz2", "tencent", 247_292),
    ("mqsim-tpcc-small-200.trace", "mqsim", 5_452),
    ("arc-P3-300.lis", "arc", 4_716),
    ("cloudPhysicsIO-500.vscsi", "vscsi1", 16_000),
    ("cloudPhysicsIO-200.oracleGeneral", "oracle-general", 4_800),
    ("cloudPhysicsIO-500.csv", "cloudphysics-csv", 13_223),
    ("disksim-ascii-200.trace", "disksim", 5_149),
    ("cloudPhysicsIO-500.v1.lcs", "lcs", 20_192),
    ("cloudPhysicsIO-500.v2.lcs", "lcs", 22_192),
    ("cloudPhysicsIO-500.v3.lcs", "lcs", 26_192),
];

#[test]
#[ignore = "needs the real samples: set BLOCKSIGHT_REAL_SAMPLES (tests/data/real/README.md)"]
fn real_samples_are_detected_and_match_their_goldens() {
    let dir = std::env::var_os("BLOCKSIGHT_REAL_SAMPLES")
        .map(std::path::PathBuf::from)
        .expect("set BLOCKSIGHT_REAL_SAMPLES to the folder holding the samples");
    for &(file, format, size) in SAMPLES {
        let path = dir.join(file);
        let len = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .len();
        assert_eq!(len, size, "{file} is not the sample the README describes");
        let out = run_blocksight([
            std::ffi::OsStr::new("stat"),
            path.as_os_str(),
            "--json".as_ref(),
        ]);
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8");
        let summary: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(summary["source_format"], format, "{file}");
        assert_eq!(summary["skipped_records"], 0, "{file}");
        assert_golden(
            &data_dir().join("real").join(format!("{file}.stat.json")),
            &text,
        );
    }
}

/// `analyze --per-device --top 5 --json` of the real Tencent CBS sample (2,038 volumes) against
/// its golden per-device table (tests/data/real/cloud_storage-sample.bz2.per-device.json).
#[test]
#[ignore = "needs the real samples: set BLOCKSIGHT_REAL_SAMPLES (tests/data/real/README.md)"]
fn real_tencent_sample_per_device_table_matches_its_golden() {
    let dir = std::env::var_os("BLOCKSIGHT_REAL_SAMPLES")
        .map(std::path::PathBuf::from)
        .expect("set BLOCKSIGHT_REAL_SAMPLES to the folder holding the samples");
    let path = dir.join("cloud_storage-sample.bz2");
    let out = run_blocksight([
        std::ffi::OsStr::new("analyze"),
        path.as_os_str(),
        "--per-device".as_ref(),
        "--top".as_ref(),
        "5".as_ref(),
        "--json".as_ref(),
        "-q".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let d = &r["per_device"];
    assert_eq!(d["devices"], 2038, "the sample's distinct volumes");
    let rows = d["rows"].as_array().expect("rows");
    let total: u64 = rows
        .iter()
        .map(|x| x["requests"].as_u64().unwrap_or(0))
        .sum::<u64>()
        + d["others"]["requests"].as_u64().unwrap_or(0);
    assert_eq!(total, r["summary"]["events"].as_u64().unwrap_or(0));
    let text = serde_json::to_string_pretty(d).expect("json") + "\n";
    assert_golden(
        &data_dir()
            .join("real")
            .join("cloud_storage-sample.bz2.per-device.json"),
        &text,
    );
}

/// The CloudPhysics CSV, vscsi and lcs samples are the same 500 requests (libCacheSim's CSV is its
/// `.vscsi` file with the time in whole seconds, the lcs files its converter's output): every
/// count but the clock must agree.
#[test]
#[ignore = "needs the real samples: set BLOCKSIGHT_REAL_SAMPLES (tests/data/real/README.md)"]
fn real_cloudphysics_csv_equals_its_vscsi_twin() {
    let dir = std::env::var_os("BLOCKSIGHT_REAL_SAMPLES")
        .map(std::path::PathBuf::from)
        .expect("set BLOCKSIGHT_REAL_SAMPLES to the folder holding the samples");
    let stat = |file: &str| -> serde_json::Value {
        let out = run_blocksight([
            std::ffi::OsStr::new("stat"),
            dir.join(file).as_os_str(),
            "--json".as_ref(),
        ]);
        assert!(out.status.success(), "{file}");
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let bin = stat("cloudPhysicsIO-500.vscsi");
    // libCacheSim's lcs files of the same 500 requests (its converter over the .vscsi sample):
    // version 1 keeps no operation, so all its requests are reads.
    for (file, keys) in [
        (
            "cloudPhysicsIO-500.csv",
            &["devices", "reads", "writes"][..],
        ),
        ("cloudPhysicsIO-500.v2.lcs", &["reads", "writes"][..]),
        ("cloudPhysicsIO-500.v3.lcs", &["reads", "writes"][..]),
        ("cloudPhysicsIO-500.v1.lcs", &[][..]),
    ] {
        let twin = stat(file);
        let by_op: &[&str] = if keys.is_empty() {
            &[]
        } else {
            &["read_bytes", "write_bytes", "size_histogram"]
        };
        for key in keys
            .iter()
            .chain(by_op)
            .chain(&["events", "footprint_bytes"])
        {
            assert_eq!(twin[key], bin[key], "{file}: {key}");
        }
        let bytes = |v: &serde_json::Value| {
            v["read_bytes"].as_u64().expect("read_bytes") + v["write_bytes"].as_u64().expect("w")
        };
        assert_eq!(bytes(&twin), bytes(&bin), "{file}: bytes");
        // The same span, in whole seconds.
        let secs = |v: &serde_json::Value, k: &str| v[k].as_u64().expect(k) / 1_000_000_000;
        assert_eq!(
            secs(&twin, "last_time_nanos") - secs(&twin, "first_time_nanos"),
            secs(&bin, "last_time_nanos") - secs(&bin, "first_time_nanos"),
            "{file}: span"
        );
    }
}
