"""Fixtures: the sample trace, the CLI built by cargo (BLOCKSIGHT_BIN, else target/debug or
target/release), and a way to run it for its --json."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "sample" / "pgbench.bst"


def _bin() -> pathlib.Path:
    if os.environ.get("BLOCKSIGHT_BIN"):
        return pathlib.Path(os.environ["BLOCKSIGHT_BIN"])
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("release", "debug"):
        p = target / profile / "blocksight"
        if p.exists():
            return p
    raise RuntimeError("build the CLI first: cargo build -p collector")


@pytest.fixture(scope="session")
def sample() -> str:
    return str(SAMPLE)


@pytest.fixture(scope="session")
def cli():
    binary = _bin()

    def run(*args, json_out=True):
        out = subprocess.run([str(binary), *map(str, args)], check=True, capture_output=True, text=True)
        return json.loads(out.stdout) if json_out else out

    return run
