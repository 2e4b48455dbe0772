#!/usr/bin/env python3
"""Writes the expected outputs of the sandbox's scientific-Python test from host CPython.

    scripts/scientific_reference.py            # rewrites grpo-sandbox/tests/data/scientific.json

Each case below is a small program that prints one result (sympy's solve, simplify, factorint,
Rational arithmetic, mpmath at 50 digits, and a few more). This script installs the very wheels
the sandbox's snapshot is built from (grpo-sandbox/runtime/requirements.txt: same versions,
same SHA-256s) into a virtual environment outside the repository, runs every case there with
`python3 -I` under two different hash seeds, and writes each case's program and output to the
table. A case whose output depends on the hash seed is refused (the sandbox's seed differs), so
the table holds only outputs host and sandbox must agree on. The test
`scientific::table_matches_host_cpython` (grpo-sandbox/tests/all/scientific.rs) runs each
program in the sandbox and compares.

Needs python3 with venv and PyPI; $GRPO_SCIENTIFIC_VENV names the environment
(default ${TMPDIR:-/tmp}/grpo-scientific-venv).
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "grpo-sandbox" / "runtime" / "requirements.txt"
TABLE = ROOT / "grpo-sandbox" / "tests" / "data" / "scientific.json"

S = "from sympy import *\nx, y, z, n, k = symbols('x y z n k')\n"
M = "from mpmath import mp, mpf, mpc\nimport mpmath\nmp.dps = 50\n"

# (name, program): each program prints its result.
CASES = [
    # solve
    ("solve_quadratic", S + "print(solve(x**2 - 5*x + 6, x))"),
    ("solve_irrational", S + "print(solve(x**2 - 2, x))"),
    ("solve_complex", S + "print(solve(x**2 + 1, x))"),
    ("solve_cubic", S + "print(solve(x**3 - 6*x**2 + 11*x - 6, x))"),
    ("solve_system", S + "print(solve([x + y - 10, x - y - 2], [x, y], dict=True))"),
    ("solve_rational_equation", S + "print(solve(Eq(1/x + 1/(x + 1), Rational(5, 6)), x))"),
    ("solve_exponential", S + "print(solve(2**x - 32, x))"),
    ("solve_symbolic", S + "a, b, c = symbols('a b c')\nprint(solve(a*x**2 + b*x + c, x))"),
    ("solveset_interval", S + "print(solveset(x**2 - 4 < 0, x, S.Reals))"),
    ("nsolve_cos", S + "print(nsolve(cos(x) - x, x, 1))"),
    ("linsolve", S + "print(linsolve([x + 2*y - 3, 3*x - y - 2], [x, y]))"),
    ("diophantine", S + "from sympy.solvers.diophantine import diophantine\n"
     "print(sorted(diophantine(x**2 - y**2 - 5)))"),
    # simplify and friends
    ("simplify_trig", S + "print(simplify(sin(x)**2 + cos(x)**2))"),
    ("simplify_rational", S + "print(simplify((x**2 - 1)/(x - 1)))"),
    ("simplify_gamma", S + "print(simplify(gamma(n + 1)/gamma(n)))"),
    ("expand", S + "print(expand((x + y)**4))"),
    ("factor", S + "print(factor(x**4 - 1))"),
    ("cancel", S + "print(cancel((x**3 - y**3)/(x - y)))"),
    ("apart", S + "print(apart(1/(x**2 + 3*x + 2), x))"),
    ("trigsimp", S + "print(trigsimp(2*sin(x)*cos(x)))"),
    ("nsimplify", S + "print(nsimplify(0.333333333333333333, rational=True), "
     "nsimplify(sqrt(2)*1.0))"),
    ("radsimp", S + "print(radsimp(1/(1 + sqrt(2))))"),
    # number theory
    ("factorint_small", S + "print(factorint(360))"),
    ("factorint_large", S + "print(factorint(2**64 + 1))"),
    ("factorint_semiprime", S + "print(factorint(1000000007 * 998244353))"),
    ("isprime", S + "print([isprime(p) for p in (2, 97, 561, 2**61 - 1, 10**18 + 9)])"),
    ("primes", S + "print(prime(1000), primepi(10**6), nextprime(10**12))"),
    ("totient_divisors", S + "print(totient(10**6), divisors(360)[:10], divisor_count(10**6))"),
    ("mod_inverse_crt", S + "from sympy.ntheory.modular import crt\n"
     "print(mod_inverse(17, 3120), crt([3, 5, 7], [2, 3, 2]))"),
    ("binomial_factorial", S + "print(binomial(100, 50), factorial(25))"),
    ("fibonacci_catalan", S + "print(fibonacci(100), catalan(20), bell(10))"),
    # Rational arithmetic
    ("rational_sum", S + "print(Rational(1, 3) + Rational(1, 6) - Rational(2, 7))"),
    ("rational_power", S + "print(Rational(2, 3)**10, Rational(-8, 27)**Rational(1, 3))"),
    ("harmonic", S + "print(sum(Rational(1, i) for i in range(1, 31)))"),
    ("egyptian", S + "from sympy.ntheory.egyptian_fraction import egyptian_fraction\n"
     "print(egyptian_fraction(Rational(7, 15)))"),
    ("continued_fraction", S + "from sympy.ntheory.continued_fraction import "
     "continued_fraction_periodic\nprint(continued_fraction_periodic(0, 1, 23))"),
    # calculus
    ("diff", S + "print(diff(x**3*exp(x)*sin(x), x))"),
    ("integrate_indefinite", S + "print(integrate(x**2*exp(x), x))"),
    ("integrate_definite", S + "print(integrate(exp(-x**2), (x, -oo, oo)))"),
    ("limit", S + "print(limit(sin(x)/x, x, 0), limit((1 + 1/n)**n, n, oo))"),
    ("series", S + "print(series(exp(x)*cos(x), x, 0, 6))"),
    ("summation", S + "print(summation(k**2, (k, 1, n)).factor(), summation(1/k**2, (k, 1, oo)))"),
    ("product", S + "print(product(k, (k, 1, 10)), product(1 + 1/k, (k, 1, n)))"),
    ("dsolve", S + "f = Function('f')\nprint(dsolve(f(x).diff(x, 2) + f(x), f(x)))"),
    ("rsolve", S + "a = Function('a')\nprint(rsolve(a(n + 2) - a(n + 1) - a(n), a(n), "
     "{a(0): 0, a(1): 1}).simplify())"),
    # matrices and polynomials
    ("matrix_det_inv", S + "A = Matrix([[2, 1], [5, 3]])\nprint(A.det(), A.inv())"),
    ("matrix_eigen", S + "print(Matrix([[2, 0], [0, 3]]).eigenvals(), "
     "Matrix([[4, 1], [2, 3]]).charpoly(x).as_expr())"),
    ("matrix_rref", S + "print(Matrix([[1, 2, 3], [4, 5, 6], [7, 8, 10]]).rref())"),
    ("poly_roots", S + "print(Poly(x**4 - 10*x**2 + 1, x).all_roots())"),
    ("poly_gcd", S + "print(gcd(x**4 - 1, x**6 - 1), lcm(x**2 - 1, x**2 + 2*x + 1))"),
    ("groebner", S + "print(groebner([x**2 + y - 1, x + y**2 - 1], x, y, order='lex'))"),
    ("evalf_pi", S + "print(pi.evalf(60), E.evalf(30))"),
    ("latex", S + "print(latex(Integral(sqrt(x)/(1 + x**2), (x, 0, oo))))"),
    ("sympify", S + "print(sympify('2*x**2 + 3*x - 1').subs(x, Rational(1, 2)), "
     "parse_expr('sin(x)**2').diff(x))"),
    ("lambdify", S + "g = lambdify(x, x**2 + sin(x), 'math')\nprint(round(g(1.5), 12))"),
    ("combinatorics", S + "from sympy.combinatorics import Permutation\n"
     "p = Permutation([2, 0, 1, 3])\nprint(p.order(), p.cyclic_form, (p**2).array_form)"),
    ("stats", S + "from sympy.stats import Die, Normal, P, E as Expect, variance\n"
     "X = Die('X', 6)\nN = Normal('N', 0, 1)\nprint(P(X > 3), Expect(X), variance(X), "
     "simplify(P(N > 1)))"),
    ("abc", "from sympy.abc import a, b\nfrom sympy import expand\nprint(expand((a - b)**3))"),
    # mpmath at 50 digits
    ("mp_pi_e", M + "print(mp.pi, mp.e)"),
    ("mp_sqrt2", M + "print(mpmath.sqrt(2))"),
    ("mp_zeta", M + "print(mpmath.zeta(3))"),
    ("mp_gamma", M + "print(mpmath.gamma(mpf(1) / 3))"),
    ("mp_quad", M + "print(mpmath.quad(lambda t: mpmath.exp(-t**2), [-mpmath.inf, mpmath.inf]))"),
    ("mp_findroot", M + "print(mpmath.findroot(lambda t: mpmath.cos(t) - t, 1))"),
    ("mp_log_exp", M + "print(mpmath.log(10), mpmath.exp(mpf(1) / 7))"),
    ("mp_complex", M + "print(mpmath.exp(mpc(0, 1) * mp.pi), mpmath.sqrt(-2))"),
    ("mp_nsum", M + "print(mpmath.nsum(lambda k: 1 / k**4, [1, mpmath.inf]))"),
    ("mp_besselj", M + "print(mpmath.besselj(0, 2.5))"),
    ("mp_polyroots", M + "print(mpmath.polyroots([1, 0, -2]))"),
    ("mp_matrix", M + "A = mpmath.matrix([[1, 2], [3, 4]])\nprint(mpmath.lu_solve(A, [5, 6]))"),
    ("mp_hyp2f1", M + "print(mpmath.hyp2f1(1, 1, 2, mpf(1) / 2))"),
    ("mp_identify", "import mpmath\nprint(mpmath.identify(mpmath.mpf(0.75) * mpmath.pi, ['pi']))"),
    ("mp_default_precision", "import mpmath\nprint(mpmath.mp.dps, mpmath.mpf(1) / 3)"),
    # sortedcontainers
    ("sortedlist", "from sortedcontainers import SortedList, SortedDict\n"
     "s = SortedList([5, 1, 4, 1, 3])\ns.add(2)\nd = SortedDict({'b': 2, 'a': 1})\n"
     "print(list(s), s.bisect_left(4), s[-1], list(d.items()))"),
]

MIN_CASES = 50


def venv_python():
    """The reference environment's python, with the pinned wheels installed (once)."""
    default = Path(os.environ.get("TMPDIR", "/tmp")) / "grpo-scientific-venv"
    venv = Path(os.environ.get("GRPO_SCIENTIFIC_VENV", default))
    python = venv / "bin" / "python3"
    stamp = venv / "requirements.txt"
    wanted = REQUIREMENTS.read_text()
    if not python.exists() or not stamp.exists() or stamp.read_text() != wanted:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "--no-deps", "--only-binary=:all:", "--require-hashes", "-r", str(REQUIREMENTS)],
            check=True,
        )
        stamp.write_text(wanted)
    return python


def run_case(python, name, program, seed):
    env = {"PYTHONHASHSEED": str(seed), "PATH": os.environ.get("PATH", "")}
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([str(python), "-I", "-c", program], capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=120)
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"{name}: exit {done.returncode}\n{done.stderr}")
    return done.stdout


def main():
    if len(CASES) < MIN_CASES:
        raise SystemExit(f"only {len(CASES)} cases; the table needs at least {MIN_CASES}")
    names = [name for name, _ in CASES]
    if len(set(names)) != len(names):
        raise SystemExit("case names repeat")
    python = venv_python()
    version = subprocess.run([str(python), "-c", "import sys, sympy, mpmath, sortedcontainers; "
                              "print(sys.version.split()[0], sympy.__version__, "
                              "mpmath.__version__, sortedcontainers.__version__)"],
                             capture_output=True, text=True, check=True).stdout.split()
    rows = []
    for name, program in CASES:
        first = run_case(python, name, program, 1)
        second = run_case(python, name, program, 2)
        if first != second:
            raise SystemExit(f"{name}: the output depends on the hash seed:\n{first}{second}")
        rows.append({"name": name, "program": program, "expected": first})
    table = {
        "generated_by": "scripts/scientific_reference.py",
        "host": {"python": version[0], "sympy": version[1], "mpmath": version[2],
                 "sortedcontainers": version[3]},
        "cases": rows,
    }
    TABLE.write_text(json.dumps(table, indent=1) + "\n")
    print(f"{TABLE.relative_to(ROOT)}: {len(rows)} cases (python {version[0]}, "
          f"sympy {version[1]}, mpmath {version[2]})")


if __name__ == "__main__":
    main()
