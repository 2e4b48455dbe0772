//! The paths of the vendored wasmtime that the workspace patches (`vendor/README.md`), each
//! driven through the sandbox's own engine (`runtime::build_engine`), with small core modules:
//!
//! - a pooled memory's reset after a run dirtied more scattered regions than upstream's scan
//!   buffer (32) and more than ours (1024): every page reads back as the memory image's;
//! - a run's written page that the kernel swapped out is reset too (upstream's scan asks for
//!   present pages only, so a swapped page kept the previous run's bytes);
//! - function references made from the per-module template: `ref.func`, tables, exports
//!   and imports wired between instances call the right functions, on a fresh and a reused slot.

use grpo_sandbox::engine::runtime::build_engine;
use grpo_sandbox::{Allocator, EngineOptions};
use wasmtime::{Engine, Instance, Linker, Memory, Module, Store, TypedFunc};

const PAGE: usize = 4096;
/// The memory's size: 12 MiB, 192 wasm pages.
const MEMORY_BYTES: usize = 192 * 65536;
/// What run one writes: a value no image byte pattern has.
const SECRET: i32 = 0x5ec2_e7a5;

/// A memory with an image (two data segments, one of them past the first MiB) and functions
/// to write a word at every `stride`-th page and to read one word.
const MEMORY_MODULE: &str = r#"
(module
  (memory (export "memory") 192 192)
  (data (i32.const 0) "image: first page")
  (data (i32.const 0x100000) "image: page 256")
  (func (export "fill") (param $value i32) (param $start i32) (param $stride i32) (param $end i32)
    (local $addr i32)
    (local.set $addr (local.get $start))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $addr) (local.get $end)))
        (i32.store (i32.add (local.get $addr) (i32.const 8)) (local.get $value))
        (local.set $addr (i32.add (local.get $addr) (local.get $stride)))
        (br $next))))
  (func (export "load") (param $addr i32) (result i32)
    (i32.load (local.get $addr))))
"#;

/// `text` compiled on `engine` (the workspace's wasmtime is built without its text parser).
fn compile(engine: &Engine, text: &str, what: &str) -> Module {
    let binary = wat::parse_str(text).unwrap_or_else(|e| panic!("{what}: {e}"));
    Module::new(engine, binary).unwrap_or_else(|e| panic!("{what}: {e:#}"))
}

fn pooled_engine() -> Engine {
    // One instance at a time, so every run takes the same memory slot; 16 MiB kept resident,
    // so the reset goes through the pagemap scan rather than decommitting everything.
    build_engine(&EngineOptions {
        allocator: Allocator::Pooling {
            total_instances: 1,
            max_memory_mb: 16,
            keep_resident_mb: 16,
        },
        cache_dir: None,
    })
    .expect("the sandbox's pooled engine")
}

/// One run of the memory module: instantiate, let `during` act on the instance, drop the store
/// (which resets the slot). Returns the memory's host address, to show the next run reuses it.
fn run<T>(
    engine: &Engine,
    module: &Module,
    during: impl FnOnce(&mut Store<()>, &Instance, &Memory) -> T,
) -> (usize, T) {
    let mut store = Store::new(engine, ());
    // The sandbox's engine interrupts on epochs; nothing advances the epoch here.
    store.set_epoch_deadline(u64::MAX / 2);
    let instance = Instance::new(&mut store, module, &[]).expect("instantiate");
    let memory = instance
        .get_memory(&mut store, "memory")
        .expect("exported memory");
    let address = memory.data_ptr(&store) as usize;
    let value = during(&mut store, &instance, &memory);
    (address, value)
}

fn fill(store: &mut Store<()>, instance: &Instance, start: usize, stride: usize, end: usize) {
    let fill: TypedFunc<(i32, i32, i32, i32), ()> = instance
        .get_typed_func(&mut *store, "fill")
        .expect("fill export");
    let arg = |n: usize| i32::try_from(n).expect("fits in i32");
    fill.call(&mut *store, (SECRET, arg(start), arg(stride), arg(end)))
        .expect("fill runs");
}

/// The memory as the image defines it: zeros but for the two data segments.
fn image() -> Vec<u8> {
    let mut bytes = vec![0u8; MEMORY_BYTES];
    bytes[..17].copy_from_slice(b"image: first page");
    bytes[0x100000..0x100000 + 15].copy_from_slice(b"image: page 256");
    bytes
}

/// Where the memory differs from the image, as (first offset, count).
fn differences(store: &Store<()>, memory: &Memory) -> (Option<usize>, usize) {
    let expected = image();
    let data = memory.data(store);
    assert_eq!(data.len(), expected.len());
    let mut first = None;
    let mut count = 0;
    for (offset, (a, b)) in data.iter().zip(&expected).enumerate() {
        if a != b {
            first.get_or_insert(offset);
            count += 1;
        }
    }
    (first, count)
}

/// Run one dirties `regions` disjoint runs of pages (every other page); run two, in the same
/// slot, must see exactly the image.
fn dirty_then_check(regions: usize) {
    let engine = pooled_engine();
    let module = compile(&engine, MEMORY_MODULE, "module compiles");
    let end = regions * 2 * PAGE;
    assert!(end <= MEMORY_BYTES);
    let (first_address, written) = run(&engine, &module, |store, instance, memory| {
        fill(store, instance, 0, 2 * PAGE, end);
        differences(store, memory).1
    });
    assert!(written >= regions, "run one changed {written} bytes");
    let (count, first) = next_run_differences(&engine, &module, first_address);
    assert_eq!(
        count, 0,
        "{regions} dirty regions: the second run saw {count} bytes of the first (first at {first:?})"
    );
}

/// Runs the module again, checks it got the slot at `first_address` (else the test proves
/// nothing), and returns how many bytes of its memory differ from the image, and the first.
fn next_run_differences(
    engine: &Engine,
    module: &Module,
    first_address: usize,
) -> (usize, Option<usize>) {
    let (second_address, (first, count)) = run(engine, module, |store, _, memory| {
        differences(store, memory)
    });
    assert_eq!(
        first_address, second_address,
        "both runs must use the same slot, or the test proves nothing"
    );
    (count, first)
}

#[test]
fn a_reset_after_more_dirty_regions_than_upstreams_buffer_reads_back_the_image() {
    // 100 regions: more than upstream's 32, within the patched 1024, so all are reset in place.
    dirty_then_check(100);
}

#[test]
fn a_reset_after_more_dirty_regions_than_the_patched_buffer_reads_back_the_image() {
    // 1,536 regions overflow the 1024-entry buffer: the scan stops early and the rest of the
    // memory is decommitted, which must read back as the image too.
    dirty_then_check(MEMORY_BYTES / PAGE / 2);
}

/// Whether the page at `address` is in swap, from `/proc/self/pagemap` (bit 62); `None` when
/// the file cannot be read.
fn page_is_swapped(address: usize) -> Option<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut pagemap = std::fs::File::open("/proc/self/pagemap").ok()?;
    pagemap
        .seek(SeekFrom::Start(
            u64::try_from(address / PAGE * 8).expect("fits in u64"),
        ))
        .ok()?;
    let mut entry = [0u8; 8];
    pagemap.read_exact(&mut entry).ok()?;
    Some(u64::from_le_bytes(entry) & (1 << 62) != 0)
}

fn swap_is_enabled() -> bool {
    std::fs::read_to_string("/proc/swaps")
        .map(|swaps| swaps.lines().count() > 1)
        .unwrap_or(false)
}

#[test]
fn a_written_page_that_was_swapped_out_is_reset_before_the_next_run() {
    if !swap_is_enabled() {
        eprintln!(
            "SKIPPED: no swap on this machine (/proc/swaps is empty), so no page can be pushed \
             out; as root: fallocate -l 1G /swapfile && chmod 600 /swapfile && mkswap /swapfile \
             && swapon /swapfile"
        );
        return;
    }
    let engine = pooled_engine();
    let module = compile(&engine, MEMORY_MODULE, "module compiles");
    // 64 written pages, contiguous, then the whole memory pushed out to swap.
    let written = 64 * PAGE;
    let (first_address, swapped) = run(&engine, &module, |store, instance, memory| {
        fill(store, instance, 0, PAGE, written);
        let base = memory.data_ptr(&*store);
        // SAFETY: `base..base + MEMORY_BYTES` is this store's linear memory, mapped and owned
        // by the store; MADV_PAGEOUT only asks the kernel to reclaim it, and the contents are
        // unchanged when read again.
        let rc = unsafe { libc::madvise(base.cast(), MEMORY_BYTES, libc::MADV_PAGEOUT) };
        assert_eq!(
            rc,
            0,
            "madvise(MADV_PAGEOUT): {}",
            std::io::Error::last_os_error()
        );
        (0..written / PAGE)
            .filter(|page| page_is_swapped(base as usize + page * PAGE) == Some(true))
            .count()
    });
    if swapped == 0 {
        eprintln!(
            "SKIPPED: swap is enabled but the kernel kept every written page resident after \
             MADV_PAGEOUT, so the swapped case was not reached"
        );
        return;
    }
    let (count, first) = next_run_differences(&engine, &module, first_address);
    assert_eq!(
        count, 0,
        "{swapped} of 64 written pages were in swap when the slot was reset; the next run read \
         {count} bytes of the previous run's data (first at {first:?})"
    );
}

/// Functions reached every way a function reference is made: `ref.func` into a table at
/// start-up (element segments), `call_indirect`, a `ref.func` returned to the host, an export
/// wired into another instance's import, and an imported function re-exported.
const PROVIDER: &str = r#"
(module
  (func $double (export "double") (param i32) (result i32)
    (i32.mul (local.get 0) (i32.const 2)))
  (func $square (export "square") (param i32) (result i32)
    (i32.mul (local.get 0) (local.get 0))))
"#;

const USER: &str = r#"
(module
  (import "provider" "double" (func $double (param i32) (result i32)))
  (import "provider" "square" (func $square (param i32) (result i32)))
  (type $unary (func (param i32) (result i32)))
  (table 4 funcref)
  (elem (i32.const 0) func $double $square $negate $double_then_square)
  (func $negate (param i32) (result i32) (i32.sub (i32.const 0) (local.get 0)))
  (func $double_then_square (param i32) (result i32)
    (call $square (call $double (local.get 0))))
  (func (export "dispatch") (param $which i32) (param $x i32) (result i32)
    (call_indirect (type $unary) (local.get $x) (local.get $which)))
  (func (export "reference") (result funcref) (ref.func $double_then_square))
  (export "reexported" (func $square)))
"#;

fn function_references_call_the_right_functions(engine: &Engine) {
    let provider = compile(engine, PROVIDER, "provider compiles");
    let user = compile(engine, USER, "user compiles");
    // Twice: the second instantiation reuses a pooled slot, and the module's template is
    // written into a fresh VMContext again.
    for round in 0..2 {
        let mut store = Store::new(engine, ());
        store.set_epoch_deadline(u64::MAX / 2);
        let mut linker = Linker::new(engine);
        let provided = linker
            .instantiate(&mut store, &provider)
            .expect("provider instantiates");
        linker
            .instance(&mut store, "provider", provided)
            .expect("provider linked");
        let instance = linker
            .instantiate(&mut store, &user)
            .expect("user instantiates");
        let dispatch: TypedFunc<(i32, i32), i32> = instance
            .get_typed_func(&mut store, "dispatch")
            .expect("dispatch export");
        for (which, expected) in [(0, 14), (1, 49), (2, -7), (3, 196)] {
            assert_eq!(
                dispatch
                    .call(&mut store, (which, 7))
                    .expect("dispatch runs"),
                expected,
                "round {round}: table slot {which}"
            );
        }
        let reference = instance
            .get_typed_func::<(), Option<wasmtime::Func>>(&mut store, "reference")
            .expect("reference export")
            .call(&mut store, ())
            .expect("reference runs")
            .expect("a non-null reference");
        let through_reference = reference
            .typed::<i32, i32>(&store)
            .expect("its type")
            .call(&mut store, 3)
            .expect("the reference runs");
        assert_eq!(through_reference, 36, "round {round}: ref.func");
        let reexported: TypedFunc<i32, i32> = instance
            .get_typed_func(&mut store, "reexported")
            .expect("reexported export");
        assert_eq!(reexported.call(&mut store, 5).expect("runs"), 25);
    }
}

#[test]
fn function_references_from_the_template_call_the_right_functions() {
    function_references_call_the_right_functions(&pooled_engine());
    let on_demand = build_engine(&EngineOptions {
        allocator: Allocator::OnDemand,
        cache_dir: None,
    })
    .expect("the sandbox's on-demand engine");
    function_references_call_the_right_functions(&on_demand);
}
