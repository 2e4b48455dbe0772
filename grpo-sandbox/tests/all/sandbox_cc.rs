//! C and C++ programs end to end: compiled by the confined zig, run in wasmtime with the same
//! limits as Python, with native-style exit codes for faults, and the hostile-program suite.

use crate::common::{quick, rt};
use grpo_rewards::{RunResult, RunStatus};
use grpo_sandbox::{Limits, Sandbox};
use grpo_sandbox::{RunOutput, RunRequest};
use grpo_tasks::Language;

/// The shared sandbox, with the C/C++ toolchain installed first when it is missing.
fn sandbox() -> Sandbox {
    crate::cc_toolchain::ensure();
    crate::common::sandbox()
}

fn source(language: Language, program: &str, stdin: &str) -> RunOutput {
    let request = RunRequest::new(language, program)
        .with_stdin(stdin.as_bytes())
        .with_limits(quick());
    rt().block_on(sandbox().run_program(&request)).unwrap()
}

#[track_caller]
fn run(language: Language, program: &str, stdin: &str) -> RunResult {
    run_source_with(language, program, stdin, &quick())
}

#[track_caller]
fn run_with(language: Language, program: &str, limits: &Limits) -> RunResult {
    run_source_with(language, program, "", limits)
}

#[track_caller]
fn run_source_with(language: Language, program: &str, stdin: &str, limits: &Limits) -> RunResult {
    let request = RunRequest::new(language, program)
        .with_stdin(stdin.as_bytes())
        .with_limits(limits.clone());
    let outcome = rt().block_on(sandbox().run_program(&request)).unwrap();
    let compile = outcome.compile.clone().unwrap();
    assert_eq!(
        compile.return_code, 0,
        "does not compile: {}",
        compile.stderr
    );
    outcome.run.unwrap()
}

#[test]
fn c_and_cpp_read_stdin_and_write_stdout() {
    let c = "#include <stdio.h>\nint main(void) { long a, b; if (scanf(\"%ld %ld\", &a, &b) != 2) return 2; printf(\"%ld\\n\", a * b); return 0; }";
    let r = run(Language::C, c, "6 7\n");
    assert_eq!(
        (r.status, r.exit_code, r.stdout.as_str()),
        (RunStatus::Ok, Some(0), "42\n"),
        "{r:?}"
    );
    let cpp = "#include <bits/stdc++.h>\nusing namespace std;\nint main() { ios::sync_with_stdio(false); cin.tie(nullptr); int n; cin >> n; vector<long long> v(n); for (auto &x : v) cin >> x; sort(v.begin(), v.end()); map<long long, int> seen; for (auto x : v) seen[x]++; cout << v.back() << ' ' << seen.size() << '\\n'; }";
    let r = run(Language::Cpp, cpp, "5\n3 1 4 1 5\n");
    assert_eq!(r.stdout, "5 4\n", "{r:?}");
    let r = run(Language::C, "int main(void) { return 3; }", "");
    assert_eq!(
        (r.status, r.exit_code),
        (RunStatus::Error, Some(3)),
        "{r:?}"
    );
}

#[test]
fn a_repeated_program_compiles_once() {
    let program = "#include <stdio.h>\nint main(void) { puts(\"cached\"); }";
    let first = source(Language::C, program, "");
    let second = source(Language::C, program, "");
    assert_eq!(second.run.unwrap().stdout, "cached\n");
    assert!(second.compile.unwrap().cached, "{:?}", first.compile);
}

#[test]
fn compile_errors_are_not_runs() {
    let outcome = source(Language::Cpp, "int main() { undeclared(); }", "");
    let compile = outcome.compile.unwrap();
    assert_ne!(compile.return_code, 0);
    assert!(compile.stderr.contains("undeclared"), "{}", compile.stderr);
    assert!(outcome.run.is_none());
    // No processes, no sockets: the calls do not exist for wasm32-wasi.
    for program in [
        "#include <stdlib.h>\nint main(void) { return system(\"id\"); }",
        "#include <unistd.h>\nint main(void) { return fork(); }",
        "#include <sys/socket.h>\nint main(void) { return socket(2, 1, 0); }",
    ] {
        let outcome = source(Language::C, program, "");
        assert!(outcome.run.is_none(), "{program}: {outcome:?}");
    }
}

#[test]
fn native_faults_read_like_a_native_process() {
    let r = run(
        Language::Cpp,
        "#include <cassert>\nint main() { assert(2 + 2 == 5); }",
        "",
    );
    assert_eq!(
        (r.status, r.exit_code),
        (RunStatus::Error, Some(-6)),
        "{r:?}"
    );
    assert!(r.stderr.contains("Assertion failed"), "{r:?}");
    let r = run(
        Language::C,
        "#include <stdlib.h>\nint main(void) { abort(); }",
        "",
    );
    assert_eq!(r.exit_code, Some(-6), "{r:?}");
    let r = run(
        Language::C,
        "int main(void) { volatile int *p = (int *)0xfffffff0; return *p; }",
        "",
    );
    assert_eq!(
        (r.status, r.exit_code),
        (RunStatus::Error, Some(-11)),
        "{r:?}"
    );
    let r = run(
        Language::C,
        "#include <stdio.h>\nint main(void) { volatile int x = 7, z = 0; printf(\"%d\", x / z); }",
        "",
    );
    assert_eq!(r.exit_code, Some(-8), "{r:?}");
}

#[test]
fn hostile_programs_are_contained() {
    let r = run(
        Language::C,
        "int main(void) { volatile unsigned long i = 0; for (;;) i++; }",
        "",
    );
    assert_eq!(r.status, RunStatus::Timeout, "{r:?}");
    // Memory bombs get a generous CPU limit, so the verdict is the memory cap even on a
    // loaded machine. (The blocks are kept: clang removes a malloc whose block is never read.)
    let roomy = Limits {
        time_limit_ms: 10_000,
        ..quick()
    };
    let r = run_with(
        Language::Cpp,
        "#include <vector>\nint main() { std::vector<std::vector<char>> hog; for (;;) hog.emplace_back(1 << 20, 1); }",
        &roomy,
    );
    assert_eq!(r.status, RunStatus::MemoryLimit, "{r:?}");
    assert!(r.stderr.contains("bad_alloc"), "{r:?}");
    let r = run_with(
        Language::C,
        "#include <stdlib.h>\n#include <string.h>\nstatic char *kept[100000];\nint main(void) { for (int i = 0;; i++) { char *p = malloc(1 << 20); if (!p) return 1; memset(p, i, 1 << 20); kept[i] = p; volatile char sink = kept[i / 2][7]; (void)sink; } }",
        &roomy,
    );
    assert_eq!(r.status, RunStatus::MemoryLimit, "{r:?}");
    let r = run(
        Language::C,
        "int f(int n) { volatile char pad[256]; pad[0] = n; return f(n + 1) + pad[0]; }\nint main(void) { return f(0); }",
        "",
    );
    assert_eq!(r.status, RunStatus::Error, "{r:?}");
    assert_eq!(r.exit_code, Some(-11), "{r:?}");
    let r = run(
        Language::C,
        "#include <stdio.h>\nint main(void) { for (;;) fputs(\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n\", stdout); }",
        "",
    );
    assert_eq!(r.status, RunStatus::OutputLimit, "{r:?}");
    assert!(r.truncated);
    let r = run(
        Language::C,
        "#include <stdio.h>\nint main(void) { FILE *f = fopen(\"/etc/passwd\", \"r\"); FILE *g = fopen(\"../../../../etc/hostname\", \"r\"); printf(\"%d %d\\n\", f != NULL, g != NULL); }",
        "",
    );
    assert_eq!(r.stdout, "0 0\n", "{r:?}");
    // Filling the file quota (8 MiB) takes about a second on a loaded machine: the generous
    // CPU limit makes the quota the verdict there too.
    let r = run_with(
        Language::C,
        "#include <stdio.h>\nint main(void) { FILE *f = fopen(\"big\", \"w\"); for (;;) fputs(\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\", f); }",
        &roomy,
    );
    assert_eq!(r.status, RunStatus::OutputLimit, "{r:?}");
    // Deep but finite recursion (a DFS over 10^5 nodes) works with the 8 MiB stack.
    let r = run(
        Language::Cpp,
        "#include <cstdio>\nint depth(int n) { return n == 0 ? 0 : 1 + depth(n - 1); }\nint main() { std::printf(\"%d\\n\", depth(100000)); }",
        "",
    );
    assert_eq!(r.stdout, "100000\n", "{r:?}");
}

#[test]
fn typescript_runs_and_its_syntax_errors_exit_1() {
    let outcome = source(
        Language::Typescript,
        "interface P { x: number }\nconst p: P = { x: 41 };\nconsole.log(p.x + 1);\n",
        "",
    );
    assert!(outcome.compile.is_none());
    assert_eq!(outcome.run.unwrap().stdout, "42\n");
    let r = source(Language::Typescript, "let x: = 3;", "").run.unwrap();
    assert_eq!(
        (r.status, r.exit_code),
        (RunStatus::Error, Some(1)),
        "{r:?}"
    );
    assert!(!r.stderr.is_empty());
}

/// `SandboxOptions::compile_parallel` gives the sandbox a compiler of its own with that cap
/// (the Python package sets it to its thread count); without it, the process-wide compiler
/// keeps the number of cores.
#[test]
fn compile_parallel_caps_the_sandboxs_own_compiler() {
    crate::cc_toolchain::ensure();
    let options = grpo_sandbox::SandboxOptions {
        concurrency: 1,
        compile_parallel: Some(3),
        ..grpo_sandbox::SandboxOptions::default()
    };
    let own = Sandbox::new(&options).unwrap();
    assert_eq!(own.compiler().unwrap().max_parallel(), 3);
    let request = RunRequest::new(
        Language::C,
        "#include <stdio.h>\nint main(void) { puts(\"7\"); return 0; }",
    )
    .with_limits(quick());
    let outcome = rt().block_on(own.run_program(&request)).unwrap();
    assert_eq!(outcome.run.unwrap().stdout, "7\n");
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(sandbox().compiler().unwrap().max_parallel(), cores);
}

/// A HumanEval-X C++ solution with its own `int strlen(string)`, and the problem's test.
fn strlen_solution(body: &str) -> String {
    format!(
        "#include<stdio.h>\n#include<string>\nusing namespace std;\nint strlen(string str){{\n    {body}\n}}\n\
         #undef NDEBUG\n#include<assert.h>\nint main(){{\n    assert (strlen(\"\") == 0);\n\
         assert (strlen(\"x\") == 1);\n    assert (strlen(\"asdasnakj\") == 9);\n}}\n"
    )
}

/// A program's own function under a C library name is the one its calls reach, as with g++
/// (libc++ declares `::strlen(const char *)` in `<string>`, which would win for `strlen("")`).
#[test]
fn a_programs_own_function_under_a_libc_name_is_the_one_called() {
    let wrong = run(Language::Cpp, &strlen_solution("return 42;"), "");
    assert_eq!(
        (wrong.status, wrong.exit_code),
        (RunStatus::Error, Some(-6)),
        "{wrong:?}"
    );
    assert!(wrong.stderr.contains("Assertion failed"), "{wrong:?}");
    let right = run(Language::Cpp, &strlen_solution("return str.length();"), "");
    assert_eq!(
        (right.status, right.exit_code),
        (RunStatus::Ok, Some(0)),
        "{right:?}"
    );
    // The C library's strlen, used without a definition of one's own, is untouched.
    let libc = run(
        Language::Cpp,
        "#include <cstring>\n#include <cstdio>\nint main() { char b[8] = \"abcd\"; \
         std::printf(\"%zu %zu\\n\", strlen(b), std::strlen(\"xy\")); }",
        "",
    );
    assert_eq!(libc.stdout, "4 2\n", "{libc:?}");
    // As natively: an integer `pow` of one's own beside <cmath>'s. Exact matches reach the
    // program's, `pow(2, 10)` and `pow(2.0, 0.5)` the library's.
    let pow = run(
        Language::Cpp,
        "#include <iostream>\n#include <cmath>\nusing namespace std;\n\
         long long pow(long long a, long long b) { long long r = 1; while (b--) r *= a; return r + 1000; }\n\
         int main() { long long a = 2, b = 10; cout << pow(a, b) << ' ' << pow(2, 10) << ' ' << pow(2.0, 0.5) << endl; }",
        "",
    );
    assert_eq!(pow.stdout, "2024 1024 1.41421\n", "{pow:?}");
    // Without <cmath>, the program's pow is the only one it meant.
    let pow = run(
        Language::Cpp,
        "#include <iostream>\nint pow(int a, int b) { return a * 100 + b; }\n\
         int main() { std::cout << pow(2, 3) << ' ' << pow(2.5, 1) << std::endl; }",
        "",
    );
    assert_eq!(pow.stdout, "203 201\n", "{pow:?}");
    // `abs` and `isdigit` (a macro in C's <ctype.h>), in C++ and in C.
    let cpp = run(
        Language::Cpp,
        "#include <cctype>\n#include <cstdlib>\n#include <iostream>\n\
         int abs(int x) { return 7; }\nbool isdigit(char c) { return c == 'x'; }\n\
         int main() { std::cout << abs(-3) << isdigit('x') << isdigit('5') << std::endl; }",
        "",
    );
    assert_eq!(cpp.stdout, "710\n", "{cpp:?}");
    let c = run(
        Language::C,
        "#include <ctype.h>\n#include <stdio.h>\nint isdigit(int c) { return c == 'x'; }\n\
         int main(void) { printf(\"%d%d\\n\", isdigit('x'), isdigit('5')); return 0; }",
        "",
    );
    assert_eq!(c.stdout, "10\n", "{c:?}");
    // `max` is no C library name: a program's own max works as before.
    let max = run(
        Language::Cpp,
        "#include <bits/stdc++.h>\nusing namespace std;\nint max(int a, int b, int c) { return a + b + c; }\n\
         int main() { cout << max(1, 2, 3) << max(4, 5) << endl; }",
        "",
    );
    assert_eq!(max.stdout, "65\n", "{max:?}");
}

/// Compile errors in a renamed function name it as the program wrote it, on its own line.
#[test]
fn compile_errors_name_the_programs_own_function() {
    let outcome = source(
        Language::Cpp,
        "#include <cstring>\n#include <string>\nint strlen(std::string s) { return s.size(); }\n\
         int main() { return strlen(1, 2, 3); }",
        "",
    );
    let compile = outcome.compile.unwrap();
    assert_ne!(compile.return_code, 0);
    assert!(
        compile.stderr.contains("main.cpp:4:") && compile.stderr.contains("'strlen'"),
        "{}",
        compile.stderr
    );
    assert!(!compile.stderr.contains("grpo_user_"), "{}", compile.stderr);
}

/// A program that defines its own `exit` (a guard against exiting early) links, and its
/// calls reach it, in C++ and in C (wasi-libc is static: the two used to clash at link time).
#[test]
fn a_program_with_its_own_exit_links_and_calls_it() {
    let cpp = run(
        Language::Cpp,
        "#include <cstdio>\n#include <cstdlib>\n\
         void exit(int code) { printf(\"custom exit %d\\n\", code); fflush(stdout); abort(); }\n\
         int main() { printf(\"main\\n\"); exit(0); }",
        "",
    );
    assert_eq!(cpp.stdout, "main\ncustom exit 0\n", "{cpp:?}");
    assert_eq!(
        (cpp.status, cpp.exit_code),
        (RunStatus::Error, Some(-6)),
        "{cpp:?}"
    );
    let guard = run(
        Language::Cpp,
        "#include <iostream>\nusing namespace std;\nvoid exit(int code) { cout << \"blocked \" << code << endl; }\n\
         int main() { exit(0); cout << \"after\" << endl; return 3; }",
        "",
    );
    assert_eq!(guard.stdout, "blocked 0\nafter\n", "{guard:?}");
    assert_eq!(guard.exit_code, Some(3), "{guard:?}");
    let c = run(
        Language::C,
        "#include <stdio.h>\n#include <stdlib.h>\n\
         void exit(int c) { printf(\"mine %d\\n\", c); fflush(stdout); abort(); }\n\
         int main(void) { exit(2); }",
        "",
    );
    assert_eq!(c.stdout, "mine 2\n", "{c:?}");
    assert_eq!(c.exit_code, Some(-6), "{c:?}");
    // `std::exit` is the same function as `::exit`, so it reaches the guard too.
    let std_exit = run(
        Language::Cpp,
        "#include <cstdlib>\n#include <cstdio>\n\
         void exit(int c) { std::printf(\"guard %d\\n\", c); std::fflush(stdout); std::abort(); }\n\
         int main() { std::exit(0); }",
        "",
    );
    assert_eq!(std_exit.stdout, "guard 0\n", "{std_exit:?}");
    assert_eq!(std_exit.exit_code, Some(-6), "{std_exit:?}");
}

/// `<thread>` gives the one thread's `std::this_thread` (sleeping over `nanosleep`, so the
/// wall-clock limit still stops it), also through `<bits/stdc++.h>`.
#[test]
fn this_thread_sleeps_and_the_wall_clock_limit_stops_it() {
    let program = "#include <thread>\n#include <chrono>\n#include <iostream>\n#include <unordered_set>\n\
        int main() {\n  auto t0 = std::chrono::steady_clock::now();\n\
        std::this_thread::sleep_for(std::chrono::milliseconds(30));\n\
        std::this_thread::sleep_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(20));\n\
        std::this_thread::yield();\n\
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();\n\
        std::unordered_set<std::thread::id> ids{std::this_thread::get_id()};\n\
        std::cout << (ms >= 50) << ' ' << (std::this_thread::get_id() != std::thread::id()) << ' '\n\
        << std::thread::hardware_concurrency() << ' ' << ids.size() << '\\n';\n}";
    let r = run(Language::Cpp, program, "");
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (RunStatus::Ok, "1 1 1 1\n"),
        "{r:?}"
    );
    let bits = run(
        Language::Cpp,
        "#include <bits/stdc++.h>\nint main() { std::this_thread::sleep_for(std::chrono::milliseconds(1)); puts(\"ok\"); }",
        "",
    );
    assert_eq!(bits.stdout, "ok\n", "{bits:?}");
    let start = std::time::Instant::now();
    let r = run(
        Language::Cpp,
        "#include <thread>\n#include <chrono>\nint main() { std::this_thread::sleep_for(std::chrono::hours(1)); }",
        "",
    );
    assert_eq!(r.status, RunStatus::Timeout, "{r:?}");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

/// Starting a thread is a compile error that says why (never a hang or a silent no-op).
#[test]
fn starting_a_thread_is_a_compile_error_that_says_why() {
    for program in [
        "#include <thread>\nint main() { std::thread t([] {}); t.join(); }",
        "#include <bits/stdc++.h>\nint main() { std::jthread t([] {}); }",
    ] {
        let outcome = source(Language::Cpp, program, "");
        let compile = outcome.compile.unwrap();
        assert_ne!(compile.return_code, 0, "{program}");
        assert!(
            compile.stderr.contains("cannot start a thread here")
                && compile.stderr.contains("single-threaded"),
            "{}",
            compile.stderr
        );
        assert!(outcome.run.is_none());
    }
}

/// Programs with ordinary includes print the same with the precompiled `<bits/stdc++.h>` as
/// without it, including one that only compiles without it (a global `any`).
#[test]
fn the_precompiled_header_does_not_change_what_a_program_prints() {
    use grpo_sandbox::guest::cc::{Compiler, CompilerOptions};
    crate::cc_toolchain::ensure();
    let programs = [
        "#include <iostream>\n#include <vector>\n#include <algorithm>\nusing namespace std;\n\
         int main() { vector<int> v{5, 1, 4}; sort(v.begin(), v.end()); \
         cout << v[0] << v[2] << endl; }\n",
        "#include<stdio.h>\n#include<math.h>\n#include<stdlib.h>\nusing namespace std;\n\
         int main() { printf(\"%d %.1f %g\\n\", abs(-3), fabs(-2.5), sqrt(2.0)); }\n",
        "#define ll long long\n#include <map>\n#include <string>\n#include <cstdio>\n\
         int main() { std::map<std::string, ll> m{{\"a\", 1LL << 40}}; \
         printf(\"%lld\\n\", m[\"a\"]); }\n",
        "#include <iostream>\nusing namespace std;\nint any = 3;\n\
         int main() { cout << any + 1 << endl; }\n",
        "#include <string>\n#include <cstdio>\nusing namespace std;\n\
         int main() { string s = to_string(7) + \"x\"; printf(\"%s\\n\", s.c_str()); }\n\
         #undef NDEBUG\n#include <cassert>\nint check() { assert(1 + 1 == 2); return 0; }\n",
    ];
    let outputs = |use_pch: bool| {
        let sandbox = Sandbox::new(&grpo_sandbox::SandboxOptions::default()).unwrap();
        let options = CompilerOptions {
            use_pch,
            ..CompilerOptions::default()
        };
        let compiler =
            Compiler::with_options(sandbox.compiler().unwrap().toolchain().clone(), options);
        assert!(sandbox.with_compiler(compiler.clone()));
        let printed: Vec<(String, Option<i32>)> = programs
            .iter()
            .map(|program| {
                let request = RunRequest::new(Language::Cpp, program).with_limits(quick());
                let outcome = rt().block_on(sandbox.run_program(&request)).unwrap();
                let run = outcome.run.clone().unwrap_or_else(|| panic!("{outcome:?}"));
                (run.stdout, run.exit_code)
            })
            .collect();
        (printed, compiler.stats())
    };
    let (with, stats) = outputs(true);
    let (without, plain) = outputs(false);
    assert_eq!(with, without);
    assert_eq!(with[3].0, "4\n");
    assert_eq!(
        (stats.with_pch, stats.retried_without_pch),
        (5, 1),
        "{stats:?}"
    );
    assert_eq!(plain.with_pch, 0);
}

/// A C program's sleep (WASIp1's clock subscription) is charged to its time limit as a Python
/// program's is: sleeping past the limit is a timeout at the limit, not at the wall clock.
#[test]
fn a_c_sleep_is_charged_to_the_time_limit() {
    let limits = Limits {
        time_limit_ms: 1_000,
        wall_limit_ms: Some(60_000),
        ..quick()
    };
    let started = std::time::Instant::now();
    let r = run_with(
        Language::C,
        "#include <unistd.h>\n#include <stdio.h>\nint main(void) { sleep(20); puts(\"woke\"); return 0; }\n",
        &limits,
    );
    assert_eq!(r.status, RunStatus::Timeout, "{r:?}");
    assert!(started.elapsed().as_secs() < 15, "{:?}", started.elapsed());
}
