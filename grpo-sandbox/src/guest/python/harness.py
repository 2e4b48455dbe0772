"""Test harness of the grpo-rs Python sandbox.

Built into the interpreter snapshot (`runtime/build.sh` imports it after the standard
library, so its code, its module-level set-up and the copies of the guarded modules below are
made once, at build time) and started by the snapshot's bootstrap as `main(job)`. When this
file differs from the snapshot's copy (its SHA-256 is in `runtime/harness.sha256`), the host
sends it compiled with every run instead, and the module-level set-up runs per run. It runs the candidate program in a fresh namespace,
runs the task's tests, and reports one line on stderr:

    \\x1egrpo-report <nonce> <json>\\n

where `nonce` is a per-run random value the host generated and the program never sees in its
own namespace, files or environment. The host only believes a report that carries its nonce,
so a program that exits early, crashes the harness or prints a fake report gets no credit.
Everything the harness needs is captured before the program runs, so a program that
monkeypatches builtins, `sys`, `os` or `json` does not change what the harness does.
"""

# Every function below resolves builtins through this private copy, taken before the program
# runs, so `builtins.len = ...` in a program does not reach the harness.
import builtins as _builtins_module

__builtins__ = dict(vars(_builtins_module))


def _guarded_modules():
    """A `_guard_entry` for each guarded module of the standard library, before any program."""
    import sys

    names = (
        "builtins math cmath operator functools itertools collections re json string "
        "fractions decimal statistics heapq bisect copy typing"
    ).split()
    guarded = []
    for name in names:
        if name in sys.modules:
            guarded.append(_guard_entry(name, sys.modules[name], False))
    return tuple(guarded)


def _guard_entry(name, owner, exact):
    """(name, owner, copy of its namespace, its names, its values, exact). `exact`: names
    added later count as tampering too, as for a class, where an added method shadows the
    one it inherits."""
    saved = dict(vars(owner))
    return (name, owner, saved, tuple(saved), tuple(saved.values()), exact)


def _package_guards():
    """((package, entries), ...) for the packages preloaded in the snapshot (sympy, mpmath,
    sortedcontainers): the package's namespace, and the namespace of every class it exports
    with the bases it defines (`Integer` through `Rational`, `Number`, `AtomicExpr` to `Expr`
    and `Basic`), so that replacing `sympy.simplify` or `sympy.Integer.__eq__`, or adding an
    `equals` to `Integer` that shadows `Expr.equals`, is seen (an integer class attribute may
    change: that is a counter, such as `Dummy._count`). A run checks them only when
    its tests name the package: they are what tests that judge with sympy call, and skipping
    them costs nothing when no test does. The packages' submodules are not guarded (a test
    that reaches `sympy.core.numbers.igcd` by that path can still be fooled). sympy's 429
    namespaces hold 10,767 names: checking them costs about 1.7 ms on host CPython 3.13."""
    import sys

    packages = []
    for package in ("sympy", "mpmath", "sortedcontainers"):
        module = sys.modules.get(package)
        if module is None:
            continue
        entries = [_guard_entry(package, module, False)]
        seen = set()
        for value in list(vars(module).values()):
            if not isinstance(value, type):
                continue
            for cls in value.__mro__:
                owner = getattr(cls, "__module__", "") or ""
                if id(cls) in seen or not (owner == package or owner.startswith(package + ".")):
                    continue
                seen.add(id(cls))
                entries.append(_guard_entry(package + "." + cls.__qualname__, cls, True))
        packages.append((package, tuple(entries)))
    return tuple(packages)


# Taken when the harness is loaded: in the snapshot, that is before every run.
_GUARDED = _guarded_modules()
_PACKAGE_GUARDS = _package_guards()


def _lazy_imports():
    """{(module, attribute): the object CPython itself binds there later} for the guarded
    attributes the standard library rebinds on first use, so that rebinding is not read as
    the program's doing. CPython 3.14 has two, found by scanning every function of the guarded
    modules for `global` stores (the test `lazy_imports_table_is_complete` repeats the scan):
    `Counter.most_common(n)` runs `global heapq; import heapq` (placeholder `None`), and
    typing's `_lazy_annotationlib` proxy replaces itself with `annotationlib`. Anything else
    bound there, a module the program put in `sys.modules` included, is still tampering."""
    import sys

    targets = {("collections", "heapq"): "heapq", ("typing", "_lazy_annotationlib"): "annotationlib"}
    genuine = {}
    for (module, attribute), target in targets.items():
        if module in sys.modules:
            genuine[(module, attribute)] = __import__(target)
    return genuine


_LAZY = _lazy_imports()
_PRISTINE_BUILTINS = dict(vars(_builtins_module))


def main(job):
    import builtins
    import os
    import sys
    import traceback

    # Pristine references, taken before any program code runs.
    write = os.write
    hard_exit = os._exit
    type_ = type
    isinstance_ = isinstance
    len_ = len
    repr_ = repr
    str_ = str
    range_ = range
    zip_ = zip
    abs_ = abs
    max_ = max
    min_ = min
    float_ = float
    int_ = int
    bool_ = bool
    list_ = list
    tuple_ = tuple
    dict_ = dict
    exec_ = exec
    compile_ = compile
    base_exception = BaseException
    system_exit = SystemExit
    format_exc = traceback.format_exception
    real_stdout = sys.stdout
    real_stderr = sys.stderr
    settrace = sys.settrace
    setprofile = sys.setprofile
    pristine_builtins = _PRISTINE_BUILTINS
    dumps = __import__("json").dumps
    all_ = all
    map_ = map
    is_ = __import__("operator").is_
    repeat = __import__("itertools").repeat
    missing = object()

    guarded = _GUARDED
    lazy = _LAZY

    nonce = job.pop("nonce")
    mode = job["mode"]

    # The preloaded packages the tests name are guarded as the standard library is.
    test_source = job.get("test") or ""
    packages = tuple_(guards for guards in _PACKAGE_GUARDS if guards[0] in test_source)
    vars_ = vars

    def tampered():
        """Names of guarded attributes the program replaced or removed (or, on an exact entry
        such as a class, added)."""
        changed = []
        check(guarded, changed)
        for _, entries in packages:
            check(entries, changed)
        return changed

    def check(entries, changed):
        for name, owner, saved, saved_names, saved_values, exact in entries:
            current = vars_(owner)
            # The common case, checked in C without a look-up: the same names, in the same
            # order, each bound to the very same object.
            if (
                len_(current) == len_(saved_names)
                and all_(map_(is_, saved_names, current))
                and all_(map_(is_, saved_values, current.values()))
            ):
                continue
            # Names added or reordered: every saved name still bound to the same object?
            if not all_(map_(is_, saved.values(), map_(current.get, saved, repeat(missing)))):
                for key, value in saved.items():
                    now = current.get(key, missing)
                    if now is not value and key != "__builtins__":
                        # A class's counter (sympy's `Dummy._count`) is the class's own state.
                        if exact and type_(value) is int_ and type_(now) is int_:
                            continue
                        # CPython's own lazy import binds exactly this object, nothing else.
                        if (name, key) in lazy and now is lazy[(name, key)]:
                            continue
                        changed.append(name + "." + key)
            if exact and len_(current) != len_(saved):
                changed.extend(name + "." + key for key in current if key not in saved)

    def short(text, limit=300):
        text = str_(text)
        return text if len_(text) <= limit else text[:limit] + "..."

    def describe(exc):
        """A one-line reason for an exception raised by program or tests."""
        name = type_(exc).__name__
        if isinstance_(exc, AssertionError):
            # The failing assert's source line, from the innermost frame in the tests.
            tb = exc.__traceback__
            line = ""
            while tb is not None:
                if tb.tb_frame.f_code.co_filename in ("<tests>", "<solution>"):
                    try:
                        line = sources[tb.tb_frame.f_code.co_filename].splitlines()[tb.tb_lineno - 1].strip()
                    except base_exception:
                        line = ""
                tb = tb.tb_next
            message = str_(exc)
            detail = line or message or "assertion failed"
            return "AssertionError: " + short(detail)
        if isinstance_(exc, system_exit):
            return "program called exit(" + short(repr_(exc.code), 40) + ") during the tests"
        return name + ": " + short(exc)

    def print_traceback(exc):
        try:
            text = "".join(format_exc(type_(exc), exc, exc.__traceback__))
            write(2, text.encode("utf-8", "replace"))
        except base_exception:
            pass

    def flush_stdio():
        for stream in (sys.stdout, sys.stderr, real_stdout, real_stderr):
            try:
                stream.flush()
            except base_exception:
                pass

    def finish(report, exit_code, judged_here=True):
        """Reports and ends the run. `judged_here`: the verdict was reached in this
        interpreter (assert and call modes), so a program that replaced what the tests use
        must fail. A script's output is judged by the host, which no module patch reaches,
        so a script run skips the check (it touches about a thousand objects)."""
        settrace(None)
        setprofile(None)
        flush_stdio()
        changed = tampered() if judged_here else ()
        if changed:
            report["tampered"] = changed[:10]
            for case in report.get("cases", []):
                case["passed"] = False
                case["reason"] = "the program replaced " + ", ".join(changed[:3])
        line = "\n\x1egrpo-report " + nonce + " " + dumps(report) + "\n"
        write(2, line.encode("utf-8", "replace"))
        hard_exit(exit_code)

    def clean_namespace(name):
        return {"__name__": name, "__builtins__": builtins}

    sources = {"<solution>": job["program"], "<tests>": job.get("test") or ""}

    def load_program(namespace):
        """Runs the program's top level; returns None or a failure reason."""
        try:
            code = compile_(job["program"], "<solution>", "exec")
        except base_exception as exc:
            print_traceback(exc)
            return "the program does not compile: " + describe(exc)
        try:
            exec_(code, namespace)
        except system_exit as exc:
            return "program called exit(" + short(repr_(exc.code), 40) + ") before the tests ran"
        except base_exception as exc:
            print_traceback(exc)
            return "the program raised " + describe(exc)
        return None

    try:
        os.chdir("/tmp")
    except base_exception:
        pass

    if mode == "script":
        namespace = clean_namespace("__main__")
        sys.argv = ["main.py"] + list_(job.get("argv", ()))
        exit_code = 0
        try:
            code = compile_(job["program"], "<solution>", "exec")
            exec_(code, namespace)
        except system_exit as exc:
            code_ = exc.code
            if code_ is None:
                exit_code = 0
            elif isinstance_(code_, int_):
                exit_code = code_ & 0xFF
            else:
                try:
                    write(2, (str_(code_) + "\n").encode("utf-8", "replace"))
                except base_exception:
                    pass
                exit_code = 1
        except base_exception as exc:
            print_traceback(exc)
            exit_code = 1
        finish({"mode": "script", "exit_code": exit_code}, exit_code, judged_here=False)
        return

    if mode == "session":
        session(job, nonce)
        return

    def plain_eq_type(value):
        """Whether `value` (recursively) is plain data, so `==` on it cannot be faked."""
        t = type_(value)
        if t in (type_(None), bool_, int_, float_, complex, str_, bytes, bytearray):
            return True
        if t in (list_, tuple_, set, frozenset):
            return all(plain_eq_type(v) for v in value)
        if t is dict_:
            return all(plain_eq_type(k) and plain_eq_type(v) for k, v in value.items())
        # Other objects are fine unless their class overrides equality.
        return getattr(t, "__eq__", None) is object.__eq__ and getattr(t, "__ne__", None) is object.__ne__

    def guard(function):
        """Wraps the function under test so it cannot return an always-equal object."""

        def guarded_call(*args, **kwargs):
            result = function(*args, **kwargs)
            if not plain_eq_type(result):
                raise AssertionError("the function returned an object that overrides ==")
            return result

        guarded_call.__name__ = getattr(function, "__name__", "candidate")
        guarded_call.__wrapped__ = function
        return guarded_call

    def test_namespace(program_namespace, entry_point):
        """The program's names, but builtins restored and the entry point guarded."""
        namespace = dict_(program_namespace)
        for key in list_(namespace):
            if key in pristine_builtins and key != entry_point and not key.startswith("__"):
                del namespace[key]
        namespace["__builtins__"] = dict_(pristine_builtins)
        namespace["__name__"] = "__tests__"
        if entry_point and callable(namespace.get(entry_point)):
            namespace[entry_point] = guard(namespace[entry_point])
        return namespace

    if mode == "assert":
        entry_point = job.get("entry_point")
        namespace = clean_namespace("solution")
        failure = load_program(namespace)
        if failure is None and entry_point and not callable(namespace.get(entry_point)):
            failure = "the program does not define " + entry_point + "()"
        if failure is None:
            tests_ns = test_namespace(namespace, entry_point)
            try:
                settrace(None)
                setprofile(None)
                exec_(compile_(job["test"], "<tests>", "exec"), tests_ns)
                if entry_point and callable(tests_ns.get("check")):
                    tests_ns["check"](tests_ns[entry_point])
            except base_exception as exc:
                failure = describe(exc)
        passed = failure is None
        finish({"mode": "assert", "cases": [{"passed": passed, "reason": "" if passed else failure}]}, 0)
        return

    if mode == "call":
        entry_point = job["entry_point"]
        tolerance = job.get("float_tolerance")
        cases = job["cases"]
        namespace = clean_namespace("solution")
        failure = load_program(namespace)
        if failure is None and not callable(namespace.get(entry_point)):
            failure = "the program does not define " + entry_point + "()"
        if failure is not None:
            results = [{"passed": False, "reason": failure} for _ in cases]
            finish({"mode": "call", "cases": results}, 0)
            return

        def same(got, want):
            """The comparison rule: see the module docs of `grpo_rewards::code`."""
            tg, tw = type_(got), type_(want)
            if tw is bool_ or tg is bool_:
                return tg is tw and got == want
            if tw in (int_, float_) and tg in (int_, float_):
                if got == want:
                    return True
                if tolerance is not None and (tg is float_ or tw is float_):
                    return abs_(got - want) <= tolerance * max_(1.0, abs_(want))
                return False
            if tw is str_ or tw is type_(None):
                return tg is tw and got == want
            if tw is list_:
                return (
                    tg in (list_, tuple_)
                    and len_(got) == len_(want)
                    and all(same(g, w) for g, w in zip_(got, want))
                )
            if tw is dict_:
                if tg is not dict_ or len_(got) != len_(want):
                    return False
                for key, value in want.items():
                    match = [k for k in got if type_(k) is str_ and k == key]
                    if not match and not all(type_(k) is str_ for k in got):
                        match = [k for k in got if str_(k) == key]
                    if len_(match) != 1 or not same(got[match[0]], value):
                        return False
                return True
            return False

        function = namespace[entry_point]
        results = []
        for args, expected in cases:
            try:
                got = function(*args)
                if same(got, expected):
                    results.append({"passed": True, "reason": ""})
                else:
                    results.append({"passed": False, "reason": "expected " + short(repr_(expected), 120) + ", got " + short(repr_(got), 120)})
            except base_exception as exc:
                results.append({"passed": False, "reason": describe(exc)})
        finish({"mode": "call", "cases": results}, 0)
        return

    finish({"mode": mode, "error": "unknown harness mode"}, 2)


def session(job, ready_nonce):
    """An interpreter session: one namespace kept across calls, like a notebook kernel.

    Once set up, the harness writes a ready line with the start job's nonce. Each call
    arrives on stdin as `<len>\\n{"nonce": ..., "code": ...}`. The code runs in the
    session's namespace; when its last statement is an expression, the value's repr is
    printed, as the interactive interpreter does. An exception prints its traceback and ends
    the call, not the session. At the end of each call the harness writes one line on
    stderr, in one write, `\\x1egrpo-done <nonce> <json>`, which the host takes out of the
    stream. Programs see an empty stdin.
    """
    import ast
    import builtins
    import io
    import linecache
    import os
    import sys
    import traceback

    write = os.write
    hard_exit = os._exit
    dumps = __import__("json").dumps
    loads = __import__("json").loads
    base_exception = BaseException
    system_exit = SystemExit
    memory_error = MemoryError
    format_exc = traceback.format_exception
    isinstance_ = isinstance
    int_ = int
    repr_ = repr
    compile_ = compile
    exec_ = exec
    eval_ = eval
    requests = sys.stdin.buffer
    real = (sys.stdout, sys.stderr)
    empty_stdin = io.StringIO

    try:
        os.chdir("/tmp")
    except base_exception:
        pass
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    sys.argv = ["main.py"]
    calls = 0
    # Ready: the host starts a call's clock only now.
    write(2, ("\x1egrpo-done " + ready_nonce + ' {"status": "ready"}\n').encode())
    while True:
        header = requests.readline(32)
        if not header:
            hard_exit(0)
        request = loads(requests.read(int_(header)))
        nonce = request["nonce"]
        code = request["code"]
        calls += 1
        name = "<cell " + str(calls) + ">"
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        sys.stdin = empty_stdin("")
        sys.stdout, sys.stderr = real
        status = "ok"
        exit_code = 0
        try:
            tree = ast.parse(code, name, "exec")
            last = None
            if tree.body and isinstance_(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec_(compile_(tree, name, "exec"), namespace)
            if last is not None:
                value = eval_(compile_(last, name, "eval"), namespace)
                if value is not None:
                    namespace["_"] = value
                    sys.stdout.write(repr_(value) + "\n")
        except system_exit as exc:
            code_ = exc.code
            exit_code = code_ if isinstance_(code_, int_) else (0 if code_ is None else 1)
            if exit_code != 0:
                status = "error"
                write(2, ("SystemExit: " + repr_(code_) + "\n").encode("utf-8", "replace"))
        except base_exception as exc:
            status = "memory" if isinstance_(exc, memory_error) else "error"
            exit_code = 1
            try:
                tb = exc.__traceback__
                if tb is not None and tb.tb_frame.f_code.co_filename not in (name,):
                    tb = tb.tb_next
                text = "".join(format_exc(type(exc), exc, tb))
                write(2, text.encode("utf-8", "replace"))
            except base_exception:
                pass
        for stream in (sys.stdout, sys.stderr, real[0], real[1]):
            try:
                stream.flush()
            except base_exception:
                pass
        sys.stdout, sys.stderr = real
        report = dumps({"status": status, "exit_code": exit_code})
        write(2, ("\x1egrpo-done " + nonce + " " + report + "\n").encode("utf-8", "replace"))
