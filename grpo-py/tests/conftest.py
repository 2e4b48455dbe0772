import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def math_pairs():
    """The benchmark's 651 (gold, prediction, expected) pairs, each built to have its verdict."""
    path = ROOT / "benches" / "data" / "math_pairs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
