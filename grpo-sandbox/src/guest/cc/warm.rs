//! Warming a fresh toolchain: zig builds compiler-rt, wasi-libc, libc++ and libc++abi for
//! wasm32-wasi on first use (about 60 CPU seconds), so the install compiles a C and a C++
//! program with the exact job flags, and precompiles `<bits/stdc++.h>` (which cuts a
//! competitive-programming C++ compile to about a third). Each step runs confined like a job,
//! so a warm-up that succeeds also shows the confinement works with this toolchain. Until the
//! warm-up has finished, jobs may write all of zig's global cache; after it, only its
//! manifests.
//!
//! The C++ program goes first: linking it makes one zig process build all four libraries on
//! every core at once (C and C++ share wasi-libc and compiler-rt, built once), while the header
//! is precompiled beside it (it needs no library). The C program then only links.

use std::time::Instant;

use std::sync::atomic::Ordering;

use super::compile::{CLang, CompileLimits, Compiled, Compiler, PCH_FLAGS, pch_path, warm_marker};
use super::error::CcError;
use super::run::{Exit, Step};
use super::toolchain::elapsed_ms;

/// How long each warm-up step took, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct WarmUp {
    /// A C hello world, after the C++ program (it then only links).
    pub c_ms: u64,
    /// A C++ program using iostream, vector and sort: it builds compiler-rt, wasi-libc, libc++
    /// and libc++abi the first time.
    pub cpp_ms: u64,
    /// Precompiling `<bits/stdc++.h>`, at the same time as the C++ program (0 when it was
    /// already there).
    pub pch_ms: u64,
    /// A program including `<bits/stdc++.h>`, with the precompiled header.
    pub bits_ms: u64,
    /// The whole warm-up.
    pub total_ms: u64,
}

pub(super) const HELLO_C: &str =
    "#include <stdio.h>\nint main(void) { puts(\"warm\"); return 0; }\n";
pub(super) const HELLO_CPP: &str = "#include <algorithm>\n#include <iostream>\n#include <vector>\n\
int main() { std::vector<int> v{3, 1, 2}; std::sort(v.begin(), v.end()); \
std::cout << v[0] << '\\n'; }\n";
pub(super) const BITS_CPP: &str = "#include <bits/stdc++.h>\nusing namespace std;\n\
int main() { ios::sync_with_stdio(false); int n = 0; cin >> n; vector<long long> a(n); \
for (auto& x : a) cin >> x; sort(a.begin(), a.end()); cout << accumulate(a.begin(), a.end(), 0LL) << '\\n'; }\n";

/// Limits for the warm-up's trusted programs: building the libraries takes minutes.
fn warm_limits() -> CompileLimits {
    CompileLimits {
        cpu_s: 1800,
        wall_ms: 1_800_000,
        memory_mb: 4096,
        output_bytes: 64 * 1024,
        keep_on_disk: false,
    }
}

impl Compiler {
    /// Builds zig's libraries for wasm32-wasi and the precompiled `<bits/stdc++.h>`, so the
    /// first job compiles at full speed. Quick when already warm.
    pub async fn warm_up(&self) -> Result<WarmUp, CcError> {
        let report = {
            let _warming = self.inner.warming.lock().await;
            self.warm_up_locked().await?
        };
        if self.inner.options.direct {
            self.direct().await;
        }
        Ok(report)
    }

    /// Warms up unless another caller has just done it.
    pub(super) async fn ensure_warm(&self) -> Result<(), CcError> {
        let _warming = self.inner.warming.lock().await;
        if !self.inner.warm.load(Ordering::Acquire) {
            self.warm_up_locked().await?;
        }
        Ok(())
    }

    async fn warm_up_locked(&self) -> Result<WarmUp, CcError> {
        let start = Instant::now();
        self.toolchain().write_header()?;
        let limits = warm_limits();
        let mut report = WarmUp::default();
        let pch = pch_path(self.toolchain());
        let libraries = async {
            let step = Instant::now();
            self.known_good(CLang::Cpp, HELLO_CPP, "C++ program", &limits)
                .await
                .map(|()| elapsed_ms(step))
        };
        let header = async {
            if pch.is_file() {
                return Ok(0);
            }
            let step = Instant::now();
            self.precompile_header(&limits)
                .await
                .map(|()| elapsed_ms(step))
        };
        let (cpp_ms, pch_ms) = tokio::join!(libraries, header);
        report.cpp_ms = cpp_ms?;
        report.pch_ms = pch_ms?;
        let step = Instant::now();
        self.known_good(CLang::C, HELLO_C, "C program", &limits)
            .await?;
        report.c_ms = elapsed_ms(step);
        let step = Instant::now();
        if let Err(e) = self
            .known_good(CLang::Cpp, BITS_CPP, "<bits/stdc++.h> program", &limits)
            .await
        {
            // A header that does not load (built for another header or clang) must not break
            // every such compile: rebuild it once, else go without.
            tracing::warn!(error = %e, "the precompiled <bits/stdc++.h> does not work; rebuilding it");
            let _ = std::fs::remove_file(&pch);
            self.precompile_header(&limits).await?;
            let source = format!("{BITS_CPP}// rebuilt\n");
            if let Err(e) = self
                .known_good(CLang::Cpp, &source, "<bits/stdc++.h> program", &limits)
                .await
            {
                tracing::warn!(error = %e, "the rebuilt precompiled header fails too; compiling without it");
                let _ = std::fs::remove_file(&pch);
                self.known_good(CLang::Cpp, &source, "<bits/stdc++.h> program", &limits)
                    .await?;
            }
        }
        report.bits_ms = elapsed_ms(step);
        let marker = warm_marker(self.toolchain());
        std::fs::write(&marker, b"").map_err(|e| CcError::io(&marker, e))?;
        self.inner.warm.store(true, Ordering::Release);
        report.total_ms = elapsed_ms(start);
        tracing::info!(?report, "the C/C++ toolchain is warm");
        Ok(report)
    }

    async fn known_good(
        &self,
        lang: CLang,
        source: &str,
        what: &'static str,
        limits: &CompileLimits,
    ) -> Result<(), CcError> {
        match self.compile_job(lang, source, limits).await? {
            Compiled::Module { .. } => Ok(()),
            Compiled::Failed { stderr, .. } => Err(CcError::WarmUp { what, stderr }),
        }
    }

    /// Precompiles `<bits/stdc++.h>` with the C++ job flags into the toolchain's `pch/`.
    async fn precompile_header(&self, limits: &CompileLimits) -> Result<(), CcError> {
        let toolchain = self.toolchain();
        let pch_dir = toolchain.pch_dir();
        std::fs::create_dir_all(&pch_dir).map_err(|e| CcError::io(&pch_dir, e))?;
        // The job directory sits beside the result so the result can be renamed into place.
        let job = tempfile::Builder::new()
            .prefix(".build-")
            .tempdir_in(&pch_dir)
            .map_err(|e| CcError::io(&pch_dir, e))?;
        let header = toolchain.include_dir().join("bits").join("stdc++.h");
        let mut args: Vec<String> = vec!["c++".to_owned()];
        args.extend(CLang::Cpp.flags().iter().map(|s| (*s).to_owned()));
        args.extend(PCH_FLAGS.iter().map(|s| (*s).to_owned()));
        args.push(format!("-I{}", toolchain.include_dir().display()));
        args.extend(["-x".to_owned(), "c++-header".to_owned()]);
        args.push(header.display().to_string());
        args.extend(["-o".to_owned(), "stdc++.pch".to_owned()]);
        let outcome = self
            .run_zig(&args, job.path(), limits, Step::Driver)
            .await?;
        let built = job.path().join("stdc++.pch");
        if outcome.exit != Exit::Code(0) || !built.is_file() {
            return Err(CcError::WarmUp {
                what: "precompiled <bits/stdc++.h>",
                stderr: self.clean_messages(&outcome, job.path()),
            });
        }
        let target = pch_path(toolchain);
        std::fs::rename(&built, &target).map_err(|e| CcError::io(&target, e))?;
        Ok(())
    }
}
