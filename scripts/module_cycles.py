#!/usr/bin/env python3
"""Fails when the top-level modules of a crate import each other in a cycle.

    python3 scripts/module_cycles.py grpo-sandbox grpo-runner

A crate's top-level modules are the files and folders directly in its `src/` (`engine/`,
`sandbox.rs`, ...). Module A depends on B when code in A names `crate::B` (in a `use` or a
path, `use crate::{B, C}` included); comments and doc comments do not count. `lib.rs` is the
facade and may name every module; `error` is the crate's error type, which names the error
types of the layers so that `?` converts them, and is named by all, so its own imports are not
edges. Prints each crate's layers from the bottom up, or every cycle found, and exits 1 on a
cycle.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

FACADES = {"lib", "error"}
PATH = re.compile(r"\bcrate::(\{[^}]*\}|[a-z_][a-z0-9_]*)")


def code_lines(text: str):
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        yield line.split("//", 1)[0] if "\"" not in line else line


def top_module(src: Path, file: Path) -> str:
    rel = file.relative_to(src)
    return rel.parts[0].removesuffix(".rs")


def graph(src: Path) -> dict[str, set[str]]:
    modules = {p.name.removesuffix(".rs") for p in src.iterdir() if p.suffix == ".rs" or p.is_dir()}
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for file in src.rglob("*.rs"):
        here = top_module(src, file)
        if here in FACADES:
            continue
        text = "\n".join(code_lines(file.read_text()))
        # `use crate::{a, b::c}` spans lines: join the braces first.
        text = re.sub(r"\s+", " ", text)
        for match in PATH.finditer(text):
            names = match.group(1)
            if names.startswith("{"):
                targets = [n.strip().split("::")[0] for n in names[1:].split(",")]
            else:
                targets = [names]
            for target in targets:
                if target in modules and target != here and target not in FACADES:
                    edges[here].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def layers(edges: dict[str, set[str]]) -> list[list[str]]:
    level: dict[str, int] = {}

    def depth(v: str) -> int:
        if v not in level:
            level[v] = 0
            level[v] = 1 + max((depth(w) for w in edges[v]), default=-1)
        return level[v]

    for v in edges:
        depth(v)
    out: list[list[str]] = [[] for _ in range(max(level.values(), default=0) + 1)]
    for v, d in level.items():
        out[d].append(v)
    return [sorted(x) for x in out]


def main(crates: list[str]) -> int:
    failed = False
    for crate in crates:
        src = Path(crate) / "src"
        if not src.is_dir():
            print(f"{crate}: no src/ folder", file=sys.stderr)
            return 2
        edges = graph(src)
        found = cycles(edges)
        if found:
            failed = True
            for component in found:
                ties = [f"{a} -> {b}" for a in component for b in sorted(edges[a]) if b in component]
                print(f"{crate}: import cycle among {', '.join(component)}: {'; '.join(ties)}")
        else:
            print(f"{crate}: no import cycle; layers from the bottom up:")
            for i, layer in enumerate(layers(edges)):
                print(f"  {i}: {' '.join(layer)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["grpo-sandbox", "grpo-runner"]))
