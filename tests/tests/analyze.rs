//! `blocksight analyze` end to end: the JSON report on the real pgbench sample (its tracefs recording) is consistent
//! with `stat` and with itself, and the human report of a small real trace matches its golden
//! file (`UPDATE_EXPECT=1` refreshes it).

use blocksight_tests::{assert_golden, data_dir, run_blocksight};
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = run_blocksight(args);
    assert!(
        out.status.success(),
        "blocksight {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

#[test]
fn report_on_the_real_sample_is_consistent() {
    let sample = data_dir().join("sample/pgbench.tracefs.txt.zst");
    let s = sample.to_str().expect("utf-8 path");
    let r = json(&["analyze", s, "--json"]);
    let stat = json(&["stat", s, "--json"]);
    let summary = &r["summary"];
    assert_eq!(summary["events"], stat["events"]);
    let ops = summary["ops"].as_array().expect("ops");
    assert_eq!(ops[0]["requests"], stat["reads"]);
    assert_eq!(ops[1]["requests"], stat["writes"]);
    assert_eq!(ops[0]["bytes"], stat["read_bytes"]);

    // Timeline: every request in exactly one bin, at most 256 bins.
    let bins = r["timeline"]["bins"].as_array().expect("bins");
    assert!(!bins.is_empty() && bins.len() <= 256);
    let in_bins: u64 = bins
        .iter()
        .map(|b| u(&b["reads"]) + u(&b["writes"]) + u(&b["other"]))
        .sum();
    assert_eq!(in_bins, u(&summary["events"]));
    // The sample has completions: latency percentiles and queue depth.
    assert_eq!(r["timeline"]["has_queue_depth"], true);
    let lat = &r["latency"]["all"];
    assert!(
        u(&lat["p50_nanos"]) <= u(&lat["p99_nanos"])
            && u(&lat["p99_nanos"]) <= u(&lat["max_nanos"])
    );

    // Hot data at 4 KiB: the footprint matches stat's, hot sizes grow with the share.
    let hot = &r["hot"];
    assert_eq!(hot["exact"], true);
    assert_eq!(hot["all"]["footprint_bytes"], stat["footprint_bytes"]);
    let sizes: Vec<u64> = hot["all"]["hot_sizes"]
        .as_array()
        .expect("sizes")
        .iter()
        .map(|h| u(&h["bytes"]))
        .collect();
    assert_eq!(sizes.len(), 4);
    assert!(
        sizes.windows(2).all(|w| w[0] <= w[1]) && sizes[3] <= u(&hot["all"]["footprint_bytes"])
    );
    let regions = hot["top_regions"].as_array().expect("regions");
    assert!(!regions.is_empty() && regions.len() <= 20);
    assert!(regions
        .windows(2)
        .all(|w| u(&w[0]["ios"]) >= u(&w[1]["ios"])));

    // Heat maps: reads plus writes add up to the data requests.
    let maps = r["heatmaps"]["maps"].as_array().expect("maps");
    let cells: u64 = maps
        .iter()
        .flat_map(|m| {
            m["reads"]
                .as_array()
                .into_iter()
                .flatten()
                .chain(m["writes"].as_array().into_iter().flatten())
        })
        .map(u)
        .sum();
    assert_eq!(cells, u(&ops[0]["requests"]) + u(&ops[1]["requests"]));

    // Sizing: the recommendation's sizes are ordered as defined.
    let rec = &r["cache_sizing"]["recommendation"];
    let p90 = u(&rec["for_90pct_of_achievable"]["size_bytes"]);
    let p95 = u(&rec["for_95pct_of_achievable"]["size_bytes"]);
    assert!(p90 <= p95 && p95 <= u(&rec["footprint_bytes"]));
    assert!(u(&rec["recommended"]["size_bytes"]) >= p90);
}

#[test]
fn line_size_changes_the_granularity() {
    let sample = data_dir().join("sample/pgbench.tracefs.txt.zst");
    let s = sample.to_str().expect("utf-8 path");
    let small = json(&["analyze", s, "--json"]);
    let large = json(&["analyze", s, "--line-size", "1MiB", "--json"]);
    assert_eq!(large["hot"]["block_bytes"], 1u64 << 20);
    assert!(
        u(&large["hot"]["all"]["footprint_bytes"]) >= u(&small["hot"]["all"]["footprint_bytes"])
    );
    let bad = run_blocksight(["analyze", s, "--line-size", "3000"]);
    assert!(!bad.status.success());
}

#[test]
fn human_report_golden() {
    let dir = data_dir().join("analysis");
    let input = data_dir().join("blkparse/fio_loop.txt");
    let out = run_blocksight(["analyze", input.to_str().expect("utf-8 path")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_golden(
        &dir.join("0001_fio_loop.analyze.txt"),
        &String::from_utf8_lossy(&out.stdout),
    );
}

/// `analyze --per-device` on a multi-volume fixture: the rows add up to the whole trace, each
/// row's counts match `stat` of that volume alone, and the text table matches its golden file.
#[test]
fn per_device_rows_add_up_and_match_each_volume_alone() {
    let file = data_dir().join("tencent/cbs_sample.csv");
    let f = file.to_str().expect("utf-8 path");
    let r = json(&["analyze", f, "--per-device", "--top", "2", "--json", "-q"]);
    let d = &r["per_device"];
    let rows = d["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    let others = &d["others"];
    assert_eq!(u(&d["devices"]), 2 + u(&others["devices"]));
    let sum = |k: &str| rows.iter().map(|x| u(&x[k])).sum::<u64>() + u(&others[k]);
    let ops = r["summary"]["ops"].as_array().expect("ops");
    assert_eq!(sum("reads"), u(&ops[0]["requests"]));
    assert_eq!(sum("writes"), u(&ops[1]["requests"]));
    assert_eq!(
        sum("footprint_bytes"),
        u(&r["hot"]["all"]["footprint_bytes"])
    );
    // Ranked by what a cache saves.
    let saved: Vec<u64> = rows.iter().map(|x| u(&x["saved_line_ios"])).collect();
    assert!(saved.windows(2).all(|w| w[0] >= w[1]), "{saved:?}");
    // Without --top the default is 20 rows: here every volume, no others.
    let all = json(&["analyze", f, "--per-device", "--json", "-q"]);
    assert_eq!(all["per_device"]["others"], Value::Null);
    assert_eq!(all["config"]["device_rows"], 20);
    let out = run_blocksight(["analyze", f, "--per-device", "-q"]);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let table = &text[text.find("\nper device  ").expect("the table") + 1..];
    assert_golden(&data_dir().join("tencent/cbs_sample.per-device.txt"), table);
    // Without --per-device the report has no such field (older consumers see nothing new).
    let plain = json(&["analyze", f, "--json", "-q"]);
    assert!(plain.get("per_device").is_none());
    assert!(plain["config"].get("device_rows").is_none());
}

/// `--threads`: hot data on a second thread gives the one-thread report byte for byte, per
/// device and with hot data sampled (`--exact-blocks` far below the footprint); 0 is refused.
#[test]
fn threads_do_not_change_the_report() {
    for (file, extra) in [
        ("tencent/cbs_sample.csv", &["--per-device"][..]),
        ("sample/pgbench.bst", &["--exact-blocks", "1000"][..]),
    ] {
        let f = data_dir().join(file);
        let f = f.to_str().expect("utf-8 path");
        let report = |threads: &str| {
            let mut args = vec!["analyze", f, "--json", "-q", "--threads", threads];
            args.extend_from_slice(extra);
            let out = run_blocksight(&args);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            out.stdout
        };
        let one = report("1");
        assert_eq!(one, report("2"), "{file}: two threads");
        assert_eq!(one, report("3"), "{file}: three threads");
        let r: Value = serde_json::from_slice(&one).expect("JSON");
        if extra.contains(&"--exact-blocks") {
            assert_eq!(r["hot"]["exact"], false, "hot data sampled");
        }
    }
    let out = run_blocksight(["analyze", "-q", "--threads", "0", "x.bst"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--threads: at least 1"));
}

/// `stat --threads`: the summary counted on a second thread while the first decodes is the
/// one-thread summary byte for byte, skipped records, a cut file and a bad checksum included;
/// 0 is refused.
#[test]
fn threads_do_not_change_the_stat_summary() {
    for file in [
        "tencent/cbs_sample.csv",
        "sample/pgbench.bst",
        "msr/hm_0_sample.csv",
        "alibaba/io_traces_sample.csv",
        "native/0003_cut.bst",
        "native/0004_bad_crc.bst",
    ] {
        let f = data_dir().join(file);
        let f = f.to_str().expect("utf-8 path");
        let summary = |threads: &str| {
            let out = run_blocksight(["stat", f, "--json", "-q", "--threads", threads]);
            (out.status.success(), out.stdout)
        };
        let one = summary("1");
        assert_eq!(one, summary("2"), "{file}: two threads");
        assert_eq!(one, summary("3"), "{file}: three threads");
        if one.0 {
            let s: Value = serde_json::from_slice(&one.1).expect("JSON");
            assert!(s["events"].as_u64().is_some_and(|n| n > 0), "{file}");
        }
    }
    let out = run_blocksight(["stat", "-q", "--threads", "0", "x.bst"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--threads: at least 1"));
}

/// A one-device trace's row is the analysis's own recommendation: the same sample size over
/// the same hash (docs/analysis.md, "Per device").
#[test]
fn per_device_row_of_a_one_device_trace_is_the_analysis_recommendation() {
    let sample = data_dir().join("sample/pgbench.bst");
    let r = json(&[
        "analyze",
        sample.to_str().expect("utf-8 path"),
        "--per-device",
        "--json",
        "-q",
    ]);
    let rows = r["per_device"]["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    let rec = &r["cache_sizing"]["recommendation"]["recommended"];
    assert_eq!(row["recommended_bytes"], rec["size_bytes"]);
    assert_eq!(row["hit_ratio"], rec["hit_ratio"]);
    assert_eq!(row["footprint_bytes"], r["hot"]["all"]["footprint_bytes"]);
    assert_eq!(
        row["hot_90_bytes"], r["hot"]["all"]["hot_sizes"][1]["bytes"],
        "hot data at 90%"
    );
}
