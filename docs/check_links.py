#!/usr/bin/env python3
"""Checks the relative links of README.md and the book (docs/src/**/*.md).

Every relative markdown link, inline (`[text](target)`) or reference-style
(`[label]: target`), must point to an existing file or directory. When it carries a
`#anchor`, the target markdown file must have a heading with that anchor, under the slug rules
mdBook and GitHub share: lowercase; letters, digits, `_` and `-` kept; spaces become `-`;
everything else dropped; a repeated heading gets `-1`, `-2`, ... Links with a scheme
(`https:`, `mailto:`) are not checked. Links inside code blocks and code spans are ignored.

    python3 docs/check_links.py            # exit 1 and one line per broken link

Standard library only.
"""

from __future__ import annotations

import pathlib
import re
import sys
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def files() -> list[pathlib.Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs" / "src").rglob("*.md"))]


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks, with code spans blanked."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * 3
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        yield number, re.sub(r"(`+).*?\1", lambda m: " " * len(m.group(0)), line)


def slug(heading: str) -> str:
    text = re.sub(r"<[^>]+>", "", heading)                       # inline HTML
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)       # links keep their text
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    return "".join(c if c.isalnum() or c in "_-" else "-" if c == " " else "" for c in text)


def anchors(path: pathlib.Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    fence = None
    for line in path.read_text(encoding="utf-8").splitlines():
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * 3
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        heading = HEADING.match(line)
        if not heading:
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def check(path: pathlib.Path) -> list[str]:
    problems = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        targets = [m.group(1) for m in INLINE.finditer(line)]
        reference = REFERENCE.match(line)
        if reference:
            targets.append(reference.group(1))
        for target in targets:
            if SCHEME.match(target):
                continue
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            file_part, _, anchor = target.partition("#")
            file_part = urllib.parse.unquote(file_part)
            destination = (path.parent / file_part).resolve() if file_part else path
            if not destination.exists():
                problems.append(f"{where}: no such file")
                continue
            if anchor:
                if destination.is_dir() or destination.suffix != ".md":
                    problems.append(f"{where}: an anchor into a file that is not markdown")
                elif urllib.parse.unquote(anchor) not in anchors(destination):
                    problems.append(f"{where}: no heading with anchor #{anchor}")
    return problems


def main() -> int:
    problems = [p for path in files() for p in check(path)]
    for problem in problems:
        print(problem)
    checked = len(files())
    print(f"check_links: {checked} files, {len(problems)} broken links", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
