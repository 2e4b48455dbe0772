//! JavaScript on QuickJS-NG: the embedded reactor module and how one run drives it.
//!
//! `runtime/quickjs.wasm.zst` is QuickJS-NG's WASI reactor build (its C API exported). A run
//! instantiates it, creates the runtime and context with the `qjs:std` and `qjs:os` modules
//! (`qjs_init_argv("qjs", "--std")`), evaluates `js_prelude.js` (the Node.js surface programs
//! use: `require('fs')`, `readline`, `process`, ...), then the program, runs the event loop
//! to the end (timers, promises, `readline` callbacks) and exits with Node's exit code: 0, 1
//! after an uncaught exception, or what `process.exit` / `process.exitCode` say.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use grpo_rewards::code::limits::Limits;
use grpo_rewards::result::RunResult;
use tokio::sync::OnceCell;
use wasmtime::{Instance, InstancePre, Memory, Store, TypedFunc};

use crate::engine::budget::Budget;
use crate::engine::files::JobFiles;
use crate::engine::host::Host;
use crate::engine::runtime;
use crate::error::{Result, SandboxError};
use crate::guest::wasip1::{self, CoreModules, Entry, ModuleGuest, P1State};

/// QuickJS-NG's reactor module, zstd-compressed (fetched by `runtime/build_quickjs.sh`).
pub static QUICKJS_WASM_ZST: &[u8] = include_bytes!("../../runtime/quickjs.wasm.zst");

/// The Node.js compatibility prelude, evaluated before every program.
pub const PRELUDE_JS: &str = include_str!("js_prelude.js");

/// `JS_EVAL_TYPE_MODULE`.
const EVAL_MODULE: i32 = 1;
/// `JS_EVAL_FLAG_COMPILE_ONLY` (with `JS_EVAL_TYPE_GLOBAL`, 0): parse and compile a classic
/// script without running it.
const EVAL_COMPILE_ONLY: i32 = 1 << 5;
/// `JS_TAG_EXCEPTION`: with NaN boxing (wasm32) a value's tag is its upper 32 bits.
const TAG_EXCEPTION: i64 = 6;

/// The module, decompressed.
pub fn quickjs_wasm() -> Result<Vec<u8>> {
    zstd::stream::decode_all(QUICKJS_WASM_ZST).map_err(|source| SandboxError::Io {
        path: "<embedded quickjs.wasm.zst>".into(),
        source,
    })
}

struct Api {
    memory: Memory,
    malloc: TypedFunc<i32, i32>,
    eval: TypedFunc<(i32, i32, i32, i32, i32), i64>,
    free_value: TypedFunc<(i32, i64), ()>,
    dump_error: TypedFunc<i32, ()>,
    await_value: TypedFunc<(i32, i64), i64>,
    loop_: TypedFunc<i32, i32>,
    get_exception: TypedFunc<i32, i64>,
}

impl Api {
    fn new(store: &mut Store<P1State>, instance: &Instance) -> wasmtime::Result<Api> {
        let memory = instance
            .get_memory(&mut *store, "memory")
            .ok_or_else(|| wasmtime::Error::msg("QuickJS exports no memory"))?;
        Ok(Api {
            memory,
            malloc: instance.get_typed_func(&mut *store, "malloc")?,
            eval: instance.get_typed_func(&mut *store, "JS_Eval")?,
            free_value: instance.get_typed_func(&mut *store, "JS_FreeValue")?,
            dump_error: instance.get_typed_func(&mut *store, "js_std_dump_error")?,
            await_value: instance.get_typed_func(&mut *store, "js_std_await")?,
            loop_: instance.get_typed_func(&mut *store, "js_std_loop")?,
            get_exception: instance.get_typed_func(&mut *store, "JS_GetException")?,
        })
    }

    /// Copies `bytes` and a NUL into guest memory; returns the address.
    async fn put(&self, store: &mut Store<P1State>, bytes: &[u8]) -> wasmtime::Result<i32> {
        let len = i32::try_from(bytes.len() + 1)?;
        let ptr = self.malloc.call_async(&mut *store, len).await?;
        if ptr == 0 {
            return Err(wasmtime::Error::msg("out of memory placing the program"));
        }
        let at = usize::try_from(ptr)?;
        self.memory.write(&mut *store, at, bytes)?;
        self.memory.write(&mut *store, at + bytes.len(), &[0])?;
        Ok(ptr)
    }

    /// Whether `source` compiles as a classic script. Node.js runs a `.js` file as CommonJS
    /// (sloppy mode: `x = 1` creates a global, `this` in a plain call is the global object)
    /// and only a program that needs ES module syntax (`import`, `export`, top-level
    /// `await`) as a module. QuickJS-NG's `JS_DetectModule` calls anything that compiles as
    /// a module a module, which would run every program in strict mode.
    async fn compiles_as_script(
        &self,
        store: &mut Store<P1State>,
        ctx: i32,
        source: &str,
        filename: &str,
    ) -> wasmtime::Result<bool> {
        let code = self.put(store, source.as_bytes()).await?;
        let name = self.put(store, filename.as_bytes()).await?;
        let len = i32::try_from(source.len())?;
        let value = self
            .eval
            .call_async(&mut *store, (ctx, code, len, name, EVAL_COMPILE_ONLY))
            .await?;
        if value >> 32 == TAG_EXCEPTION {
            // Not a script: take the parse error off the context (the module parse reports
            // its own, if any).
            let error = self.get_exception.call_async(&mut *store, ctx).await?;
            self.free_value
                .call_async(&mut *store, (ctx, error))
                .await?;
            return Ok(false);
        }
        self.free_value
            .call_async(&mut *store, (ctx, value))
            .await?;
        Ok(true)
    }

    /// Evaluates `source`; `Ok(false)` when it threw (the error is printed to stderr).
    async fn eval(
        &self,
        store: &mut Store<P1State>,
        ctx: i32,
        source: &str,
        filename: &str,
        module: bool,
    ) -> wasmtime::Result<bool> {
        let code = self.put(store, source.as_bytes()).await?;
        let name = self.put(store, filename.as_bytes()).await?;
        let len = i32::try_from(source.len())?;
        let flags = if module { EVAL_MODULE } else { 0 };
        let mut value = self
            .eval
            .call_async(&mut *store, (ctx, code, len, name, flags))
            .await?;
        if module && value >> 32 != TAG_EXCEPTION {
            // A module evaluates to a promise; wait for it (top-level await included).
            value = self
                .await_value
                .call_async(&mut *store, (ctx, value))
                .await?;
        }
        if value >> 32 == TAG_EXCEPTION {
            self.dump_error.call_async(&mut *store, ctx).await?;
            return Ok(false);
        }
        self.free_value
            .call_async(&mut *store, (ctx, value))
            .await?;
        Ok(true)
    }
}

/// The modules the prelude provides, by the names `require` takes.
const BUILTIN_MODULES: [&str; 8] = [
    "fs",
    "readline",
    "assert",
    "assert/strict",
    "util",
    "process",
    "timers",
    "timers/promises",
];

/// Rewrites one-line ES imports of the prelude's built-in modules (`import * as fs from 'fs'`,
/// `import fs from 'node:fs'`, `import { createInterface as ci } from 'readline'`) into
/// `require` calls on the same line, so line numbers stay; QuickJS has no module by those
/// names. Other imports are left alone (and fail as missing modules, as in Node.js).
pub(crate) fn require_builtin_imports(program: &str) -> std::borrow::Cow<'_, str> {
    if !program.contains("import") {
        return program.into();
    }
    let mut changed = false;
    let lines: Vec<String> = program
        .split('\n')
        .map(|line| match rewrite_import(line) {
            Some(rewritten) => {
                changed = true;
                rewritten
            }
            None => line.to_owned(),
        })
        .collect();
    if changed {
        lines.join("\n").into()
    } else {
        program.into()
    }
}

fn rewrite_import(line: &str) -> Option<String> {
    let indent = &line[..line.len() - line.trim_start().len()];
    let body = line
        .trim()
        .strip_prefix("import ")?
        .trim_end_matches(';')
        .trim_end();
    let (clause, spec) = body.rsplit_once(" from ")?;
    let spec = spec.trim();
    let quote = spec.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let name = spec.strip_prefix(quote)?.strip_suffix(quote)?;
    let bare = name.strip_prefix("node:").unwrap_or(name);
    if !BUILTIN_MODULES.contains(&bare) {
        return None;
    }
    let require = format!("require({quote}{bare}{quote})");
    let clause = clause.trim();
    let named = |braces: &str| -> Option<String> {
        let inner = braces.trim().strip_prefix('{')?.strip_suffix('}')?;
        let parts: Vec<String> = inner
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| match p.split_once(" as ") {
                Some((from, to)) => format!("{}: {}", from.trim(), to.trim()),
                None => p.to_owned(),
            })
            .collect();
        Some(format!("{{ {} }}", parts.join(", ")))
    };
    let is_ident = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    let statement = if let Some(alias) = clause.strip_prefix("* as ") {
        is_ident(alias.trim()).then(|| format!("const {} = {require};", alias.trim()))?
    } else if clause.starts_with('{') {
        format!("const {} = {require};", named(clause)?)
    } else if let Some((default, rest)) = clause.split_once(',') {
        let default = default.trim();
        if !is_ident(default) {
            return None;
        }
        let rest = rest.trim();
        let second = match rest.strip_prefix("* as ") {
            Some(alias) if is_ident(alias.trim()) => alias.trim().to_owned(),
            Some(_) => return None,
            None => named(rest)?,
        };
        format!("const {default} = {require}, {second} = {default};")
    } else if is_ident(clause) {
        format!("const {clause} = {require};")
    } else {
        return None;
    };
    Some(format!("{indent}{statement}"))
}

/// Runs `program` in a fresh QuickJS instance to its exit (always a WASI `proc_exit`).
pub(crate) async fn drive(
    store: &mut Store<P1State>,
    instance: &Instance,
    program: &str,
    filename: &str,
) -> wasmtime::Result<()> {
    let api = Api::new(store, instance)?;
    let initialize = instance.get_typed_func::<(), ()>(&mut *store, "_initialize")?;
    initialize.call_async(&mut *store, ()).await?;
    let init_argv = instance.get_typed_func::<(i32, i32), i32>(&mut *store, "qjs_init_argv")?;
    let get_context = instance.get_typed_func::<(), i32>(&mut *store, "qjs_get_context")?;

    let args = [
        api.put(store, b"qjs").await?,
        api.put(store, b"--std").await?,
    ];
    let argv = api.put(store, &[0u8; 12]).await?;
    let mut table = Vec::with_capacity(12);
    for arg in args {
        table.extend_from_slice(&arg.to_le_bytes());
    }
    table.extend_from_slice(&0i32.to_le_bytes());
    api.memory
        .write(&mut *store, usize::try_from(argv)?, &table)?;
    if init_argv.call_async(&mut *store, (2, argv)).await? != 0 {
        return Err(wasmtime::Error::msg("QuickJS did not start"));
    }
    let ctx = get_context.call_async(&mut *store, ()).await?;
    if !api.eval(store, ctx, PRELUDE_JS, "<prelude>", false).await? {
        return Err(wasmtime::Error::msg("the Node.js prelude failed"));
    }

    let program = require_builtin_imports(program);
    let program = program.as_ref();
    // Only a program that names `import`, `export` or `await` can need module syntax; any
    // other is a script (parsed once).
    let module = ["import", "export", "await"]
        .iter()
        .any(|word| program.contains(word))
        && !api
            .compiles_as_script(store, ctx, program, filename)
            .await?;
    let mut exit_code = 0;
    if !api.eval(store, ctx, program, filename, module).await? {
        exit_code = 1;
    } else if api.loop_.call_async(&mut *store, ctx).await? != 0 {
        // An error thrown by a callback ends the loop with the exception pending.
        api.dump_error.call_async(&mut *store, ctx).await?;
        exit_code = 1;
    }
    // `__grpoFinish` runs `process.on('exit')` handlers, flushes and calls `exit`: it does
    // not return unless an exit handler threw.
    let finish = format!("__grpoFinish({exit_code})");
    api.eval(store, ctx, &finish, "<exit>", false).await?;
    Err(wasmtime_wasi::I32Exit(1).into())
}

/// QuickJS-NG's version (`JS_GetVersion`), read from a fresh instance.
pub(crate) async fn version(
    store: &mut Store<P1State>,
    instance: &Instance,
) -> wasmtime::Result<String> {
    let memory = instance
        .get_memory(&mut *store, "memory")
        .ok_or_else(|| wasmtime::Error::msg("QuickJS exports no memory"))?;
    let get_version = instance.get_typed_func::<(), i32>(&mut *store, "JS_GetVersion")?;
    let ptr = usize::try_from(get_version.call_async(&mut *store, ()).await?)?;
    let tail = memory
        .data(&*store)
        .get(ptr..)
        .ok_or_else(|| wasmtime::Error::msg("JS_GetVersion points outside memory"))?;
    let text = tail.split(|&b| b == 0).next().unwrap_or_default();
    Ok(String::from_utf8_lossy(&text[..text.len().min(64)]).into_owned())
}

/// QuickJS-NG as one sandbox holds it: compiled (through the disk cache), its stack widened,
/// and linked on first use, with its version.
pub(crate) struct QuickJs {
    /// Where compiled modules are cached on disk (`None`: no cache).
    cache_dir: Option<PathBuf>,
    linked: OnceCell<(InstancePre<P1State>, String)>,
}

impl QuickJs {
    /// Nothing compiled yet: that happens on the first run or version asked.
    pub(crate) fn new(cache_dir: Option<PathBuf>) -> QuickJs {
        QuickJs {
            cache_dir,
            linked: OnceCell::new(),
        }
    }

    async fn linked(
        &self,
        host: &Host,
        modules: &CoreModules,
    ) -> Result<&(InstancePre<P1State>, String)> {
        self.linked
            .get_or_try_init(|| async {
                let engine = host.engine().clone();
                let cache_dir = self.cache_dir.clone();
                let compiled = tokio::task::spawn_blocking(move || {
                    let wasm = widen_stack(&quickjs_wasm()?, STACK_PAGES)
                        .map_err(|reason| SandboxError::Engine { reason })?;
                    runtime::load_module(&engine, "quickjs", &wasm, cache_dir.as_deref())
                })
                .await
                .map_err(SandboxError::blocking("compiling QuickJS"))??;
                let pre = modules.prepare(&compiled)?;
                let mut store = Store::new(
                    host.engine(),
                    P1State {
                        wasi: wasmtime_wasi::WasiCtxBuilder::new().build_p1(),
                        budget: Budget::new(&Limits::default(), Path::new("/nonexistent")),
                    },
                );
                store.set_epoch_deadline(u64::MAX / 2);
                let version = async {
                    let instance = pre.instantiate_async(&mut store).await?;
                    version(&mut store, &instance).await
                }
                .await
                .map_err(SandboxError::wasm("starting QuickJS"))?;
                Ok((pre, version))
            })
            .await
    }

    /// The QuickJS-NG version runs use (`0.10.1`).
    pub(crate) async fn version(&self, host: &Host, modules: &CoreModules) -> Result<String> {
        Ok(self.linked(host, modules).await?.1.clone())
    }

    /// Runs a JavaScript program like `node main.js` (see `js_prelude.js` for the Node.js
    /// surface there is) on `host`, with `files` placed in its directory first and
    /// `files.fetch` read back after.
    pub(crate) async fn run(
        &self,
        host: &Host,
        modules: &CoreModules,
        program: &str,
        stdin: &[u8],
        limits: &Limits,
        files: &JobFiles,
    ) -> Result<(RunResult, BTreeMap<String, Vec<u8>>)> {
        let (pre, _) = self.linked(host, modules).await?;
        let guest = ModuleGuest {
            pre,
            entry: Entry::QuickJs {
                program,
                filename: "main.js",
            },
            args: &[],
        };
        wasip1::run(host, guest, stdin, limits, files).await
    }
}

/// Pages (64 KiB) of shadow stack given to QuickJS by [`widen_stack`]: 8 MiB.
///
/// This build of QuickJS does not check its stack depth (its check is off for WASI), so
/// recursion ends where wasmtime's native stack does ([`MAX_WASM_STACK`], about 10,000
/// JavaScript frames, as deep as Node.js goes by default): a stack-overflow trap, which the
/// sandbox reports as an error exit. Measured, the shadow stack such a run uses is under
/// 1.25 MiB; 8 MiB leaves room for frames that put more on it (`alloca`).
///
/// [`MAX_WASM_STACK`]: crate::engine::runtime::MAX_WASM_STACK
pub(crate) const STACK_PAGES: u32 = 128;

/// Moves a module's shadow stack (the C stack in linear memory) into `extra_pages` new pages
/// at the end of its initial memory.
///
/// QuickJS-NG's reactor build links a 64 KiB stack just above its data, which overflows into
/// that data after a few hundred JavaScript calls, silently corrupting it. The
/// stack pointer is the module's only mutable global (checked); its initial value becomes the
/// new end of the initial memory, so the stack grows down through the new pages, and `malloc`
/// (which starts at the end of the initial memory) stays above it.
pub(crate) fn widen_stack(wasm: &[u8], extra_pages: u32) -> std::result::Result<Vec<u8>, String> {
    if wasm.get(..8) != Some(b"\0asm\x01\0\0\0".as_slice()) {
        return Err("not a core wasm module".into());
    }
    let mut out = wasm[..8].to_vec();
    let mut pos = 8;
    let mut new_top = None;
    let mut globals_done = false;
    while pos < wasm.len() {
        let id = wasm[pos];
        let (size, body_at) = read_u32(wasm, pos + 1)?;
        let end = body_at + size as usize;
        let body = wasm.get(body_at..end).ok_or("section past the end")?;
        let new_body = match id {
            5 => {
                let (count, mut at) = read_u32(body, 0)?;
                if count != 1 {
                    return Err(format!("{count} memories"));
                }
                let flags = *body.get(at).ok_or("truncated memory")?;
                at += 1;
                let (min, after) = read_u32(body, at)?;
                let grown = min.checked_add(extra_pages).ok_or("memory too large")?;
                new_top = Some(grown.checked_mul(65536).ok_or("memory too large")?);
                let mut b = vec![1, flags];
                write_u32(&mut b, grown);
                if flags & 1 == 1 {
                    let (max, after_max) = read_u32(body, after)?;
                    if max < grown {
                        return Err("the memory's maximum is below the widened size".into());
                    }
                    write_u32(&mut b, max);
                    b.extend_from_slice(&body[after_max..]);
                } else {
                    b.extend_from_slice(&body[after..]);
                }
                Some(b)
            }
            6 => {
                let top = new_top.ok_or("globals before the memory")?;
                globals_done = true;
                Some(rewrite_stack_pointer(body, top)?)
            }
            _ => None,
        };
        match new_body {
            Some(b) => {
                out.push(id);
                write_u32(
                    &mut out,
                    u32::try_from(b.len()).map_err(|_| "section too large")?,
                );
                out.extend_from_slice(&b);
            }
            None => out.extend_from_slice(&wasm[pos..end]),
        }
        pos = end;
    }
    if !globals_done {
        return Err("no globals section".into());
    }
    Ok(out)
}

/// Rewrites the globals section: the one mutable `i32` global starts at `top`.
fn rewrite_stack_pointer(body: &[u8], top: u32) -> std::result::Result<Vec<u8>, String> {
    let (count, mut at) = read_u32(body, 0)?;
    let mut b = Vec::with_capacity(body.len() + 4);
    write_u32(&mut b, count);
    let mut rewritten = 0;
    for _ in 0..count {
        let ty = *body.get(at).ok_or("truncated global")?;
        let mutable = *body.get(at + 1).ok_or("truncated global")?;
        at += 2;
        let init_end = at
            + body
                .get(at..)
                .and_then(|rest| rest.iter().position(|&b| b == 0x0b))
                .ok_or("unterminated global initialiser")?
            + 1;
        b.extend_from_slice(&[ty, mutable]);
        if mutable == 1 {
            if ty != 0x7f || body.get(at) != Some(&0x41) {
                return Err("a mutable global that is not an i32 constant".into());
            }
            rewritten += 1;
            b.push(0x41);
            write_i32(&mut b, top as i32);
            b.push(0x0b);
        } else {
            b.extend_from_slice(&body[at..init_end]);
        }
        at = init_end;
    }
    if rewritten != 1 {
        return Err(format!(
            "{rewritten} mutable globals; expected only the stack pointer"
        ));
    }
    b.extend_from_slice(&body[at..]);
    Ok(b)
}

fn read_u32(bytes: &[u8], mut at: usize) -> std::result::Result<(u32, usize), String> {
    let mut value: u64 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *bytes.get(at).ok_or("truncated LEB128")?;
        at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return u32::try_from(value)
                .map(|v| (v, at))
                .map_err(|_| "LEB128 past 32 bits".into());
        }
    }
    Err("LEB128 too long".into())
}

fn write_u32(out: &mut Vec<u8>, mut value: u32) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn write_i32(out: &mut Vec<u8>, mut value: i32) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        let done = (value == 0 && byte & 0x40 == 0) || (value == -1 && byte & 0x40 != 0);
        if done {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_imports_become_requires_on_the_same_line() {
        for (from, to) in [
            ("import * as fs from 'fs';", "const fs = require('fs');"),
            ("import fs from \"node:fs\"", "const fs = require(\"fs\");"),
            (
                "  import { createInterface as ci, Interface } from 'readline';",
                "  const { createInterface: ci, Interface } = require('readline');",
            ),
            (
                "import assert, { strictEqual } from 'node:assert';",
                "const assert = require('assert'), { strictEqual } = assert;",
            ),
        ] {
            assert_eq!(require_builtin_imports(from), to);
        }
        for kept in [
            "import x from './local.js';",
            "import lodash from 'lodash';",
            "const s = 'import fs from \"fs\"';",
            "import {\n a } from 'fs';",
        ] {
            assert_eq!(require_builtin_imports(kept), kept);
        }
        let program = "import * as fs from 'fs';\nconsole.log(1);\nexport {};";
        assert_eq!(require_builtin_imports(program).lines().count(), 3);
    }

    #[test]
    fn leb128_round_trips() {
        for v in [0u32, 1, 127, 128, 65536, u32::MAX] {
            let mut b = Vec::new();
            write_u32(&mut b, v);
            assert_eq!(read_u32(&b, 0).unwrap(), (v, b.len()));
        }
        let mut b = Vec::new();
        write_i32(&mut b, 4_390_912);
        assert_eq!(b, [0x80, 0x80, 0x8c, 0x02]);
        let mut b = Vec::new();
        write_i32(&mut b, 0x4000);
        assert_eq!(b, [0x80, 0x80, 0x01]);
    }

    #[test]
    fn the_stack_moves_to_new_pages_and_the_module_still_validates() {
        let wasm = quickjs_wasm().unwrap();
        let widened = widen_stack(&wasm, STACK_PAGES).unwrap();
        let engine = wasmtime::Engine::default();
        let module = wasmtime::Module::new(&engine, &widened).unwrap();
        let memory = module
            .exports()
            .find_map(|e| e.ty().memory().cloned())
            .unwrap();
        assert_eq!(memory.minimum(), 3 + u64::from(STACK_PAGES));
        assert!(widen_stack(b"\0asm\x01\0\0\0", 1).is_err());
        assert!(widen_stack(b"nope", 1).is_err());
    }
}
