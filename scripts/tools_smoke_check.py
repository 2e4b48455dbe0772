#!/usr/bin/env python3
"""Checks a `grpo train --preset tools` run directory: the policy called the interpreter,
`samples.jsonl` shows each call as a ```python block followed by its ```output block inside
the completion, the recorded output is exactly what the code prints (checked against this
machine's Python for the arithmetic the preset's policy writes), and the step metrics
count the calls.

    python3 scripts/tools_smoke_check.py RUN_DIR
"""

import ast
import json
import sys
from pathlib import Path


def printed(code):
    """What the interpreter shows for `code` when it is one expression (else None)."""
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return None
    try:
        value = eval(compile(tree, "<cell>", "eval"), {"__builtins__": {}})
    except Exception as exc:  # the sandbox shows the error's last line
        return f"{type(exc).__name__}: {exc}"
    return None if value is None else repr(value)


def main(run_dir):
    run = Path(run_dir)
    records = [json.loads(line) for line in (run / "samples.jsonl").open()]
    with_calls = [r for r in records if r.get("tool_calls")]
    if not with_calls:
        sys.exit(f"{run}/samples.jsonl: no completion called the interpreter ({len(records)} records)")
    checked = 0
    for r in with_calls:
        completion = r["completion"]
        at = 0
        for call in r["tool_calls"]:
            block = "```python\n" + call["code"] + "\n```\n```output\n"
            found = completion.find(block, at)
            if found < 0:
                sys.exit(f"step {r['step']} {r['task_id']}: call {call['code']!r} is not a python block followed by an output block in {completion!r}")
            at = found + len(block)
            if not call["truncated"] and not completion.startswith(call["output"] + "\n```\n", at):
                sys.exit(f"step {r['step']} {r['task_id']}: the output block does not hold {call['output']!r}: {completion!r}")
            want = printed(call["code"])
            if want is not None and call["status"] in ("ok", "error"):
                if call["output"] != want:
                    sys.exit(f"{call['code']!r} printed {want!r} here, the sandbox recorded {call['output']!r}")
                checked += 1
    steps = [json.loads(line) for line in (run / "metrics.jsonl").open()]
    tool_keys = {k for s in steps for k in s if "tool" in k}
    if "tool_calls_per_completion" not in tool_keys or not any(s["tool_calls_per_completion"] > 0 for s in steps):
        sys.exit(f"metrics.jsonl counts no tool calls (keys: {sorted(tool_keys)})")
    calls = sum(len(r["tool_calls"]) for r in with_calls)
    print(f"{len(with_calls)} of {len(records)} recorded completions called the interpreter "
          f"({calls} calls, {checked} outputs checked against python3); metrics keys: {', '.join(sorted(tool_keys))}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
