"""The Python results equal the CLI's --json on the sample, for every job, from a path, from a
Parquet export and from Arrow/numpy/pandas batches; DuckDB reads the export with the same
counts as `stat --json`."""

import json
import pathlib

import numpy as np
import pyarrow.parquet as pq
import pytest

import blocksight


def test_stat_equals_cli(sample, cli):
    assert blocksight.stat(sample) == cli("stat", sample, "--json")


def test_analyze_equals_cli(sample, cli):
    result = blocksight.analyze(sample)
    assert result == cli("analyze", sample, "--json")
    assert blocksight.points(result["cache_sizing"]).shape[0] == len(result["cache_sizing"]["points"])


TENCENT = str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "tencent" / "cbs_sample.csv")


def test_analyze_per_device_equals_cli_and_is_a_table(cli):
    # Three volumes, two rows and the third added up in "others".
    result = blocksight.analyze(TENCENT, per_device=True, top=2)
    assert result == cli("analyze", TENCENT, "--per-device", "--top", "2", "--json")
    d = result["per_device"]
    table = blocksight.device_table(result)
    assert list(table["device_name"]) == [r["device_name"] for r in d["rows"]] + ["others"]
    assert list(table["requests"]) == [r["requests"] for r in d["rows"]] + [d["others"]["requests"]]
    assert int(table["requests"].sum()) == result["summary"]["events"]
    assert int(table["devices"].sum()) == d["devices"] == 3
    assert table["device"].isna().tolist() == [False, False, True]
    assert blocksight.device_table(result, others=False).shape[0] == 2
    # Without per_device there is no table, and top alone is refused as the CLI refuses it.
    with pytest.raises(ValueError, match="per_device"):
        blocksight.device_table(blocksight.analyze(TENCENT))
    with pytest.raises(ValueError, match="per_device"):
        blocksight.analyze(TENCENT, top=2)


def test_simulate_equals_cli(sample, cli):
    result = blocksight.simulate(sample, cache_size="10%,200MiB", policy="arc,lru", mode="wb")
    assert result == cli("simulate", sample, "--cache-size", "10%,200MiB", "--policy", "arc,lru", "--mode", "wb", "--json")
    table = blocksight.runs(result)
    assert list(table["policy"]) == [r["policy"] for r in result["runs"]]
    bins = blocksight.time_bins(result["runs"][0])
    c = result["runs"][0]["result"]["whole"]["counts"]
    # The bins count every request, flushes and discards included.
    assert int(bins["requests"].sum()) == c["read"]["requests"] + c["write"]["requests"] + c["discards"] + c["flushes"]


def test_mrc_equals_cli(sample, cli):
    result = blocksight.mrc(sample, policy="lru", method="shards")
    assert result == cli("mrc", sample, "--policy", "lru", "--method", "shards", "--json")
    df = blocksight.points(result)
    assert list(df.columns) == ["size_lines", "size_bytes", "miss_ratio", "hit_ratio"]


def test_predict_equals_cli(sample, cli):
    result = blocksight.predict(sample, layout="raid5", disks=6, disk="sas-10k", qd=8, cache_size="10%")
    expected = cli("predict", sample, "--layout", "raid5", "--disks", "6", "--disk", "sas-10k", "--qd", "8", "--cache-size", "10%", "--json")
    assert result == expected
    # The Array view's estimate: slices of the trace, as the CLI's --sample.
    estimate = blocksight.predict(sample, layout="raid5", disks=6, disk="sas-10k", qd=8, sample="1024/8192")
    assert estimate == cli("predict", sample, "--layout", "raid5", "--disks", "6", "--disk", "sas-10k", "--qd", "8", "--sample", "1024/8192", "--json")
    assert estimate["replayed_requests"] < estimate["trace_requests"]


def test_predict_controllers_and_md_settings_equal_cli(sample, cli):
    # Issue 10's controller presets and md's settings, as the CLI's flags (snake_case).
    perc = blocksight.predict(sample, layout="raid6", disks=8, disk="sas-15k", qd=16, controller="perc-h730",
                              max_iops=20000)
    assert perc == cli("predict", sample, "--layout", "raid6", "--disks", "8", "--disk", "sas-15k", "--qd", "16",
                       "--controller", "perc-h730", "--max-iops", "20000", "--json")
    assert perc["configs"][0]["params"]["controller"]["preset"] == "perc-h730"
    md = blocksight.predict(sample, layout="raid5", disks=6, disk="nvme", qd=32, stripe_cache_size=4096,
                            group_thread_cnt=2, md_bitmap="none", md_safe_mode_delay="0", md_stripe_cost="2us")
    assert md == cli("predict", sample, "--layout", "raid5", "--disks", "6", "--disk", "nvme", "--qd", "32",
                     "--stripe-cache-size", "4096", "--group-thread-cnt", "2", "--md-bitmap", "none",
                     "--md-safe-mode-delay", "0", "--md-stripe-cost", "2us", "--json")
    assert md["configs"][0]["without_cache"].get("md_bitmap") is None
    f2 = blocksight.predict(sample, layout="raid10", disks=4, disk="sata-7k2", qd=4, raid10_layout="f2")
    assert f2 == cli("predict", sample, "--layout", "raid10", "--disks", "4", "--disk", "sata-7k2", "--qd", "4",
                     "--raid10-layout", "f2", "--json")
    # md's settings behind a hardware controller are refused, as the CLI refuses them.
    with pytest.raises(ValueError, match="apply to Linux md"):
        blocksight.predict(sample, layout="raid5", disks=6, disk="nvme", controller="perc-h730", stripe_cache_size=4096)


def test_predict_groups_failed_disks_cache_devices_and_array_files_equal_cli(sample, cli, tmp_path):
    # The layout's groups and failed disks (a list, or as the CLI writes them), the cache's devices.
    degraded = blocksight.predict(sample, layout="raid60", disks=12, disk="sas-10k", qd=8, groups=3, failed=[0, 4],
                                  cache_size="256MiB", cache_disk="nvme", cache_disks=1)
    assert degraded == cli("predict", sample, "--layout", "raid60", "--disks", "12", "--disk", "sas-10k", "--qd", "8",
                           "--groups", "3", "--failed", "0,4", "--cache-size", "256MiB", "--cache-disk", "nvme",
                           "--cache-disks", "1", "--json")
    assert "DEGRADED" in degraded["configs"][0]["description"]
    assert degraded == blocksight.predict(sample, layout="raid60", disks=12, disk="sas-10k", qd=8, groups=3,
                                          failed="0,4", cache_size="256MiB", cache_disk="nvme", cache_disks=1)
    with pytest.raises(ValueError, match="survives only"):
        blocksight.predict(sample, layout="raid5", disks=6, disk="nvme", failed=[0, 1])
    # md rebuilding the failed disk beside the load, with its minimum speed, as --rebuilding.
    rebuilding = blocksight.predict(sample, layout="raid5", disks=6, disk="sas-10k", qd=4, failed=[2],
                                    rebuilding=True, md_sync_speed_min=5000)
    assert rebuilding == cli("predict", sample, "--layout", "raid5", "--disks", "6", "--disk", "sas-10k", "--qd", "4",
                             "--failed", "2", "--rebuilding", "--md-sync-speed-min", "5000", "--json")
    assert rebuilding["configs"][0]["without_cache"]["rebuild"]["bytes_per_sec"] > 0
    with pytest.raises(ValueError, match="nothing rebuilds"):
        blocksight.predict(sample, layout="raid5", disks=6, disk="sas-10k", failed=[2], md_sync_speed_min=5000)
    # The cache's devices without a cache would change nothing: refused, as on the CLI.
    with pytest.raises(ValueError, match='"cache_disk"'):
        blocksight.predict(sample, layout="raid5", disks=6, disk="nvme", cache_disk="nvme")
    # An array description file, as --array FILE.
    spec = tmp_path / "array.json"
    spec.write_text((pathlib.Path(__file__).parents[2] / "tests" / "data" / "array" / "md1000-raid10-8.json").read_text())
    from_file = blocksight.predict(sample, array=str(spec), qd=4)
    assert from_file == cli("predict", sample, "--array", str(spec), "--qd", "4", "--json")
    with pytest.raises(ValueError, match='"layout"'):
        blocksight.predict(sample, array=str(spec), layout="raid5")


def test_an_option_no_job_reads_is_refused(sample):
    # A misspelt or misplaced option is an error naming it, never a result computed without it.
    with pytest.raises(ValueError, match='"controler"'):
        blocksight.predict(sample, layout="raid5", disks=6, disk="nvme", controler="perc-h730")
    with pytest.raises(ValueError, match='"disk"'):
        blocksight.predict(sample, md_members=True, layout="raid5", disks=6, disk="nvme")
    with pytest.raises(ValueError, match='"cache_line"'):
        blocksight.predict(sample, layout="raid5", disks=6, disk="nvme", cache_line="64KiB")
    # line_size is cache_line's other name for predict, as on the CLI: used, not dropped.
    assert blocksight.predict(sample, layout="raid5", disks=6, disk="nvme", qd=4, cache_size="64MiB", line_size="64KiB") \
        == blocksight.predict(sample, layout="raid5", disks=6, disk="nvme", qd=4, cache_size="64MiB", cache_line="64KiB")
    with pytest.raises(ValueError, match='"policy"'):
        blocksight.stat(sample, policy="lru")
    # With request= the request alone: other settings are refused, not silently dropped.
    smq = blocksight.simulate(sample, preset="dm-cache-smq", cache_size="64MiB", line_size="32KiB")
    with pytest.raises(ValueError, match='"mode"'):
        blocksight.simulate(sample, request=smq["request"], mode="wt")


def test_kernel_cache_models_equal_cli(sample, cli):
    bcache = blocksight.simulate(sample, preset="bcache-kernel", cache_size="512MiB", mode="wb", seq_cutoff="1MiB")
    assert bcache == cli("simulate", sample, "--preset", "bcache-kernel", "--cache-size", "512MiB", "--mode", "wb", "--seq-cutoff", "1MiB", "--json")
    assert bcache["model"] == "bcache-kernel"
    smq = blocksight.simulate(sample, preset="dm-cache-smq", cache_size="64MiB", line_size="32KiB")
    assert smq == cli("simulate", sample, "--preset", "dm-cache-smq", "--cache-size", "64MiB", "--line-size", "32KiB", "--json")
    # The echoed request runs again to the same result, as for every job.
    assert blocksight.simulate(sample, request=smq["request"]) == smq
    # A setting of the other model is refused, as the CLI refuses it.
    with pytest.raises(ValueError, match="origin_bytes"):
        blocksight.simulate(sample, preset="bcache-kernel", cache_size="512MiB", origin_size="1GiB")


def test_product_names_select_the_kernel_models(sample, cli):
    # Issue 10: "dm-cache" is the product model, as on the CLI; a share of the footprint works.
    smq = blocksight.simulate(sample, preset="dm-cache", cache_size="10%", mode="wt")
    assert smq == cli("simulate", sample, "--preset", "dm-cache", "--cache-size", "10%", "--mode", "wt", "--json")
    assert smq["model"] == "dm-cache-smq" and smq["footprint"]["exact"]
    # The generic simulator's settings are refused, naming the approximation.
    with pytest.raises(ValueError, match="dm-cache-approx"):
        blocksight.simulate(sample, preset="dm-cache", cache_size="64MiB", policy="lru")
    approx = blocksight.simulate(sample, preset="bcache-approx", cache_size="64MiB")
    assert approx["runs"][0]["preset"] == "bcache-approx"
    # ...and the kernel models' own settings are refused by the generic simulator.
    with pytest.raises(ValueError, match="kernels' own models"):
        blocksight.simulate(sample, preset="bcache-approx", cache_size="64MiB", writeback_percent=5)
    wb = blocksight.simulate(sample, preset="bcache", cache_size="64MiB", bucket_size="16KiB",
                             mode="wb", idle_after="60s")
    assert wb == cli("simulate", sample, "--preset", "bcache", "--cache-size", "64MiB",
                     "--bucket-size", "16KiB", "--mode", "wb", "--idle-after", "60s", "--json")
    assert wb["result"]["stats"]["dirty_bytes"] == 0
    # The congestion bypass's settings, as the CLI takes them.
    slow = blocksight.simulate(sample, preset="bcache", cache_size="64MiB", bucket_size="16KiB",
                               cache_read_latency="5ms", congested_read_threshold_us=1000)
    assert slow == cli("simulate", sample, "--preset", "bcache", "--cache-size", "64MiB",
                       "--bucket-size", "16KiB", "--cache-read-latency", "5ms",
                       "--congested-read-threshold-us", "1000", "--json")
    with pytest.raises(ValueError, match="kernels' own models"):
        blocksight.simulate(sample, preset="bcache-approx", cache_size="64MiB", cache_read_latency="5ms")


def test_md_members_equals_cli(sample, cli):
    result = blocksight.predict(sample, md_members=True, layout="raid6", disks=6, chunk="64KiB", qd=8, stripe_cache_size=512)
    expected = cli("predict", sample, "--md-members", "--layout", "raid6", "--disks", "6", "--chunk", "64KiB", "--qd", "8", "--stripe-cache-size", "512", "--json")
    assert result == expected
    assert result["model"] == "md" and len(result["result"]["members"]) == 6
    with pytest.raises(ValueError, match="md level"):
        blocksight.predict(sample, md_members=True, layout="raid4", disks=6)
    far = blocksight.predict(sample, md_members=True, layout="raid10", disks=4, raid10_layout="f2")
    assert far == cli("predict", sample, "--md-members", "--layout", "raid10", "--disks", "4", "--raid10-layout", "f2", "--json")
    assert far["request"]["raid10_layout"] == "f2"
    assert far["result"]["config"]["raid10"] == {"near": 1, "far": 2, "offset": False}
    with pytest.raises(ValueError, match="RAID 10 layout"):
        blocksight.predict(sample, md_members=True, layout="raid10", disks=4, raid10_layout="z2")
    # md's safe mode: the superblock updates, in the members' writes.
    off = blocksight.predict(sample, md_members=True, layout="raid1", disks=2, safe_mode_delay_nanos=0)
    assert off == cli("predict", sample, "--md-members", "--layout", "raid1", "--disks", "2", "--md-safe-mode-delay", "0", "--json")
    assert off["result"]["superblock_updates"] == 2
    assert off["result"]["config"]["safe_mode_delay_nanos"] == 0


def test_errors_name_the_setting(sample):
    with pytest.raises(ValueError, match="policy"):
        blocksight.simulate(sample, cache_size="10%", policy="nope")


@pytest.fixture(scope="module")
def parquet_export(sample, cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("pq") / "sample.parquet"
    cli("export", sample, "--to", "parquet", "-o", out, json_out=False)
    return str(out)


def test_parquet_export_reads_as_the_trace(parquet_export, sample, cli):
    assert blocksight.stat(parquet_export) == cli("stat", sample, "--json")


def _counts(s):
    keys = ["events", "reads", "writes", "discards", "flushes", "read_bytes", "write_bytes", "footprint_blocks", "first_time_nanos", "last_time_nanos"]
    return {k: s[k] for k in keys}


def test_arrow_batches_numpy_and_pandas_equal_the_file(parquet_export, sample, cli):
    want = cli("stat", sample, "--json")
    table = pq.read_table(parquet_export)
    # An iterator of record batches (read once, kept for the passes a job needs).
    got = blocksight.stat(iter(table.to_batches(max_chunksize=10_000)))
    assert _counts(got) == _counts(want)
    assert got["devices"] == want["devices"]
    assert got["events_with_latency"] == want["events_with_latency"]
    # A dict of numpy arrays, and a pandas DataFrame.
    arrays = {name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names}
    assert _counts(blocksight.stat([arrays])) == _counts(want)
    assert _counts(blocksight.stat(table.to_pandas())) == _counts(want)
    # A two-pass job (a size as a share of the footprint) over a callable giving fresh batches.
    sim = blocksight.simulate(lambda: table.to_batches(max_chunksize=50_000), cache_size="10%")
    cli_sim = cli("simulate", sample, "--cache-size", "10%", "--json")
    assert sim["runs"][0]["result"]["whole"] == cli_sim["runs"][0]["result"]["whole"]


def test_duckdb_counts_equal_stat(parquet_export, sample, cli):
    duckdb = pytest.importorskip("duckdb")
    want = cli("stat", sample, "--json")
    con = duckdb.connect()
    rows = dict(con.execute(f"select op, count(*) from read_parquet('{parquet_export}') group by op").fetchall())
    assert rows.get("read", 0) == want["reads"]
    assert rows.get("write", 0) == want["writes"]
    assert rows.get("flush", 0) == want["flushes"]
    assert rows.get("discard", 0) == want["discards"]
    total, rbytes, wbytes, first, last, lat = con.execute(
        "select count(*), sum(len_bytes) filter (where op = 'read'), sum(len_bytes) filter (where op = 'write'), "
        f"min(time_nanos), max(time_nanos), count(latency_nanos) from read_parquet('{parquet_export}')"
    ).fetchone()
    assert (total, rbytes, wbytes, first, last, lat) == (
        want["events"], want["read_bytes"], want["write_bytes"], want["first_time_nanos"], want["last_time_nanos"], want["events_with_latency"]
    )
    meta = pq.read_metadata(parquet_export).metadata
    header = json.loads(meta[b"blocksight.header"])
    assert [d["name"] for d in header["devices"]] == want["devices"]


def test_heat_maps_of_hash_slices_merge_to_the_whole(sample):
    whole = blocksight.analyze(sample)
    k = 3
    parts = [blocksight._run("analyze", sample, {}, slice=(i, k)) for i in range(k)]
    assert all(p["heatmaps"] != whole["heatmaps"] for p in parts)
    assert blocksight.merge("heatmaps", parts, "hash", k) == whole["heatmaps"]
    assert blocksight.merge("heatmaps", [p["heatmaps"] for p in parts], "hash", k) == whole["heatmaps"]
    # Other result kinds name what merges.
    with pytest.raises(ValueError, match="heatmaps"):
        blocksight.merge("predict", parts, "hash", k)
