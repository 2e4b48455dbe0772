//! Compiling C and C++ to wasm32-wasi with the pinned zig: modules, compile errors, the cache,
//! the confinement and the hostile-source suite.
//!
//! These need the toolchain under the default cache directory; the first test installs it
//! when it is missing (see `cc_toolchain`: from `GRPO_ZIG_WHEEL` when set, else from PyPI).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::rt;
use grpo_sandbox::guest::cc::{
    CLang, CompileLimits, CompileStats, Compiled, Compiler, TIMEOUT_CODE,
};

/// The shared compiler (the toolchain installed first when missing: see `cc_toolchain`),
/// warmed once.
fn compiler() -> Compiler {
    static WARM: OnceLock<Compiler> = OnceLock::new();
    WARM.get_or_init(|| {
        crate::cc_toolchain::ensure();
        let compiler = Compiler::shared().unwrap_or_else(|e| panic!("{e}"));
        let warm = rt().block_on(compiler.warm_up()).unwrap();
        eprintln!("warm-up: {warm:?}");
        compiler
    })
    .clone()
}

fn compile_with(lang: CLang, source: &str, limits: &CompileLimits) -> Compiled {
    rt().block_on(compiler().compile(lang, source, limits))
        .unwrap()
}

fn compile(lang: CLang, source: &str) -> Compiled {
    compile_with(lang, source, &CompileLimits::default())
}

#[track_caller]
fn module(compiled: Compiled) -> (std::sync::Arc<[u8]>, bool, u64) {
    match compiled {
        Compiled::Module {
            wasm,
            cached,
            compile_ms,
        } => {
            assert!(wasm.starts_with(b"\0asm\x01\0\0\0"), "not a wasm module");
            assert_wasi_command(&wasm);
            (wasm, cached, compile_ms)
        }
        Compiled::Failed { stderr, .. } => panic!("did not compile:\n{stderr}"),
    }
}

/// A valid core module that exports `_start` and `memory` and imports only WASI preview 1.
#[track_caller]
fn assert_wasi_command(wasm: &[u8]) {
    static ENGINE: OnceLock<wasmtime::Engine> = OnceLock::new();
    let engine = ENGINE.get_or_init(wasmtime::Engine::default);
    let module = wasmtime::Module::new(engine, wasm).unwrap();
    let exports: Vec<&str> = module.exports().map(|e| e.name()).collect();
    assert!(exports.contains(&"_start"), "{exports:?}");
    assert!(exports.contains(&"memory"), "{exports:?}");
    for import in module.imports() {
        assert_eq!(
            import.module(),
            "wasi_snapshot_preview1",
            "{}",
            import.name()
        );
    }
}

#[track_caller]
fn failed(compiled: Compiled) -> (i32, String, u64) {
    match compiled {
        Compiled::Failed {
            return_code,
            stderr,
            compile_ms,
        } => (return_code, stderr, compile_ms),
        Compiled::Module { .. } => panic!("compiled, but should not have"),
    }
}

/// A distinct comment, so each call compiles instead of hitting the cache.
fn fresh(source: &str) -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("// {n} {:?}\n{source}", Instant::now())
}

const HELLO_C: &str = "#include <stdio.h>\nint main(void) { printf(\"hello\\n\"); return 0; }\n";
const HELLO_CPP: &str =
    "#include <iostream>\nint main() { std::cout << \"hello\" << std::endl; return 0; }\n";
const CODEFORCES: &str = r#"#include <bits/stdc++.h>
using namespace std;
int main() {
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    int n;
    cin >> n;
    vector<long long> a(n);
    for (auto& x : a) cin >> x;
    sort(a.begin(), a.end());
    map<long long, int> seen;
    for (auto x : a) seen[x]++;
    cout << accumulate(a.begin(), a.end(), 0LL) << ' ' << seen.size() << '\n';
}
"#;

#[test]
fn confinement_is_active_on_this_host() {
    let confinement = compiler().confinement();
    eprintln!("confinement: {confinement:?}; {}", compiler().version());
    assert!(
        confinement.filesystem(),
        "no Landlock: the compiler could read the host's files ({confinement:?})"
    );
    assert!(
        confinement.network(),
        "the compiler has network ({confinement:?})"
    );
    assert!(confinement.rlimits);
    assert!(compiler().version().starts_with("zig 0.17.0 (clang "));
}

#[test]
fn without_namespaces_landlock_denies_tcp_and_files_still() {
    use grpo_sandbox::guest::cc::CompilerOptions;
    let compiler = Compiler::with_options(
        compiler().toolchain().clone(),
        CompilerOptions {
            namespaces: false,
            ..CompilerOptions::default()
        },
    );
    let confinement = compiler.confinement();
    assert!(
        !confinement.user_ns && !confinement.net_ns,
        "{confinement:?}"
    );
    assert!(confinement.landlock_net, "{confinement:?}");
    // Without namespaces, the seccomp filter still leaves the compiler no socket at all.
    assert!(confinement.seccomp_net, "{confinement:?}");
    let limits = CompileLimits::default();
    module(
        rt().block_on(compiler.compile(CLang::C, &fresh(HELLO_C), &limits))
            .unwrap(),
    );
    let passwd = passwd_line();
    let compiled = rt()
        .block_on(compiler.compile(CLang::C, &fresh("#include \"/etc/passwd\"\n"), &limits))
        .unwrap();
    let (_, stderr, _) = failed(compiled);
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(!stderr.contains(&passwd), "{stderr}");
}

#[test]
fn c_and_cpp_hello_compile_to_wasm() {
    let (wasm, _, _) = module(compile(CLang::C, HELLO_C));
    assert!(wasm.windows(6).any(|w| w == b"_start"), "no _start export");
    let (wasm, _, _) = module(compile(CLang::Cpp, HELLO_CPP));
    assert!(wasm.windows(6).any(|w| w == b"_start"), "no _start export");
}

#[test]
fn bits_stdcxx_and_a_codeforces_solution_compile() {
    module(compile(CLang::Cpp, &fresh(CODEFORCES)));
    // C++20 and deep recursion (the stack is 8 MiB).
    module(compile(
        CLang::Cpp,
        "#include <bits/stdc++.h>\nint depth(int n) { return n ? 1 + depth(n - 1) : 0; }\n\
         int main() { auto v = std::views::iota(0, 5); std::printf(\"%d %d\\n\", depth(100000), \
         (int)std::ranges::distance(v)); }\n",
    ));
}

#[test]
fn a_syntax_error_is_a_failed_compile_naming_the_source() {
    let (code, stderr, _) = failed(compile(CLang::C, "int main(void) { return 0 }\n"));
    assert_ne!(code, 0);
    assert!(stderr.contains("main.c:1:"), "{stderr}");
    assert!(stderr.contains("error"), "{stderr}");
    let (code, stderr, _) = failed(compile(CLang::Cpp, "int main() { undeclared(); }\n"));
    assert_ne!(code, 0);
    assert!(stderr.contains("main.cpp:1:"), "{stderr}");
    assert!(!stderr.contains("/tmp/"), "a host path leaked: {stderr}");
}

#[test]
fn direct_steps_build_the_drivers_modules_and_verdicts() {
    use grpo_sandbox::guest::cc::CompilerOptions;
    let direct = compiler();
    assert!(
        direct.compiles_directly(),
        "the captured steps were refused"
    );
    let driver = Compiler::with_options(
        direct.toolchain().clone(),
        CompilerOptions {
            direct: false,
            ..CompilerOptions::default()
        },
    );
    let both = |lang, source: &str| {
        let source = fresh(source);
        let limits = CompileLimits::default();
        let a = rt()
            .block_on(direct.compile(lang, &source, &limits))
            .unwrap();
        let b = rt()
            .block_on(driver.compile(lang, &source, &limits))
            .unwrap();
        (a, b)
    };
    // Modules: byte for byte (C, C++ with single headers, C++ with the precompiled header,
    // a program that renames a C library name).
    for (lang, source) in [
        (CLang::C, HELLO_C),
        (CLang::Cpp, HELLO_CPP),
        (CLang::Cpp, CODEFORCES),
        (
            CLang::C,
            "#include <stdio.h>\nint abs(int x) { return x < 0 ? -x : x; }\n\
                    int main(void) { printf(\"%d\\n\", abs(-3)); }\n",
        ),
    ] {
        let (a, b) = both(lang, source);
        assert_eq!(module(a).0, module(b).0, "{source}");
    }
    // A compile error: the same message and code.
    let (a, b) = both(CLang::C, "int main(void) { return undeclared; }\n");
    let (a, b) = (failed(a), failed(b));
    assert_eq!((a.0, &a.1), (b.0, &b.1));
    assert!(
        a.1.contains("main.c:2:") && a.1.contains("undeclared"),
        "{}",
        a.1
    );
    // A link error: the same code, both naming the missing function and no host path.
    let (a, b) = both(
        CLang::C,
        "int missing(void);\nint main(void) { return missing(); }\n",
    );
    let (a, b) = (failed(a), failed(b));
    assert_eq!(a.0, b.0);
    for stderr in [&a.1, &b.1] {
        assert!(stderr.contains("undefined symbol: missing"), "{stderr}");
        assert!(
            !stderr.contains("/root/") && !stderr.contains("/tmp/"),
            "{stderr}"
        );
    }
}

#[test]
fn exceptions_are_a_clear_compile_error() {
    let (_, stderr, _) = failed(compile(
        CLang::Cpp,
        "int main() { try { throw 1; } catch (int) { return 1; } }\n",
    ));
    assert!(stderr.contains("exceptions"), "{stderr}");
}

#[test]
fn a_repeated_source_is_served_from_the_cache() {
    let source = fresh(HELLO_CPP);
    let (first, cached, _) = module(compile(CLang::Cpp, &source));
    assert!(!cached);
    let (second, cached, compile_ms) = module(compile(CLang::Cpp, &source));
    assert!(cached);
    assert_eq!(compile_ms, 0);
    assert_eq!(first, second);
    // The same text as C is another key.
    let (_, cached, _) = module(compile(CLang::C, &fresh(HELLO_C)));
    assert!(!cached);
}

#[test]
fn the_disk_cache_serves_a_new_compiler() {
    use grpo_sandbox::guest::cc::CompilerOptions;
    let options = CompilerOptions {
        disk_cache: true,
        ..CompilerOptions::default()
    };
    let toolchain = compiler().toolchain().clone();
    let source = fresh(HELLO_C);
    let limits = CompileLimits::default();
    let first = Compiler::with_options(toolchain.clone(), options.clone());
    let (wasm, cached, _) = module(
        rt().block_on(first.compile(CLang::C, &source, &limits))
            .unwrap(),
    );
    assert!(!cached);
    let second = Compiler::with_options(toolchain, options);
    let (again, cached, _) = module(
        rt().block_on(second.compile(CLang::C, &source, &limits))
            .unwrap(),
    );
    assert!(cached);
    assert_eq!(wasm, again);
}

#[test]
fn a_group_of_identical_sources_compiles_once() {
    let source = fresh(HELLO_C);
    let compiler = compiler();
    let results = rt().block_on(async {
        let limits = CompileLimits::default();
        let jobs = (0..4).map(|_| compiler.compile(CLang::C, &source, &limits));
        futures::future::join_all(jobs).await
    });
    let cached = results
        .into_iter()
        .map(|r| module(r.unwrap()).1)
        .filter(|&c| c)
        .count();
    assert_eq!(cached, 3);
}

/// Short limits so hostile sources end fast.
fn hostile_limits() -> CompileLimits {
    CompileLimits {
        cpu_s: 3,
        wall_ms: 8_000,
        ..CompileLimits::default()
    }
}

/// Compiles a hostile source; it must fail within the wall limit and not show `secrets`.
#[track_caller]
fn refused(lang: CLang, source: &str, secrets: &[&str]) -> String {
    let limits = hostile_limits();
    compiler(); // installed and warm before the clock starts
    let start = Instant::now();
    let compiled = compile_with(lang, &fresh(source), &limits);
    let elapsed = start.elapsed();
    assert!(
        elapsed < Duration::from_millis(limits.wall_ms + 2_000),
        "took {elapsed:?}"
    );
    let (code, stderr, _) = failed(compiled);
    eprintln!("--- exit {code} in {elapsed:?}:\n{stderr}");
    assert_ne!(code, 0);
    for secret in secrets {
        assert!(!stderr.contains(secret), "leaked {secret:?}: {stderr}");
    }
    stderr
}

/// Writes `secret` into a header at `path` (outside the job) and checks that a program
/// including it by absolute path fails to compile without showing any of it.
fn canary_include_is_refused(path: &std::path::Path, secret: &str) {
    std::fs::write(path, format!("{secret} {secret}\n")).unwrap();
    let include = format!("#include \"{}\"\nint main(void){{}}\n", path.display());
    let stderr = refused(CLang::C, &include, &[secret]);
    assert!(!stderr.contains("CANARY"), "{stderr}");
}

fn passwd_line() -> String {
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|s| s.lines().next().map(str::to_owned))
        .unwrap_or_else(|| "root:x:0:0".to_owned())
}

#[test]
fn hostile_include_of_host_files_is_denied() {
    let passwd = passwd_line();
    let stderr = refused(CLang::C, "#include \"/etc/passwd\"\n", &[&passwd, "root:"]);
    assert!(stderr.contains("/etc/passwd"), "{stderr}");
    refused(CLang::C, "#include </dev/zero>\nint main(void){}\n", &[]);
    refused(CLang::C, "#include </dev/random>\nint main(void){}\n", &[]);
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
    refused(
        CLang::Cpp,
        "#include \"/proc/self/environ\"\nint main(){}\n",
        &["PATH=", &format!("HOME={home}")],
    );
    refused(
        CLang::C,
        "#include \"../../../../etc/passwd\"\n",
        &[&passwd],
    );
}

#[test]
fn hostile_embed_and_incbin_cannot_pull_host_files_in() {
    let hostname = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let hostname = hostname.trim();
    let mut secrets = vec!["root:"];
    if hostname.len() >= 6 {
        // (a short name like `vm` could appear in any message)
        secrets.push(hostname);
    }
    refused(
        CLang::C,
        "static const char h[] = {\n#embed \"/etc/hostname\"\n, 0};\n\
         int main(void) { return h[0]; }\n",
        &secrets,
    );
    // `.incbin` reads at assembly time: either it fails, or the module holds no passwd bytes.
    let source = fresh(
        "__asm__(\".section .data.p,\\\"\\\",@\\n.incbin \\\"/etc/passwd\\\"\\n\");\n\
         int main(void) { return 0; }\n",
    );
    match compile_with(CLang::C, &source, &hostile_limits()) {
        Compiled::Module { wasm, .. } => {
            let passwd = passwd_line();
            assert!(
                !wasm.windows(passwd.len()).any(|w| w == passwd.as_bytes()),
                "/etc/passwd is in the module"
            );
        }
        Compiled::Failed { stderr, .. } => {
            eprintln!("--- .incbin:\n{stderr}");
            assert!(!stderr.contains("root:"), "{stderr}");
        }
    }
}

#[test]
fn host_paths_do_not_exist_for_the_compiler() {
    if !compiler().confinement().mount_ns {
        eprintln!("no mount namespace here: host paths' existence is visible (documented)");
        return;
    }
    for path in ["/etc/passwd", "/etc/hostname", "/home", "/root/.bashrc"] {
        let source =
            format!("#if __has_include(\"{path}\")\n#error EXISTS\n#else\n#error ABSENT\n#endif\n");
        let (_, stderr, _) = failed(compile(CLang::C, &fresh(&source)));
        assert!(stderr.contains("ABSENT"), "{path}: {stderr}");
    }
    // What the compiler needs is still there.
    let source =
        "#if __has_include(<stdio.h>) && __has_include(__FILE__)\n#error PRESENT\n#endif\n";
    let (_, stderr, _) = failed(compile(CLang::C, &fresh(source)));
    assert!(stderr.contains("PRESENT"), "{stderr}");
}

#[test]
fn a_canary_outside_the_job_is_never_seen() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "CANARY-7f3a9c1e-do-not-leak";
    let canary = dir.path().join("secret.h");
    canary_include_is_refused(&canary, secret);
    let embed = format!(
        "static const char s[] = {{\n#embed \"{}\"\n, 0}};\nint main(void){{ return s[0]; }}\n",
        canary.display()
    );
    refused(CLang::C, &embed, &[secret]);
}

#[test]
fn another_jobs_directory_in_the_shared_view_is_never_seen() {
    // With shared namespaces, every compile's job directory is in every compile's view (the
    // jobs directory is bound in once); Landlock must still keep each to its own.
    let compiler = compiler();
    let Some(jobs) = compiler.jobs_dir() else {
        assert!(!compiler.confinement().shared_ns);
        return;
    };
    assert!(compiler.confinement().shared_ns);
    let other = tempfile::Builder::new()
        .prefix("grpo-cc-")
        .tempdir_in(jobs)
        .unwrap();
    let secret = "CANARY-2b81d0e4-another-job";
    canary_include_is_refused(&other.path().join("main.h"), secret);
    // Nor by a path relative to its own job directory.
    let name = other.path().file_name().unwrap().to_string_lossy();
    let relative = format!("#include \"../{name}/main.h\"\nint main(void){{}}\n");
    refused(CLang::C, &relative, &[secret]);
}

#[test]
fn a_dropped_compiler_leaves_no_directory_behind() {
    use grpo_sandbox::guest::cc::CompilerOptions;
    let own = Compiler::with_options(compiler().toolchain().clone(), CompilerOptions::default());
    let Some(dir) = own
        .jobs_dir()
        .and_then(|jobs| jobs.parent())
        .map(|d| d.to_path_buf())
    else {
        return;
    };
    let limits = CompileLimits::default();
    module(
        rt().block_on(own.compile(CLang::C, &fresh(HELLO_C), &limits))
            .unwrap(),
    );
    assert!(dir.is_dir());
    drop(own);
    assert!(!dir.exists(), "{} is still there", dir.display());
}

/// A source whose preprocessing takes 2^40 steps (and slowly grows clang's memory).
fn macro_bomb() -> String {
    let mut source = String::from("#define A0 ;\n");
    for i in 1..=40 {
        source.push_str(&format!("#define A{i} A{p} A{p}\n", p = i - 1));
    }
    source.push_str("A40\nint main(void) { return 0; }\n");
    source
}

#[test]
fn hostile_compile_time_bombs_end_within_the_limits() {
    // Deep template recursion: clang's depth limit.
    refused(
        CLang::Cpp,
        "template <int N> struct B { static const int v = B<N + 1>::v; };\n\
         int main() { return B<0>::v; }\n",
        &[],
    );
    // An infinite constexpr loop: clang's step limit.
    refused(
        CLang::Cpp,
        "constexpr int spin() { int i = 0; while (true) { ++i; } return i; }\n\
         constexpr int x = spin();\nint main() { return x; }\n",
        &[],
    );
    // Including itself: the nesting limit.
    refused(CLang::C, "#include __FILE__\nint main(void){}\n", &[]);
    // 2^40 empty declarations from 41 macros: stopped by the CPU or the memory limit.
    let stderr = refused(CLang::C, &macro_bomb(), &[]);
    assert!(stderr.contains("[compiler]"), "{stderr}");
}

#[test]
fn a_huge_initialised_array_is_stopped_by_a_limit() {
    // 256 MiB of non-zero data (zeros would not be stored): clang runs out of its 2 GiB of
    // address space building it (100 MiB takes it past the CPU limit instead).
    let stderr = refused(
        CLang::C,
        "static char big[1 << 28] = {[0 ... (1 << 28) - 1] = 7};\n\
         int main(void) { return big[12345]; }\n",
        &[],
    );
    assert!(stderr.contains("[compiler]"), "{stderr}");
}

#[test]
fn the_wall_clock_limit_kills_the_compiler() {
    let limits = CompileLimits {
        cpu_s: 60,
        wall_ms: 1_500,
        ..CompileLimits::default()
    };
    compiler();
    let start = Instant::now();
    let compiled = compile_with(CLang::C, &fresh(&macro_bomb()), &limits);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    let (code, stderr, _) = failed(compiled);
    assert_eq!(code, TIMEOUT_CODE, "{stderr}");
    assert!(stderr.contains("wall-clock limit"), "{stderr}");
}

/// Compile times through the whole path (job dir, confinement, zig), medians of fresh sources.
/// Run with `cargo test -p grpo-rewards --test all cc::compile_speed -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check"]
fn compile_speed() {
    use grpo_sandbox::guest::cc::CompilerOptions;
    let with_pch = compiler();
    let without_pch = Compiler::with_options(
        with_pch.toolchain().clone(),
        CompilerOptions {
            use_pch: false,
            ..CompilerOptions::default()
        },
    );
    let median = |compiler: &Compiler, lang: CLang, source: &str| {
        let mut times: Vec<u128> = (0..5)
            .map(|_| {
                let start = Instant::now();
                let compiled = rt()
                    .block_on(compiler.compile(lang, &fresh(source), &CompileLimits::default()))
                    .unwrap();
                let ms = start.elapsed().as_millis();
                module(compiled);
                ms
            })
            .collect();
        times.sort();
        times[2]
    };
    let c = median(&with_pch, CLang::C, HELLO_C);
    let cpp = median(&with_pch, CLang::Cpp, HELLO_CPP);
    let bits_no_pch = median(&without_pch, CLang::Cpp, CODEFORCES);
    let bits_pch = median(&with_pch, CLang::Cpp, CODEFORCES);
    let source = fresh(CODEFORCES);
    module(
        rt().block_on(with_pch.compile(CLang::Cpp, &source, &CompileLimits::default()))
            .unwrap(),
    );
    let start = Instant::now();
    for _ in 0..1000 {
        let hit = rt().block_on(with_pch.compile(CLang::Cpp, &source, &CompileLimits::default()));
        assert!(matches!(hit, Ok(Compiled::Module { cached: true, .. })));
    }
    let hit_us = start.elapsed().as_micros() / 1000;
    eprintln!(
        "C hello {c} ms; C++ iostream {cpp} ms; C++ <bits/stdc++.h> {bits_no_pch} ms, \
         with the precompiled header {bits_pch} ms; cache hit {hit_us} us"
    );
}

/// The warm-up on a cold cache: a fresh toolchain directory (from `GRPO_ZIG_WHEEL` when set,
/// else downloaded), its report, and the compiler processes' CPU time. A second compiler on
/// that toolchain then finds it warm and compiles without building anything. Run with
/// `cargo test -p grpo-sandbox --test all cc::warm_up_from_a_cold_cache -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: downloads or unpacks the toolchain and builds its libraries (a minute or more)"]
fn warm_up_from_a_cold_cache() {
    use grpo_sandbox::guest::cc::Toolchain;
    fn children_cpu_s() -> f64 {
        // SAFETY: rusage is plain data, for which all zeros is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage only fills the struct it is given.
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        s(usage.ru_utime) + s(usage.ru_stime)
    }
    let dir = tempfile::tempdir().unwrap();
    let report = match std::env::var_os("GRPO_ZIG_WHEEL") {
        Some(wheel) => Toolchain::install_from_file(dir.path(), wheel.as_ref(), &mut |_| {}),
        None => Toolchain::install(dir.path(), &mut |_| {}),
    }
    .unwrap();
    let cpu = children_cpu_s();
    let start = Instant::now();
    let compiler = Compiler::new(report.toolchain.clone());
    let warm = rt().block_on(compiler.warm_up()).unwrap();
    eprintln!(
        "cold warm-up: {warm:?}; wall {:?}, compiler CPU {:.1} s",
        start.elapsed(),
        children_cpu_s() - cpu
    );
    let again = Compiler::new(report.toolchain);
    let start = Instant::now();
    let compiled = rt()
        .block_on(again.compile(CLang::Cpp, &fresh(CODEFORCES), &CompileLimits::default()))
        .unwrap();
    module(compiled);
    eprintln!("a new compiler's first compile: {:?}", start.elapsed());
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

/// A compiler of its own on the shared, warm toolchain, so that its stats count only the
/// compiles of one test.
fn own_compiler(use_pch: bool) -> Compiler {
    use grpo_sandbox::guest::cc::CompilerOptions;
    let options = CompilerOptions {
        use_pch,
        ..CompilerOptions::default()
    };
    Compiler::with_options(compiler().toolchain().clone(), options)
}

fn compile_on(compiler: &Compiler, source: &str) -> Compiled {
    rt().block_on(compiler.compile(CLang::Cpp, source, &CompileLimits::default()))
        .unwrap()
}

fn stats(compiles: u64, with_pch: u64, retried_without_pch: u64) -> CompileStats {
    CompileStats {
        compiles,
        with_pch,
        retried_without_pch,
    }
}

/// A HumanEval-X style solution: a function, then its test as asserts, each part with its
/// own includes.
const FUNCTION_CPP: &str = r#"#include<stdio.h>
#include<math.h>
#include<vector>
#include<string>
using namespace std;
#include<algorithm>
int longest_run(vector<int> xs){
    int best = 0, run = 0;
    for (size_t i = 0; i < xs.size(); i++) {
        run = (i > 0 && xs[i] == xs[i - 1]) ? run + 1 : 1;
        best = max(best, run);
    }
    return best;
}
#undef NDEBUG
#include<assert.h>
int main(){
    assert(longest_run({1, 1, 2, 2, 2, 3}) == 3);
    assert(longest_run({}) == 0);
}
"#;

#[test]
fn ordinary_standard_includes_use_the_precompiled_header() {
    let compiler = own_compiler(true);
    let source = fresh(FUNCTION_CPP);
    let (_, cached, _) = module(compile_on(&compiler, &source));
    assert!(!cached);
    assert_eq!(compiler.stats(), stats(1, 1, 0));
    let (_, cached, _) = module(compile_on(&compiler, &source));
    assert!(cached);
    assert_eq!(compiler.stats(), stats(1, 1, 0));
}

/// `<any>` declares `std::any`: with every standard header visible, the program's global
/// `any` is ambiguous under `using namespace std;`. It compiles again without the header, and
/// the second time comes from the cache.
#[test]
fn a_global_that_clashes_with_the_whole_library_compiles_without_it() {
    let compiler = own_compiler(true);
    let clash = fresh(
        "#include <iostream>\nusing namespace std;\nint any = 3;\n\
         int main() { cout << any + 1 << endl; }\n",
    );
    module(compile_on(&compiler, &clash));
    assert_eq!(compiler.stats(), stats(2, 1, 1));
    let (_, cached, _) = module(compile_on(&compiler, &clash));
    assert!(cached);
    assert_eq!(compiler.stats(), stats(2, 1, 1));
}

/// A source that does not compile reports the compile without the header, word for word as
/// a compiler that never uses it.
#[test]
fn a_compile_error_is_the_one_without_the_precompiled_header() {
    let source = fresh(
        "#include <vector>\n#include <string>\nusing namespace std;\n\
         int main() { vector<int> v; string s = v; return undeclared; }\n",
    );
    let with = own_compiler(true);
    let (code, stderr, _) = failed(compile_on(&with, &source));
    assert_eq!(with.stats(), stats(2, 1, 1));
    let without = own_compiler(false);
    let (plain_code, plain_stderr, _) = failed(compile_on(&without, &source));
    assert_eq!(without.stats(), stats(1, 0, 0));
    assert_eq!((code, &stderr), (plain_code, &plain_stderr));
    assert!(stderr.contains("main.cpp:5:"), "{stderr}"); // after the line `fresh` adds
}

#[test]
fn user_and_unknown_headers_and_std_names_keep_the_precompiled_header_off() {
    let compiler = own_compiler(true);
    let user = fresh("#include <vector>\n#include \"solution.h\"\nint main() {}\n");
    let (_, stderr, _) = failed(compile_on(&compiler, &user));
    assert!(stderr.contains("solution.h"), "{stderr}");
    let unknown = fresh("#include <vector>\n#include <mutex>\nint main() {}\n");
    module(compile_on(&compiler, &unknown));
    // With <numeric> in view, `gcd(a, b)` on `long long` would call `std::gcd`.
    let own_gcd = fresh(
        "#include <cstdio>\nusing namespace std;\nint gcd(int a, int b) { return a + b; }\n\
         int main() { long long a = 4, b = 6; printf(\"%d\\n\", gcd(a, b)); }\n",
    );
    module(compile_on(&compiler, &own_gcd));
    assert_eq!(compiler.stats(), stats(3, 0, 0));
}
