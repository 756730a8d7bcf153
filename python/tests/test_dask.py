"""blocksight.dask on a LocalCluster of 2 worker processes: the fleet table over a dataset of
24 volumes equals per-volume CLI runs, and a hash-sliced simulation of one volume is within
the stated bound of the exact run."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import blocksight
import blocksight.dask as bd

distributed = pytest.importorskip("dask.distributed")

VOLUMES = 24


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def dataset(sample, cli, tmp_path_factory):
    """The sample spread over 24 volumes by 16 MiB region, exported partitioned by device."""
    tmp = tmp_path_factory.mktemp("fleet")
    whole = tmp / "sample.parquet"
    cli("export", sample, "--to", "parquet", "-o", whole, json_out=False)
    t = pq.read_table(whole)
    vol = (t.column("offset_bytes").to_numpy() >> 24) % VOLUMES
    names = pa.array([f"vol{v:02d}" for v in vol])
    t = t.set_column(t.column_names.index("device"), "device", names)
    spread = tmp / "spread.parquet"
    pq.write_table(t, spread)
    out = tmp / "ds"
    cli("export", spread, "--to", "parquet", "--partition-by", "device", "-o", out, json_out=False)
    return str(out)


def test_fleet_table_equals_per_volume_cli_runs(dataset, client, cli):
    df = bd.fleet(dataset, client, target_hit_ratio=0.3)
    vols = blocksight.devices(dataset)
    assert len(df) == VOLUMES == len(vols)
    for _, v in vols.iterrows():
        row = df[df["device"] == v["device"]].iloc[0]
        a = cli("analyze", v["path"], "--json")
        assert row["requests"] == a["summary"]["events"]
        assert row["footprint_bytes"] == a["hot"]["all"]["footprint_bytes"]
        rec = a["cache_sizing"]["recommendation"]["recommended"]["size_bytes"]
        assert row["recommended_cache_bytes"] == rec
        s = cli("simulate", v["path"], "--cache-size", str(rec), "--policy", "lru", "--json")
        whole = s["runs"][0]["result"]["whole"]
        assert row["hit_ratio"] == whole["ratios"]["line_hit_ratio"]
        assert row["backend_ops_reduction"] == whole["ratios"]["backend_ops_reduction"]
    reachable = df[df["target_reachable"]]
    total = int(reachable["cache_for_target_bytes"].sum() + df.loc[~df["target_reachable"], "footprint_bytes"].sum())
    assert df.attrs["total_cache_for_target_bytes"] == total
    assert total <= int(df["footprint_bytes"].sum())


def test_hash_sliced_simulation_is_within_its_bound(sample, client, cli):
    exact = cli("simulate", sample, "--cache-size", "256MiB", "--policy", "lru", "--mode", "wb", "--json")
    want = exact["runs"][0]["result"]["whole"]
    for k in (2, 4):
        merged = bd.simulate_sliced(sample, client, slices=k, cache_size="256MiB", policy="lru", mode="wb")
        got = merged["runs"][0]["result"]["whole"]
        assert got["counts"]["read"]["requests"] == want["counts"]["read"]["requests"]
        assert merged["runs"][0]["result"]["capacity_bytes"] == exact["runs"][0]["result"]["capacity_bytes"]
        # Stated bound (docs/python.md): within 0.02 of the exact line hit ratio at k <= 8.
        assert abs(got["ratios"]["line_hit_ratio"] - want["ratios"]["line_hit_ratio"]) < 0.02


def test_hash_sliced_mrc_merges(sample, client, cli):
    merged = bd.mrc_sliced(sample, client, slices=4, policy="lru", method="exact", sizes="32")
    whole = cli("mrc", sample, "--policy", "lru", "--method", "exact", "--sizes", "32", "--json")
    assert merged["line_accesses"] == whole["line_accesses"]
    at = {p["size_lines"]: p["miss_ratio"] for p in merged["points"]}
    err = [abs(min(at.items(), key=lambda kv: abs(kv[0] - p["size_lines"]))[1] - p["miss_ratio"]) for p in whole["points"]]
    assert sum(err) / len(err) < 0.03
