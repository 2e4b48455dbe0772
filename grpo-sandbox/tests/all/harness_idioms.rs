//! The harness's tamper check against ordinary standard-library code: a table of idioms
//! (the calls MBPP, HumanEval and contest solutions make) runs as in CPython, in assert and in
//! call mode, although some of them make CPython rebind a guarded attribute itself (a lazy
//! import); programs that really replace a guarded attribute, by hand or through
//! `sys.modules`, still fail every case.

use grpo_rewards::ScoreOptions;
use grpo_rewards::reward::Score;
use grpo_sandbox::CodeReward;
use grpo_sandbox::guest::python::harness::HARNESS_PY;
use grpo_tasks::import::{Format, import_str};
use grpo_tasks::{CodeTask, Task};
use serde_json::json;

use crate::common::{quick, rt, sandbox};

/// (name, program, assert-mode tests). Every test asserts CPython's own result.
const IDIOMS: &[(&str, &str, &str)] = &[
    (
        "Counter.most_common(n)",
        "from collections import Counter\ndef f(xs, n):\n    return Counter(xs).most_common(n)\n",
        "assert f('abracadabra', 1) == [('a', 5)]\nassert f([3, 1, 3, 2, 1, 3], 2) == [(3, 3), (1, 2)]\n",
    ),
    (
        "Counter.most_common()",
        "import collections\ndef f(xs):\n    return collections.Counter(xs).most_common()\n",
        "assert f('aab') == [('a', 2), ('b', 1)]\n",
    ),
    (
        "Counter arithmetic",
        "from collections import Counter\ndef f(a, b):\n    c = Counter(a) - Counter(b)\n    return sorted(c.elements()), (Counter(a) & Counter(b)).total()\n",
        "assert f('aabbc', 'abd') == (['a', 'b', 'c'], 2)\n",
    ),
    (
        "heapq functions",
        "import heapq\ndef f(xs):\n    h = list(xs)\n    heapq.heapify(h)\n    heapq.heappush(h, 0)\n    low = [heapq.heappop(h) for _ in range(2)]\n    return low, heapq.nlargest(2, xs), heapq.nsmallest(1, xs, key=lambda x: -x), list(heapq.merge([1, 4], [2, 3]))\n",
        "assert f([5, 2, 8, 1]) == ([0, 1], [8, 5], [8], [1, 2, 3, 4])\n",
    ),
    (
        "functools.lru_cache / cache / partial / reduce / cmp_to_key",
        "import functools\n@functools.lru_cache(maxsize=None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n@functools.cache\ndef sq(n):\n    return n * n\ndef f(xs):\n    add = functools.partial(lambda a, b: a + b, 10)\n    order = sorted(xs, key=functools.cmp_to_key(lambda a, b: b - a))\n    return fib(30), sq(12), add(5), functools.reduce(lambda a, b: a * b, xs, 1), order\n",
        "assert f([3, 1, 2]) == (832040, 144, 15, 6, [3, 2, 1])\nassert fib.cache_info().hits > 0\n",
    ),
    (
        "typing generics and annotations",
        "from typing import List, Dict, Optional, Tuple, Union, Callable, Any, TypeVar, Generic, NamedTuple\nT = TypeVar('T')\nclass Box(Generic[T]):\n    def __init__(self, v: T) -> None:\n        self.v = v\nclass P(NamedTuple):\n    x: int\n    y: int = 0\ndef f(xs: List[int], m: Dict[str, Optional[int]], g: Callable[[int], int]) -> Tuple[int, Union[int, str]]:\n    return sum(map(g, xs)), Box[int](m.get('a') or 0).v + P(1).x\n",
        "import typing\nassert f([1, 2], {'a': 4}, lambda x: x * 2) == (6, 5)\nassert typing.get_type_hints(f)['return'] == typing.Tuple[int, typing.Union[int, str]]\nassert 'xs' in f.__annotations__\n",
    ),
    (
        "typing.ForwardRef, get_origin, get_args",
        "import typing\ndef f():\n    ref = typing.ForwardRef('int')\n    return ref.__forward_arg__, typing.get_origin(typing.List[int]), typing.get_args(typing.Dict[str, int])\n",
        "assert f() == ('int', list, (str, int))\n",
    ),
    (
        "dataclasses",
        "from dataclasses import dataclass, field, asdict, replace\n@dataclass(order=True, frozen=True)\nclass Pt:\n    x: int\n    y: int = 0\n    tags: tuple = field(default=(), compare=False)\ndef f():\n    a, b = Pt(1, 2), Pt(1, 3)\n    return a < b, asdict(replace(a, y=5)), sorted([b, a])[0] == a\n",
        "assert f() == (True, {'x': 1, 'y': 5, 'tags': ()}, True)\n",
    ),
    (
        "re compile / sub / findall / fullmatch",
        "import re\nPAT = re.compile(r'(\\d+)-(\\w+)')\ndef f(s):\n    return PAT.findall(s), re.sub(r'\\s+', ' ', s).strip(), bool(re.fullmatch(r'[a-z]+', 'abc')), re.split(r'[,;]', 'a,b;c'), re.search(r'(?P<n>\\d+)', s).group('n')\n",
        "assert f('12-ab  34-cd ') == ([('12', 'ab'), ('34', 'cd')], '12-ab 34-cd', True, ['a', 'b', 'c'], '12')\n",
    ),
    (
        "json dumps / loads",
        "import json\ndef f(obj):\n    text = json.dumps(obj, sort_keys=True, indent=None, separators=(',', ':'))\n    return text, json.loads(text), json.loads('[1.5, null, true]')\n",
        "assert f({'b': [1, 2], 'a': 'x'}) == ('{\"a\":\"x\",\"b\":[1,2]}', {'a': 'x', 'b': [1, 2]}, [1.5, None, True])\n",
    ),
    (
        "itertools",
        "import itertools\ndef f(xs):\n    return (list(itertools.permutations(xs, 2))[:3], list(itertools.combinations(xs, 2)), list(itertools.accumulate(xs)),\n            [k for k, _ in itertools.groupby('aabbbc')], list(itertools.islice(itertools.count(5), 3)), list(itertools.product('ab', repeat=2)),\n            list(itertools.chain.from_iterable([[1], [2, 3]])), list(itertools.zip_longest([1], [2, 3], fillvalue=0)), list(itertools.pairwise([1, 2, 3])))\n",
        "assert f([1, 2, 3]) == ([(1, 2), (1, 3), (2, 1)], [(1, 2), (1, 3), (2, 3)], [1, 3, 6], ['a', 'b', 'c'], [5, 6, 7], [('a', 'a'), ('a', 'b'), ('b', 'a'), ('b', 'b')], [1, 2, 3], [(1, 2), (0, 3)], [(1, 2), (2, 3)])\n",
    ),
    (
        "bisect",
        "import bisect\ndef f(xs, x):\n    ys = list(xs)\n    bisect.insort(ys, x)\n    return bisect.bisect_left(xs, x), bisect.bisect_right(xs, x), ys, bisect.bisect(xs, 10, key=None)\n",
        "assert f([1, 3, 3, 7], 3) == (1, 3, [1, 3, 3, 3, 7], 4)\n",
    ),
    (
        "statistics",
        "import statistics\ndef f(xs):\n    return statistics.mean(xs), statistics.median(xs), statistics.mode(xs), round(statistics.stdev(xs), 6), statistics.median_low(xs)\n",
        "assert f([1, 2, 2, 5]) == (2.5, 2.0, 2, 1.732051, 2)\n",
    ),
    (
        "fractions and decimal",
        "from fractions import Fraction\nfrom decimal import Decimal, getcontext, ROUND_HALF_UP\ndef f():\n    getcontext().prec = 10\n    q = Fraction(1, 3) + Fraction(1, 6)\n    return q, str(Decimal(1) / Decimal(7)), str(Decimal('2.675').quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)), Fraction('0.25').limit_denominator(10)\n",
        "from fractions import Fraction\nassert f() == (Fraction(1, 2), '0.1428571429', '2.68', Fraction(1, 4))\n",
    ),
    (
        "math",
        "import math\ndef f():\n    return math.gcd(12, 18), math.lcm(4, 6), math.comb(5, 2), math.isqrt(17), math.factorial(5), math.prod([2, 3]), round(math.dist((0, 0), (3, 4)), 9)\n",
        "assert f() == (6, 12, 10, 4, 120, 6, 5.0)\n",
    ),
    (
        "datetime",
        "from datetime import date, datetime, timedelta\ndef f():\n    d = date(2024, 2, 28) + timedelta(days=1)\n    t = datetime.fromisoformat('2024-03-01T10:30')\n    return d.isoformat(), t.strftime('%d/%m/%Y'), (date(2024, 12, 25) - date(2024, 1, 1)).days, d.weekday()\n",
        "assert f() == ('2024-02-29', '01/03/2024', 359, 3)\n",
    ),
    (
        "strptime",
        "import time\nfrom datetime import datetime\ndef f():\n    t = datetime.strptime('2024-03-01 10:30', '%Y-%m-%d %H:%M')\n    return t.minute, time.strptime('2024-12-25', '%Y-%m-%d').tm_yday\n",
        "assert f() == (30, 360)\n",
    ),
    (
        "string methods and the string module",
        "import string\ndef f(s):\n    table = str.maketrans('', '', string.punctuation)\n    return s.translate(table).title(), s.split(), ' '.join(reversed(s.split())), s.count('l'), string.ascii_lowercase[:3], s.zfill(14), '{:>5}|{:.2f}'.format('a', 3.14159), f'{42:08b}', s.casefold().swapcase()\n",
        "assert f('hello, world!') == ('Hello World', ['hello,', 'world!'], 'world! hello,', 3, 'abc', '0hello, world!', '    a|3.14', '00101010', 'HELLO, WORLD!')\n",
    ),
    (
        "sorted with key, operator",
        "import operator\ndef f(rows):\n    return sorted(rows, key=operator.itemgetter(1, 0)), sorted(rows, key=lambda r: (-r[1], r[0])), max(rows, key=operator.itemgetter(1)), list(map(operator.attrgetter('real'), [1, 2]))\n",
        "assert f([('b', 2), ('a', 2), ('c', 1)]) == ([('c', 1), ('a', 2), ('b', 2)], [('a', 2), ('b', 2), ('c', 1)], ('b', 2), [1, 2])\n",
    ),
    (
        "deque, defaultdict, OrderedDict, namedtuple, ChainMap",
        "from collections import deque, defaultdict, OrderedDict, namedtuple, ChainMap\ndef f(xs):\n    q = deque(xs, maxlen=3)\n    q.rotate(1)\n    q.appendleft(0)\n    d = defaultdict(list)\n    for x in xs:\n        d[x % 2].append(x)\n    o = OrderedDict.fromkeys('cab')\n    o.move_to_end('c')\n    P = namedtuple('P', 'x y')\n    return list(q), dict(d), list(o), P(1, 2)._asdict(), ChainMap({'a': 1}, {'a': 2, 'b': 3})['b']\n",
        "assert f([1, 2, 3, 4]) == ([0, 4, 2], {1: [1, 3], 0: [2, 4]}, ['a', 'b', 'c'], {'x': 1, 'y': 2}, 3)\n",
    ),
    (
        "copy",
        "import copy\ndef f(xs):\n    deep = copy.deepcopy(xs)\n    deep[0].append(9)\n    return xs, deep, copy.copy(xs) is not xs\n",
        "assert f([[1], 2]) == ([[1], 2], [[1, 9], 2], True)\n",
    ),
    (
        "cmath and complex",
        "import cmath\ndef f():\n    return cmath.sqrt(-4), abs(3 + 4j), round(cmath.phase(1j), 6)\n",
        "assert f() == (2j, 5.0, 1.570796)\n",
    ),
];

fn assert_task(test: &str) -> CodeTask {
    serde_json::from_value(json!({
        "id": "idiom", "prompt": "p", "language": "python", "mode": "full",
        "time_limit_ms": 5000, "memory_mb": 128,
        "tests": {"type": "assert", "code": test},
    }))
    .expect("a valid task")
}

fn judge(task: &CodeTask, programs: &[String]) -> Vec<Score> {
    let judge = CodeReward::new(sandbox());
    rt().block_on(judge.judge_programs(task, programs, &ScoreOptions::default()))
        .expect("no fault")
}

#[test]
fn standard_library_idioms_run_as_in_cpython() {
    let mut failures = Vec::new();
    for (name, program, test) in IDIOMS {
        let score = judge(&assert_task(test), &[(*program).to_owned()]).remove(0);
        if score.value != Some(1.0) {
            failures.push(format!(
                "{name}: {:?} {}",
                score.verdict.kind, score.verdict.reason
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn most_common_passes_in_call_mode() {
    // MBPP-style: the function under test returns `Counter(...).most_common(n)`.
    let task: CodeTask = serde_json::from_value(json!({
        "id": "mc", "prompt": "p", "language": "python", "mode": "full",
        "tests": {"type": "call", "entry_point": "top", "cases": [
            {"args": ["hello world", 1], "expected": [["l", 3]]},
            {"args": ["aab", 2], "expected": [["a", 2], ["b", 1]]},
        ]},
    }))
    .expect("a valid task");
    let program =
        "from collections import Counter\ndef top(s, n):\n    return Counter(s).most_common(n)\n";
    let score = judge(&task, &[program.to_owned()]).remove(0);
    assert_eq!(score.value, Some(1.0), "{:?}", score.verdict);
}

#[test]
fn an_mbpp_row_with_most_common_passes_through_the_importer() {
    // MBPP's task 13 in its original shape: the canonical solution calls most_common(4).
    let row = serde_json::json!({
        "text": "Write a function to count the most common words in a dictionary.",
        "code": "from collections import Counter\r\ndef count_common(words):\r\n  word_counts = Counter(words)\r\n  top_four = word_counts.most_common(4)\r\n  return (top_four)\r\n",
        "task_id": 13, "test_setup_code": "",
        "test_list": [
            "assert count_common(['red','green','black','pink','black','white','black','eyes','white','black','orange','pink','pink','red','red','white','orange','white',\"black\",'pink','green','green','pink','green','pink','white','orange',\"orange\",'red']) == [('pink', 6), ('black', 5), ('white', 5), ('red', 4)]",
            "assert count_common(['one', 'two', 'three', 'four', 'five', 'one', 'two', 'one', 'three', 'one']) == [('one', 4), ('two', 2), ('three', 2), ('four', 1)]",
        ],
        "challenge_test_list": [],
    });
    let tasks = import_str(&Format::Mbpp, "mbpp.jsonl", &row.to_string()).expect("imports");
    let Task::Code(task) = &tasks[0] else {
        unreachable!("MBPP rows are code tasks")
    };
    let reference = task.reference.clone().expect("the canonical solution");
    let score = judge(task, &[reference]).remove(0);
    assert_eq!(score.value, Some(1.0), "{:?}", score.verdict);
}

/// (name, program, the attribute the report must name). Every program passes its tests
/// (assert `f() == 1`) on its own: only the tamper check can fail it.
const HOSTILE: &[(&str, &str, &str)] = &[
    (
        "a module of its own as collections.heapq",
        "import collections, types\nfake = types.ModuleType('heapq')\nfake.nlargest = lambda n, it, key=None: []\ncollections.heapq = fake\ndef f():\n    return 1\n",
        "collections.heapq",
    ),
    (
        "a fake heapq in sys.modules, picked up by CPython's own lazy import",
        "import sys, heapq, types\nfake = types.ModuleType('heapq')\nfake.nlargest = heapq.nlargest\nsys.modules['heapq'] = fake\nfrom collections import Counter\nCounter('aab').most_common(1)\nsys.modules['heapq'] = heapq\ndef f():\n    return 1\n",
        "collections.heapq",
    ),
    (
        "the genuine heapq with a patched function",
        "import heapq\nheapq.nlargest = lambda n, it, key=None: []\ndef f():\n    return 1\n",
        "heapq.nlargest",
    ),
    (
        "collections.heapq deleted",
        "import collections\ndel collections.heapq\ndef f():\n    return 1\n",
        "collections.heapq",
    ),
    (
        "typing's lazy annotationlib replaced",
        "import typing\ntyping._lazy_annotationlib = object()\ndef f():\n    return 1\n",
        "typing._lazy_annotationlib",
    ),
    (
        "functools.reduce replaced",
        "import functools\nfunctools.reduce = lambda *a: 1\ndef f():\n    return 1\n",
        "functools.reduce",
    ),
    (
        "builtins.sorted replaced",
        "import builtins\nbuiltins.sorted = lambda *a, **k: []\ndef f():\n    return 1\n",
        "builtins.sorted",
    ),
];

#[test]
fn programs_that_replace_guarded_attributes_still_fail() {
    let task = assert_task("assert f() == 1\n");
    for (name, program, attribute) in HOSTILE {
        let score = judge(&task, &[(*program).to_owned()]).remove(0);
        assert_eq!(score.value, Some(0.0), "{name}: {:?}", score.verdict);
        assert!(
            score
                .verdict
                .reason
                .contains(&format!("the program replaced {attribute}")),
            "{name}: {}",
            score.verdict.reason
        );
    }
    // The same programs without the tampering pass: the tests alone do not fail them.
    let honest = judge(&task, &["def f():\n    return 1\n".to_owned()]).remove(0);
    assert_eq!(honest.value, Some(1.0), "{:?}", honest.verdict);
}

/// Scans every function of every guarded module in the guest's CPython for stores to module
/// globals (how the standard library rebinds its own attributes on first use) and compares
/// them with the harness's table of lazy imports: a new CPython that adds one fails here, not
/// on a user's correct program.
const SCAN_LAZY_GLOBALS: &str = r#"
import dis, json, sys, types
namespace = {"__name__": "__grpo_harness_probe__"}
exec(compile(sys.stdin.read(), "<harness>", "exec"), namespace)
guarded = [entry[0] for entry in namespace["_GUARDED"]]
found = set()

def scan(code):
    for ins in dis.get_instructions(code):
        if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            found.add((module_name, ins.argval))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            scan(const)

def walk(owner, seen):
    for value in list(vars(owner).values()):
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, property):
            for part in (value.fget, value.fset, value.fdel):
                if isinstance(part, types.FunctionType):
                    scan(part.__code__)
            continue
        function = getattr(value, "__func__", value)
        if isinstance(function, types.FunctionType) and function.__globals__ is module_globals:
            scan(function.__code__)
        elif isinstance(value, type) and value.__module__ == module_name:
            walk(value, seen)

for module_name in guarded:
    module_globals = vars(sys.modules[module_name])
    walk(sys.modules[module_name], set())
print(json.dumps({"guarded": guarded, "found": sorted(found), "table": sorted(namespace["_LAZY"])}))
"#;

#[test]
fn lazy_imports_table_is_complete() {
    let limits = grpo_sandbox::Limits {
        time_limit_ms: 10_000,
        ..quick()
    };
    let run = rt()
        .block_on(sandbox().run(SCAN_LAZY_GLOBALS, HARNESS_PY.as_bytes(), &limits))
        .expect("a run");
    assert_eq!(run.exit_code, Some(0), "{run:?}");
    let report: serde_json::Value = serde_json::from_str(run.stdout.trim()).expect("json");
    assert!(
        report["guarded"].as_array().expect("a list").len() >= 15,
        "{report}"
    );
    assert_eq!(
        report["found"], report["table"],
        "every global the guarded modules store must be in the harness's lazy-import table"
    );
    assert!(
        report["table"]
            .as_array()
            .expect("a list")
            .contains(&json!(["collections", "heapq"])),
        "{report}"
    );
}
