"""Checks `grpo tasks export --format verl-parquet` with pyarrow: the columns and types verl's
RLHFDataset reads, and rows that decode as verl's reward functions expect.

Usage: verl_parquet_check.py [FILE...]. Without files, exports builtin:arith and
builtin:python with $GRPO_BIN (default target/debug/grpo) into a temporary directory first.
"""

import json
import os
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq

COLUMNS = ["data_source", "prompt", "ability", "reward_model", "extra_info"]


def check(path):
    table = pq.read_table(path)
    schema = table.schema
    assert schema.names == COLUMNS, f"{path}: columns {schema.names}"
    assert schema.field("data_source").type == pa.string()
    assert schema.field("ability").type == pa.string()
    prompt = schema.field("prompt").type
    assert pa.types.is_list(prompt), prompt
    message = prompt.value_type
    assert {message.field(i).name for i in range(message.num_fields)} == {"role", "content"}, message
    reward = schema.field("reward_model").type
    assert {reward.field(i).name: reward.field(i).type for i in range(reward.num_fields)} == {
        "style": pa.string(),
        "ground_truth": pa.string(),
    }, reward
    extra = schema.field("extra_info").type
    extra_fields = {extra.field(i).name: extra.field(i).type for i in range(extra.num_fields)}
    assert extra_fields["split"] == pa.string() and extra_fields["index"] == pa.int64(), extra
    rows = table.to_pylist()
    assert rows, f"{path}: no rows"
    for row in rows:
        assert row["ability"] in ("math", "code"), row["ability"]
        assert row["data_source"], row
        msg = row["prompt"][-1]
        assert msg["role"] == "user" and msg["content"], row["prompt"]
        assert row["reward_model"]["style"] == "rule"
        truth = row["reward_model"]["ground_truth"]
        if row["ability"] == "code":
            tests = json.loads(truth)
            assert len(tests["inputs"]) == len(tests["outputs"]) > 0, tests
        else:
            assert truth.strip(), row
    print(f"{path}: {len(rows)} rows in verl's layout")


def main():
    files = sys.argv[1:]
    if not files:
        grpo = os.environ.get("GRPO_BIN", "target/debug/grpo")
        out = tempfile.mkdtemp()
        for pack in ["builtin:arith", "builtin:python"]:
            path = os.path.join(out, pack.split(":")[1] + ".parquet")
            subprocess.run(
                [grpo, "tasks", "export", "--format", "verl-parquet", pack, "-o", path],
                check=True,
            )
            files.append(path)
    for path in files:
        check(path)


if __name__ == "__main__":
    main()
