//! JavaScript (QuickJS-NG with the Node.js prelude) and TypeScript end to end: how programs
//! read stdin and write stdout, exit codes, limits, and hostile programs.

use crate::common::{quick, rt, sandbox};
use grpo_rewards::{RunResult, RunStatus};
use grpo_sandbox::engine::files::JobFiles;
use grpo_sandbox::{Limits, RunRequest};
use grpo_tasks::Language;

fn js_with(program: &str, stdin: &str, limits: &Limits) -> RunResult {
    let request = RunRequest::new(Language::Javascript, program)
        .with_stdin(stdin.as_bytes())
        .with_limits(limits.clone());
    let output = rt().block_on(sandbox().run_program(&request)).unwrap();
    output.run.expect("JavaScript has no compile step")
}

fn js(program: &str, stdin: &str) -> RunResult {
    js_with(program, stdin, &quick())
}

fn ok(program: &str, stdin: &str) -> String {
    let run = js(program, stdin);
    assert_eq!(run.status, RunStatus::Ok, "{run:?}");
    assert_eq!(run.exit_code, Some(0), "{run:?}");
    run.stdout
}

#[test]
fn hello_and_version() {
    assert_eq!(ok("console.log('hello', 1 + 2)", ""), "hello 3\n");
    let version = rt().block_on(sandbox().quickjs_version()).unwrap();
    assert!(
        version.chars().next().is_some_and(|c| c.is_ascii_digit()),
        "{version}"
    );
}

#[test]
fn stdin_the_ways_solutions_read_it() {
    let input = "3\n1 2 3\n";
    let sum = "console.log(nums.reduce((a, b) => a + b, 0))";
    let ways = [
        format!(
            "const lines = require('fs').readFileSync(0, 'utf8').trim().split('\\n'); const nums = lines[1].split(' ').map(Number); {sum}"
        ),
        format!(
            "const data = require('fs').readFileSync('/dev/stdin').toString().split('\\n'); const nums = data[1].split(' ').map(Number); {sum}"
        ),
        format!(
            "const rl = require('readline').createInterface({{ input: process.stdin }}); const got = []; rl.on('line', (l) => got.push(l)); rl.on('close', () => {{ const nums = got[1].split(' ').map(Number); {sum}; }});"
        ),
        format!(
            "let s = ''; process.stdin.on('data', (c) => (s += c)); process.stdin.on('end', () => {{ const nums = s.split('\\n')[1].split(' ').map(Number); {sum}; }});"
        ),
        format!(
            "let input = ''; process.stdin.on('readable', () => {{ let c; while ((c = process.stdin.read()) !== null) input += c; }}); process.stdin.on('end', () => {{ const nums = input.split('\\n')[1].split(' ').map(Number); {sum}; }});"
        ),
        format!(
            "(async () => {{ const rl = require('node:readline').createInterface({{ input: process.stdin }}); const got = []; for await (const l of rl) got.push(l); const nums = got[1].split(' ').map(Number); {sum}; }})();"
        ),
    ];
    for way in &ways {
        assert_eq!(ok(way, input), "6\n", "{way}");
    }
}

#[test]
fn process_stdout_write_and_exit_codes() {
    assert_eq!(
        ok(
            "process.stdout.write('a'); process.stdout.write('b\\n')",
            ""
        ),
        "ab\n"
    );
    let run = js(
        "console.log('before'); process.exit(3); console.log('after')",
        "",
    );
    assert_eq!(
        (run.status, run.exit_code),
        (RunStatus::Error, Some(3)),
        "{run:?}"
    );
    assert_eq!(run.stdout, "before\n");
    let run = js("process.exitCode = 2; console.log('x')", "");
    assert_eq!(run.exit_code, Some(2), "{run:?}");
}

#[test]
fn an_uncaught_exception_exits_1_with_its_message() {
    let run = js("console.log('partial'); throw new TypeError('boom')", "");
    assert_eq!(
        (run.status, run.exit_code),
        (RunStatus::Error, Some(1)),
        "{run:?}"
    );
    assert_eq!(run.stdout, "partial\n");
    assert!(
        run.stderr.contains("TypeError") && run.stderr.contains("boom"),
        "{run:?}"
    );
    let run = js("setTimeout(() => { throw new Error('late') }, 1)", "");
    assert_eq!(run.exit_code, Some(1), "{run:?}");
    assert!(run.stderr.contains("late"), "{run:?}");
    let run = js("let x = ;", "");
    assert_eq!(run.exit_code, Some(1), "{run:?}");
    assert!(run.stderr.contains("SyntaxError"), "{run:?}");
}

#[test]
fn modules_promises_and_timers_run_to_the_end() {
    assert_eq!(
        ok(
            "setTimeout(() => console.log('t'), 5); Promise.resolve().then(() => console.log('p')); console.log('s')",
            ""
        ),
        "s\np\nt\n"
    );
    assert_eq!(
        ok(
            "const v = await Promise.resolve(41); console.log(v + 1); export {}",
            ""
        ),
        "42\n"
    );
}

/// A `.js` file runs as Node.js runs it: CommonJS in sloppy mode, unless it needs ES module
/// syntax (then strict, as a module).
#[test]
fn scripts_are_sloppy_and_modules_strict() {
    // Assigning an undeclared name creates a global; `this` in a plain call is the global
    // object; `var` at top level is a property of it.
    assert_eq!(
        ok(
            "count = 2; count += 1; function f() { return this; }\nvar top = 5;\nconsole.log(count, f() === globalThis, globalThis.top)",
            ""
        ),
        "3 true 5\n"
    );
    // Legacy syntax a sloppy script may use.
    assert_eq!(ok("with ({a: 4}) { console.log(a * 2); }", ""), "8\n");
    // Module syntax makes it a module, strict: the same assignment throws.
    let run = js(
        "export const k = 1;\nundeclared = 3;\nconsole.log(undeclared)",
        "",
    );
    assert_eq!(run.exit_code, Some(1), "{run:?}");
    assert!(run.stderr.contains("ReferenceError"), "{run:?}");
    // Top-level await alone makes it a module too.
    assert_eq!(
        ok(
            "const x = await Promise.resolve(20); console.log(x + 1)",
            ""
        ),
        "21\n"
    );
    // A real syntax error is still reported as one.
    let run = js("function (", "");
    assert_eq!(run.exit_code, Some(1), "{run:?}");
    assert!(run.stderr.contains("SyntaxError"), "{run:?}");
}

#[test]
fn util_promisify_inherits_and_deep_equality() {
    let program = "const util = require('util');\n\
        const double = util.promisify((n, cb) => setTimeout(() => cb(null, n * 2), 1));\n\
        const fail = util.promisify((cb) => cb(new Error('nope')));\n\
        (async () => {\n\
          console.log(await double(21));\n\
          try { await fail(); } catch (e) { console.log('caught', e.message); }\n\
          function A() {} A.prototype.hi = () => 'hi';\n\
          function B() {} util.inherits(B, A);\n\
          console.log(new B().hi(), B.super_ === A);\n\
          console.log(util.isDeepStrictEqual({a: [1, 2]}, {a: [1, 2]}), util.isDeepStrictEqual([1], ['1']));\n\
        })();";
    assert_eq!(ok(program, ""), "42\ncaught nope\nhi true\ntrue false\n");
    let run = js("require('util').promisify(3)", "");
    assert!(run.stderr.contains("must be of type function"), "{run:?}");
}

#[test]
fn promisified_timers_resolve_in_order_with_their_values() {
    // Node's custom promisify: `setTimeout[util.promisify.custom]` is `(ms, value)` resolving
    // with `value`, `setImmediate`'s is `(value)`; `timers/promises` holds the same functions.
    let program = "const util = require('util');\n\
        const sleep = util.promisify(setTimeout);\n\
        const immediate = util.promisify(setImmediate);\n\
        console.log(util.promisify.custom === Symbol.for('nodejs.util.promisify.custom'),\n\
          sleep === setTimeout[util.promisify.custom], typeof immediate);\n\
        (async () => {\n\
          const started = Date.now();\n\
          const order = [];\n\
          await Promise.all([\n\
            sleep(40, 'late').then((v) => order.push(v)),\n\
            sleep(15).then((v) => order.push(v)),\n\
            immediate('now').then((v) => order.push(v)),\n\
          ]);\n\
          console.log(order.join(','), Date.now() - started >= 40);\n\
          const { setTimeout: delay, setImmediate: soon } = require('node:timers/promises');\n\
          console.log(await delay(5, 'tp'), await soon(7), delay === sleep);\n\
          setTimeout((a, b) => console.log('args', a, b), 1, 'x', 'y');\n\
        })();";
    assert_eq!(
        ok(program, ""),
        "true true function\nnow,,late true\ntp 7 true\nargs x y\n"
    );
    // ES imports of the timer modules, in a module (top-level await).
    let program = "import { setTimeout as sleep } from 'timers/promises';\n\
        import { promisify } from 'node:util';\n\
        console.log(await sleep(1, 'a'), await promisify(setImmediate)('b'));";
    assert_eq!(ok(program, ""), "a b\n");
    // A function that carries a custom form that is not a function is refused, as in Node.
    let run = js(
        "const util = require('util'); function f(cb) {} f[util.promisify.custom] = 1; util.promisify(f)",
        "",
    );
    assert_eq!(run.exit_code, Some(1), "{run:?}");
    assert!(run.stderr.contains("util.promisify.custom"), "{run:?}");
    let run = js("setTimeout('console.log(1)', 1)", "");
    assert!(run.stderr.contains("must be of type function"), "{run:?}");
}

/// Runs `program` in `language` with a `time_limit_ms` limit and checks that it ends as a
/// timeout, having printed `start` and not `done`.
fn times_out(language: Language, program: &str, time_limit_ms: u64) {
    let limits = Limits {
        time_limit_ms,
        ..quick()
    };
    let request = RunRequest::new(language, program).with_limits(limits);
    let output = rt().block_on(sandbox().run_program(&request)).unwrap();
    let run = output.run.expect("no compile step");
    assert_eq!(run.status, RunStatus::Timeout, "{language:?}: {run:?}");
    assert_eq!(run.exit_code, None, "{run:?}");
    assert_eq!(run.stdout, "start\n", "{run:?}");
}

#[test]
fn a_promisified_sleep_past_the_limit_is_a_timeout() {
    // A run's waits count toward its time limit: a 20 s sleep under a 1 s limit is a timeout.
    let sleep = "const util = require('util');\n\
        const sleep = util.promisify(setTimeout);\n\
        (async () => { console.log('start'); await sleep(20000); console.log('done'); })();";
    times_out(Language::Javascript, sleep, 1_000);
    let typed = "const util = require('util');\n\
        const sleep: (ms: number) => Promise<void> = util.promisify(setTimeout);\n\
        (async (): Promise<void> => { console.log('start'); await sleep(20000); console.log('done'); })();";
    times_out(Language::Typescript, typed, 1_000);
    let timers = "import { setTimeout as delay } from 'node:timers/promises';\n\
        console.log('start');\n\
        await delay(20000);\n\
        console.log('done');";
    times_out(Language::Javascript, timers, 1_000);
}

/// SandboxFusion's runner cases for `nodejs` and `typescript`: a program that awaits a
/// promisified `setTimeout` longer than its run timeout comes back as a timeout, not an error.
#[test]
fn sandboxfusion_style_nodejs_and_typescript_timeouts() {
    let nodejs = "const util = require('util');\n\
        const sleep = util.promisify(setTimeout);\n\
        async function main() {\n\
          console.log('start');\n\
          await sleep(2000);\n\
          console.log('done');\n\
        }\n\
        main();";
    times_out(Language::Javascript, nodejs, 500);
    let typescript = "import { promisify } from 'util';\n\
        const sleep = promisify(setTimeout);\n\
        async function main(): Promise<void> {\n\
          console.log('start');\n\
          await sleep(2000);\n\
          console.log('done');\n\
        }\n\
        main();";
    times_out(Language::Typescript, typescript, 500);
    // The same programs with a sleep inside the limit finish normally.
    for (language, program) in [
        (Language::Javascript, nodejs),
        (Language::Typescript, typescript),
    ] {
        let quick_sleep = program.replace("2000", "50");
        let request = RunRequest::new(language, &quick_sleep).with_limits(quick());
        let output = rt().block_on(sandbox().run_program(&request)).unwrap();
        let run = output.run.expect("no compile step");
        assert_eq!(run.status, RunStatus::Ok, "{language:?}: {run:?}");
        assert_eq!(run.stdout, "start\ndone\n", "{run:?}");
    }
}

#[test]
fn assert_and_missing_modules() {
    let run = js(
        "const assert = require('assert'); assert.deepStrictEqual([1, [2]], [1, [2]]); assert.strictEqual(1, 2)",
        "",
    );
    assert_eq!(run.exit_code, Some(1), "{run:?}");
    assert!(run.stderr.contains("AssertionError"), "{run:?}");
    let run = js("require('child_process').execSync('id')", "");
    assert_eq!(run.exit_code, Some(1), "{run:?}");
    assert!(run.stderr.contains("Cannot find module"), "{run:?}");
}

#[test]
fn files_are_the_run_directory_only() {
    let files = JobFiles {
        put: vec![(
            grpo_sandbox::engine::files::JobPath::parse("in.txt").unwrap(),
            b"7\n".to_vec(),
        )],
        fetch: vec![grpo_sandbox::engine::files::JobPath::parse("out.txt").unwrap()],
    };
    let program = "const fs = require('fs'); const n = Number(fs.readFileSync('in.txt', 'utf8')); fs.writeFileSync('out.txt', String(n * 6)); console.log(fs.existsSync('/etc/passwd'), fs.existsSync('in.txt'))";
    let request = RunRequest::new(Language::Javascript, program)
        .with_limits(quick())
        .with_files(files);
    let output = rt().block_on(sandbox().run_program(&request)).unwrap();
    let (run, fetched) = (output.run.expect("no compile step"), output.files);
    assert_eq!(run.stdout, "false true\n", "{run:?}");
    assert_eq!(fetched.get("out.txt").map(Vec::as_slice), Some(&b"42"[..]));
    let run = js(
        "console.log(require('fs').readFileSync('/etc/passwd', 'utf8'))",
        "",
    );
    assert_eq!(run.exit_code, Some(1), "{run:?}");
    assert!(run.stderr.contains("ENOENT"), "{run:?}");
}

#[test]
fn hostile_programs_are_contained() {
    let run = js("while (true) {}", "");
    assert_eq!(run.status, RunStatus::Timeout, "{run:?}");
    // A memory hog, 16 MiB a push: past the 128 MiB cap well inside the CPU limit, even on a
    // loaded machine (a plain `Array(1e6).fill` a push only just got there in time).
    let run = js(
        "const a = []; while (true) a.push(new Uint8Array(1 << 24).fill(1));",
        "",
    );
    assert_eq!(run.status, RunStatus::MemoryLimit, "{run:?}");
    // Recursion as deep as Node.js allows by default (about 10,000 frames) works; deeper ends
    // the run with an error, never a crash of the interpreter.
    assert_eq!(
        ok(
            "function f(n) { return n == 0 ? 0 : 1 + f(n - 1) } console.log(f(5000))",
            ""
        ),
        "5000\n"
    );
    let run = js("function f(n) { return f(n + 1) + 1 } f(0)", "");
    assert_eq!(run.exit_code, Some(1), "{run:?}");
    assert_eq!(run.status, RunStatus::Error, "{run:?}");
    assert!(run.stderr.contains("call stack size exceeded"), "{run:?}");
    let run = js(
        "const s = 'x'.repeat(1 << 16); while (true) console.log(s)",
        "",
    );
    assert_eq!(run.status, RunStatus::OutputLimit, "{run:?}");
    assert!(run.truncated);
    let run = js("setInterval(() => {}, 1)", "");
    assert_eq!(run.status, RunStatus::Timeout, "{run:?}");
}
