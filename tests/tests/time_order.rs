//! Timestamps going backwards (issue 13.8): one rule in every command, a warning naming the
//! line, and the same duration from `stat` and `analyze`.

use blocksight_tests::run_blocksight;

fn backwards_csv() -> std::path::PathBuf {
    let mut text = String::from("time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid\n");
    for i in 0..1000u64 {
        text.push_str(&format!(
            "{},sda,{},4096,read,100000,1\n",
            i * 1_000_000,
            (i % 97) * 4096
        ));
    }
    // Line 1002: a second earlier than the line before it.
    text.push_str("0,sda,0,4096,read,100000,1\n");
    for i in 1000..2000u64 {
        text.push_str(&format!(
            "{},sda,{},4096,read,100000,1\n",
            i * 1_000_000,
            (i % 97) * 4096
        ));
    }
    let path =
        std::env::temp_dir().join(format!("blocksight-backwards-{}.csv", std::process::id()));
    std::fs::write(&path, text).expect("write the input");
    path
}

fn json(args: &[&str], path: &std::path::Path) -> (serde_json::Value, String) {
    let mut all: Vec<std::ffi::OsString> = args.iter().map(|a| a.into()).collect();
    all.push(path.into());
    all.push("--json".into());
    let out = run_blocksight(all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        serde_json::from_slice(&out.stdout).expect("json"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn stat_and_analyze_agree_and_warn_with_the_line() {
    let path = backwards_csv();
    let (stat, stat_err) = json(&["stat"], &path);
    let (analysis, analyze_err) = json(&["analyze"], &path);
    std::fs::remove_file(&path).ok();
    let warning = "1 record(s) were earlier than a record before them (first: line 1002: 999 ms \
                   earlier than a record before it)";
    assert!(stat_err.contains(warning), "{stat_err}");
    assert!(analyze_err.contains(warning), "{analyze_err}");
    assert_eq!(stat["out_of_order_records"], 1);
    assert_eq!(stat["duration_nanos"], 1_999_000_000u64);
    assert_eq!(
        analysis["summary"]["duration_nanos"],
        stat["duration_nanos"]
    );
    // The record was sorted in, not dropped, and the timeline's peak stays physical: at most 2
    // requests per millisecond bin here (1 ms apart, plus the one sorted in).
    assert_eq!(stat["events"], 2001);
    let peak = analysis["timeline"]["bins"]
        .as_array()
        .expect("bins")
        .iter()
        .map(|b| b["iops"].as_f64().unwrap_or(0.0))
        .fold(0.0, f64::max);
    let bin_secs = analysis["timeline"]["bin_nanos"].as_f64().expect("width") / 1e9;
    assert!(
        peak * bin_secs <= bin_secs * 1000.0 + 2.0,
        "peak {peak} IOPS"
    );
}
