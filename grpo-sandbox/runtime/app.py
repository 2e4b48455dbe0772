"""Guest bootstrap of the grpo-rs Python sandbox.

componentize-py imports this module at build time and snapshots the interpreter afterwards,
so everything imported here is ready (and importable by programs) at run time, and nothing
else from the standard library, or from the packages pinned in `requirements.txt`, is. The test harness (`src/harness.py`, copied next to this
file by `build.sh` as `grpo_harness.py`, with its SHA-256 in `grpo_harness_sha.py`) is
imported here too, after the standard library, so its set-up is part of the snapshot.

Protocol (all on stdin, read once): an ASCII decimal length, a newline, that many bytes of
JSON job `{"seed": int, "harness": str | null, "harness_sha256": str, ...}`, then the
program's own stdin. The bootstrap reseeds `random` and calls the harness's `main(job)`: the
snapshot's when `harness` is null (after checking that the host expects this harness), else
the one the host sent (source, or a loader for its compiled form), compiled per run.
"""

# The standard library that programs may import. Modules missing here cannot be imported at
# run time (the snapshot has no file system to load them from).
# datetime.strptime and time.strptime import `_strptime` on first use: only modules imported
# here can be imported later.
import _strptime  # noqa: F401
import abc
import argparse
import array
import ast
import base64
import binascii
import bisect
import builtins
import calendar
import cmath
import codecs
import collections
import collections.abc
import colorsys
import contextlib
import copy
import copyreg
import csv
import dataclasses
import datetime
import decimal
import difflib
import dis
import enum
import errno
import fnmatch
import fractions
import functools
import gc
import getopt
import glob
import graphlib
import hashlib
import heapq
import hmac
import html
import inspect
import io
import ipaddress
import itertools
import json
import keyword
import linecache
import locale
import logging
import math
import numbers
import operator
import os
import pathlib
import pickle
import pprint
import queue
import random
import re
import reprlib
import secrets
import shlex
import shutil
import statistics
import string
import struct
import sys
import tempfile
import textwrap
import time
import timeit
import token
import tokenize
import traceback
import types
import typing
import unicodedata
import unittest
import uuid
import warnings
import weakref
import zlib

# The pure-Python packages (wheels pinned in requirements.txt, unpacked by build.sh), imported
# here like the standard library above, so they cost nothing per run and only what is imported
# here is importable later. `import sympy` leaves out a few subpackages that math programs
# import by name; they are imported here too.
#
# sympy's gmpy glue imports `ctypes` at module level for `sizeof(c_long)`, which it uses only
# with gmpy2; this CPython has no `_ctypes` (and programs must not have it). It gets a
# stand-in while sympy loads, then taken out of `sys.modules`: a program's `import ctypes`
# still fails.


def _absent(name):
    def unavailable(*args, **kwargs):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    return unavailable


def _stand_in(name, **attributes):
    module = types.ModuleType(name, "build-time stand-in for a module this CPython lacks")
    vars(module).update(attributes)
    return module


_STAND_INS = {
    # wasm32: a C long is 4 bytes.
    "ctypes": _stand_in("ctypes", c_long=_absent("_ctypes"), sizeof=lambda ctype: 4),
}


def _without_docstrings(tree):
    """`tree` with the docstrings of its module, classes and functions taken out (`__doc__`
    is then None, as under `python -OO`, but asserts stay). The packages' docstrings are
    several megabytes of the snapshot that programs do not read."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                if len(body) > 1:
                    del body[0]
                else:
                    body[0] = ast.copy_location(ast.Pass(), body[0])
    return tree


def _import_packages(names, roots):
    """Imports `names`, compiling the source files under `roots` without docstrings."""
    import importlib.machinery

    loader = importlib.machinery.SourceFileLoader
    original = loader.source_to_code

    def source_to_code(self, data, path, *args, **kwargs):
        if not str(path).startswith(roots):
            return original(self, data, path, *args, **kwargs)
        tree = compile(data, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        return compile(_without_docstrings(tree), path, "exec", dont_inherit=True)

    loader.source_to_code = source_to_code
    try:
        for name in names:
            __import__(name)
    finally:
        loader.source_to_code = original


for _name in _STAND_INS:
    assert _name not in sys.modules, _name
sys.modules.update(_STAND_INS)
try:
    import importlib.util

    _PACKAGES = ("mpmath", "sortedcontainers", "sympy")
    # Beyond `import sympy`: subpackages programs import by name, and the modules sympy's own
    # functions import on first call (solve checks units with sympy.physics.units, integrate
    # loads the Risch and manual integrators, ...): found by running the test table
    # (scripts/scientific_reference.py) on host CPython and listing what each case imported.
    _SUBMODULES = (
        "sympy.abc",
        "sympy.codegen.ast",
        "sympy.combinatorics",
        "sympy.concrete.delta",
        "sympy.integrals.heurisch",
        "sympy.integrals.manualintegrate",
        "sympy.integrals.prde",
        "sympy.integrals.rde",
        "sympy.integrals.risch",
        "sympy.matrices.expressions.applyfunc",
        "sympy.physics.units",
        "sympy.polys.domains.old_fractionfield",
        "sympy.polys.domains.old_polynomialring",
        "sympy.polys.polymatrix",
        "sympy.sets.handlers.functions",
        "sympy.sets.setexpr",
        "sympy.stats",
        "sympy.tensor.array.array_derivatives",
        "sympy.tensor.array.expressions",
        "sympy.tensor.tensor",
    )
    _import_packages(
        _PACKAGES + _SUBMODULES,
        tuple(os.path.dirname(importlib.util.find_spec(name).origin) + os.sep
              for name in _PACKAGES),
    )
finally:
    for _name in _STAND_INS:
        del sys.modules[_name]
    del _name

from wit_world import exports

# typing replaces this placeholder in its own namespace with `annotationlib` on first use (which
# the bindings' glue triggers at every call): resolve it now, so that the harness's copy of
# the guarded modules below is what each run starts from.
if hasattr(typing, "_lazy_annotationlib"):
    getattr(typing._lazy_annotationlib, "Format", None)

# The harness, loaded once into the snapshot, then taken out of `sys.modules` so that programs
# cannot import it by name.
import grpo_harness
import grpo_harness_sha

_HARNESS_MAIN = grpo_harness.main
_HARNESS_SHA256 = grpo_harness_sha.SHA256
del sys.modules["grpo_harness"], sys.modules["grpo_harness_sha"]


def _read_job(raw):
    header = raw.readline(32)
    length = int(header)
    return json.loads(raw.read(length))


# The real `random.seed`. componentize-py's runtime calls `random.seed()` once per instance,
# before the export, to draw a fresh seed from the host (about 2.5 KB of `os.urandom`). Each
# run reseeds from its job instead, which replaces that state completely, so the snapshot
# holds a stand-in under the name that runtime looks up at build time (`_skip_seed`, set
# at the end of this file), and `_start` puts the real one back before anything reads it.
_REAL_SEED = random.seed


def _skip_seed():
    """Stands in for `random.seed` until `_start` reseeds from the job."""


def _start(raw):
    """One run: the job from `raw` (the program's stdin), then the harness."""
    job = _read_job(raw)
    random.seed = _REAL_SEED
    _REAL_SEED(job.pop("seed"))
    source = job.pop("harness")
    expected = job.pop("harness_sha256", None)
    if source is None:
        if expected != _HARNESS_SHA256:
            # The host expects another harness than this snapshot's: refuse, loudly.
            os.write(2, b"grpo runtime: the snapshot's harness is not the host's\n")
            os._exit(70)
        _HARNESS_MAIN(job)
        return
    namespace = {"__name__": "__grpo_harness__", "__builtins__": builtins}
    exec(compile(source, "<harness>", "exec"), namespace)
    namespace["main"](job)


def _warm_up():
    """Runs a few small jobs of each mode at build time, as a run would (`_start`: the job
    read and decoded, `random` reseeded, the harness).

    What a first run writes (bytecode the interpreter specializes in place, type version
    tags, the type attribute cache, dictionary key versions) is then part of the snapshot,
    so each real run does not write it again into pages the host copies back afterwards.
    The harness's exit and its writes are intercepted; its copy of the guarded modules is
    taken again afterwards, so every run is compared with the state it starts from."""

    class Finished(BaseException):
        pass

    def finish(code):
        raise Finished

    jobs = [
        {"mode": "script", "program": "import sys\nn = int('5')\nprint(sum(range(n)), 'x')\n"},
        {"mode": "assert", "entry_point": "f", "program": "def f(x):\n    return [x + 1]\n",
         "test": "def check(candidate):\n    assert candidate(1) == [2]\n"},
        {"mode": "call", "entry_point": "f", "float_tolerance": 1e-9,
         "program": "def f(a, b):\n    return [a, b]\n",
         "cases": [[[1, 2.5], [1, 2.5]], [["x", True], ["x", True]]]},
        # The calls tool-integrated math programs make most, so that their first call in a run
        # finds its modules loaded and its bytecode specialized.
        {"mode": "script", "program": (
            "import mpmath\nfrom sympy import *\nx, y = symbols('x y')\n"
            "print(solve(x**2 - 5*x + 6, x), solve([x + y - 3, x - y - 1], [x, y]))\n"
            "print(simplify(sin(x)**2 + cos(x)**2), factor(x**3 - x), expand((x + 1)**3))\n"
            "print(factorint(360), Rational(1, 3) + Rational(1, 6), isprime(97), N(pi, 30))\n"
            "print(integrate(x * exp(x), x), limit(sin(x) / x, x, 0), diff(x**3, x))\n"
            "with mpmath.workdps(50):\n    print(mpmath.sqrt(2), mpmath.pi)\n"
        )},
    ]
    written = []

    def write(fd, data):
        written.append(bytes(data))
        return len(data)

    saved = (os._exit, os.write, sys.stdout, sys.stderr, list(sys.argv), os.getcwd())
    os._exit, os.write = finish, write
    try:
        for _ in range(3):
            for job in jobs:
                sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
                written.clear()
                full = dict(job, nonce="warm-up", seed=12345, harness=None,
                            harness_sha256=_HARNESS_SHA256)
                data = json.dumps(full).encode()
                try:
                    _start(io.BytesIO(str(len(data)).encode() + b"\n" + data))
                except Finished:
                    pass
                report = b"".join(written)
                if b"grpo-report warm-up" not in report or b'"passed": false' in report:
                    raise RuntimeError(f"the harness's warm-up run failed: {report!r}")
    finally:
        os._exit, os.write, sys.stdout, sys.stderr, sys.argv[:], cwd = saved
        try:
            os.chdir(cwd)
        except OSError:
            pass
    grpo_harness._GUARDED = grpo_harness._guarded_modules()


_warm_up()



# Everything allocated so far lives as long as the snapshot: move it out of the collector's
# reach, so collections during a run walk (and copy on write) only the run's own objects.
gc.collect()


def _snapshot_objects():
    """The address and type address of every object the snapshot keeps (each object the
    collector tracks, and everything those refer to, transitively), as 32-bit words: a
    marker, the count, the pairs, and the sum of the pairs modulo 2^32.

    `build.sh` finds them in the snapshot's memory image and makes those objects immortal
    there (`immortalize.py`): a run's reference counting then leaves their pages alone, so
    a run dirties (and the host copies back) only the pages it really writes. Whatever is
    allocated here and freed stays in the image as garbage, so the walk keeps little: a
    bitmap of seen addresses (objects are 8-byte aligned) rather than a set of ints."""
    frontier = gc.get_objects()
    seen = bytearray(1 << 20)  # made after the list above, so not in it
    objects = []
    while frontier:
        new = []
        for obj in frontier:
            slot = id(obj) >> 3
            if slot >> 3 >= len(seen):
                seen.extend(bytes((slot >> 3) - len(seen) + 1))
            if not seen[slot >> 3] & (1 << (slot & 7)):
                seen[slot >> 3] |= 1 << (slot & 7)
                new.append(obj)
        objects.extend(new)
        # Untracked containers (tuples of strings, say) are reached through their owners.
        frontier = gc.get_referents(*new) if new else []
        del new
    del seen
    # The marker is spelled backwards here, so that this constant is not found instead.
    words = array.array("I", bytes(reversed(b"1v-latrommi-oprg")))
    words.append(len(objects))
    total = 0
    for obj in objects:
        words.append(id(obj))
        words.append(id(type(obj)))
        total = (total + id(obj) + id(type(obj))) & 0xFFFFFFFF
    words.append(total)
    return words


_SNAPSHOT_OBJECTS = _snapshot_objects()
# Last, after the harness took its copy of `random`'s names (with the real `seed`, which each
# run puts back): componentize-py looks `random.seed` up once this module is imported.
random.seed = _skip_seed
# A full collection also empties the interpreter's free lists, which the walk above refilled
# with blocks scattered over the heap; runs would otherwise reuse (and dirty) those first.
gc.collect()
gc.freeze()


class Run(exports.Run):
    """The `wasi:cli/run` export: one call per instance, one program per call."""

    def run(self) -> None:
        _start(sys.stdin.buffer)
