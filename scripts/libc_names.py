#!/usr/bin/env python3
"""Lists the functions each standard C header of zig's wasi-libc declares, for
grpo-sandbox/src/guest/cc/libc_names.txt (the names a C or C++ program may shadow with its own
function; see grpo-sandbox/src/guest/cc/shadow.rs).

    python3 scripts/libc_names.py ~/.cache/grpo-rs/toolchains/zig-0.17.0/ziglang/zig \
        > grpo-sandbox/src/guest/cc/libc_names.txt

Each header is preprocessed alone with the C job flags; every declaration in the output
(the header and what it includes) that declares a function contributes its name.
<signal.h> and <setjmp.h> are absent: wasm32-wasi refuses them.
"""
import os
import re
import subprocess
import sys
import tempfile

HEADERS = ["ctype.h", "fenv.h", "inttypes.h", "locale.h", "math.h", "stdio.h", "stdlib.h",
           "string.h", "strings.h", "time.h", "uchar.h", "unistd.h", "wchar.h", "wctype.h"]
ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")
DECLARATOR = re.compile(r"^[\w\s\*]*?\b([A-Za-z]\w*)\s*\(")
NOT_NAMES = {"static", "extern", "inline", "const", "struct", "union", "enum"}


def names(zig, header):
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "x.c")
        with open(source, "w") as f:
            f.write(f"#include <{header}>\n")
        text = subprocess.run(
            [zig, "cc", "-target", "wasm32-wasi", "-std=gnu17", "-E", "-P", source],
            capture_output=True, text=True, check=True).stdout
    depth, flat = 0, []
    for ch in text:  # drop the bodies of inline functions
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            flat.append(";")
        elif depth == 0:
            flat.append(ch)
    found = set()
    for decl in "".join(flat).split(";"):
        decl = ATTRIBUTE.sub("", " ".join(decl.split()))
        if decl.startswith("typedef") or "(" not in decl:
            continue
        match = DECLARATOR.match(decl)
        if match and match.group(1) not in NOT_NAMES:
            found.add(match.group(1))
    return sorted(found)


def main():
    zig = sys.argv[1]
    print("# Functions declared by zig 0.17.0's wasi-libc headers (scripts/libc_names.py).")
    for header in HEADERS:
        print(f"{header}: {' '.join(names(zig, header))}")


if __name__ == "__main__":
    main()
