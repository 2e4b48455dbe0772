//! Compiling without zig's driver: `zig clang` and `zig wasm-ld` run directly, with the
//! arguments the driver itself would give them.
//!
//! `zig cc` checks its cache of wasi-libc, libc++ and compiler-rt before every compile: it
//! opens and stats about 2,200 files (the libraries' sources and headers, listed in its
//! manifests), which under Landlock costs more than compiling a small C program. The commands
//! it then runs are the same every time but for the source and the output, so the toolchain's
//! first compiler captures them once (`ZIG_VERBOSE_CC` and `ZIG_VERBOSE_LINK` make zig print
//! them), checks that running them gives the very bytes the driver gives (a C program, a C++
//! program, and a C++ program with the precompiled header), and keeps them in the toolchain
//! directory. Each compile is then two confined processes, clang and the linker, in the job
//! directory, and neither needs to write zig's cache.
//!
//! When the capture or the check fails (another zig, a path the printed commands cannot
//! carry), compiles go through `zig cc` as before, with a warning.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::cache;
use super::compile::{CLang, CompileLimits, Compiler, LINK_FLAGS, pch_path, warm_marker};
use super::error::CcError;
use super::run::{Exit, Outcome, Step};
use super::toolchain::{Toolchain, ZIG_VERSION, elapsed_ms};
use super::warm::{BITS_CPP, HELLO_C, HELLO_CPP};
use crate::engine::digest::hex;

/// How the driver names the source and the output when its commands are captured (the job's
/// own names, so a captured command needs no renaming beyond the object's cache path).
pub(super) const OBJECT: &str = "main.o";
/// The module a job writes.
pub(super) const OUTPUT: &str = "main.wasm";

/// One language's two steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Steps {
    /// Arguments of `zig clang` after the source and before `-c -o main.o`: the driver's
    /// target, include paths, defines and features, then the job flags.
    pub(super) clang: Vec<String>,
    /// Arguments of `zig wasm-ld`, reading `main.o` and writing `main.wasm`.
    pub(super) link: Vec<String>,
}

impl Steps {
    /// `zig` arguments of the compile step, with the precompiled header when given.
    pub(super) fn compile_args(&self, lang: CLang, pch: Option<&Path>) -> Vec<String> {
        let mut args = Vec::with_capacity(self.clang.len() + 7);
        args.push("clang".to_owned());
        args.push(lang.source_name().to_owned());
        args.extend(self.clang.iter().cloned());
        if let Some(pch) = pch {
            args.push("-include-pch".to_owned());
            args.push(pch.display().to_string());
        }
        args.extend(["-c".to_owned(), "-o".to_owned(), OBJECT.to_owned()]);
        args
    }

    /// `zig` arguments of the link step.
    pub(super) fn link_args(&self) -> Vec<String> {
        let mut args = Vec::with_capacity(self.link.len() + 1);
        args.push("wasm-ld".to_owned());
        args.extend(self.link.iter().cloned());
        args
    }
}

/// Both languages' steps, as kept in the toolchain directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Direct {
    pub(super) c: Steps,
    pub(super) cpp: Steps,
}

impl Direct {
    pub(super) fn steps(&self, lang: CLang) -> &Steps {
        match lang {
            CLang::C => &self.c,
            CLang::Cpp => &self.cpp,
        }
    }

    /// Reads kept steps; `None` when there are none or they do not parse.
    pub(super) fn load(path: &Path) -> Option<Direct> {
        let text = std::fs::read(path).ok()?;
        match serde_json::from_slice(&text) {
            Ok(direct) => Some(direct),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "unreadable direct compile steps; capturing them again");
                None
            }
        }
    }

    /// Keeps the steps at `path`, written whole or not at all.
    pub(super) fn store(&self, path: &Path) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        serde_json::to_writer_pretty(&mut file, self).map_err(std::io::Error::other)?;
        file.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Where the checked steps are kept: in the toolchain directory (which jobs cannot write),
/// named by the toolchain's place, the warm-up that built its libraries and the header.
fn kept_at(toolchain: &Toolchain) -> PathBuf {
    let marker = warm_marker(toolchain);
    let key = cache::key(&[
        toolchain.root().to_string_lossy().as_bytes(),
        marker.to_string_lossy().as_bytes(),
        pch_path(toolchain).to_string_lossy().as_bytes(),
        ZIG_VERSION.as_bytes(),
    ]);
    toolchain
        .root()
        .join(format!("direct-{}.json", &hex(&key)[..16]))
}

/// Every file the steps link is still there (zig's cache can be cleared).
fn libraries_exist(direct: &Direct) -> bool {
    [&direct.c, &direct.cpp]
        .iter()
        .flat_map(|steps| &steps.link)
        .all(|word| !word.starts_with('/') || Path::new(word).is_file())
}

impl Compiler {
    /// The direct steps: kept ones, else captured and checked now (once per compiler).
    pub(super) async fn direct(&self) -> Option<Arc<Direct>> {
        self.inner
            .direct
            .get_or_init(|| async {
                let path = kept_at(self.toolchain());
                if let Some(direct) = Direct::load(&path).filter(libraries_exist) {
                    return Some(Arc::new(direct));
                }
                let start = Instant::now();
                match self.capture().await {
                    Ok(direct) => {
                        if let Err(e) = direct.store(&path) {
                            tracing::warn!(path = %path.display(), error = %e, "could not keep the direct compile steps");
                        }
                        tracing::info!(
                            ms = elapsed_ms(start),
                            "compiling with clang and wasm-ld directly"
                        );
                        Some(Arc::new(direct))
                    }
                    Err(reason) => {
                        tracing::warn!(%reason, "compiling through zig's driver");
                        None
                    }
                }
            })
            .await
            .clone()
    }

    /// Captures both languages' steps from the driver and checks that they build the same
    /// modules.
    async fn capture(&self) -> Result<Direct, String> {
        // zig prints its commands unquoted, one space between arguments.
        let root = self.toolchain().root().to_string_lossy().into_owned();
        if root.chars().any(char::is_whitespace) {
            return Err(format!("the toolchain's path has a space in it: {root}"));
        }
        let limits = CompileLimits {
            cpu_s: 120,
            wall_ms: 600_000,
            ..CompileLimits::default()
        };
        let c = self.capture_one(CLang::C, HELLO_C, &limits).await?;
        let cpp = self.capture_one(CLang::Cpp, HELLO_CPP, &limits).await?;
        let pch = pch_path(self.toolchain());
        if pch.is_file() {
            let through_driver = self.module(CLang::Cpp, BITS_CPP, Some(&pch), None, &limits);
            let direct = self.module(CLang::Cpp, BITS_CPP, Some(&pch), Some(&cpp), &limits);
            if through_driver.await? != direct.await? {
                return Err(
                    "with the precompiled header, the direct steps build another module".into(),
                );
            }
        }
        Ok(Direct { c, cpp })
    }

    async fn capture_one(
        &self,
        lang: CLang,
        source: &str,
        limits: &CompileLimits,
    ) -> Result<Steps, String> {
        let job = self.job_with(lang, source).map_err(|e| e.to_string())?;
        let args = self.driver_args(lang, None);
        let outcome = self
            .run_zig(&args, job.path(), limits, Step::Verbose)
            .await
            .map_err(|e| e.to_string())?;
        let messages = String::from_utf8_lossy(&outcome.stderr);
        if outcome.exit != Exit::Code(0) {
            return Err(format!(
                "the driver failed on a known-good program: {messages}"
            ));
        }
        let steps = parse(lang, &messages).map_err(|e| e.to_string())?;
        let expected = std::fs::read(job.path().join(OUTPUT)).map_err(|e| e.to_string())?;
        let direct = self
            .module(lang, source, None, Some(&steps), limits)
            .await?;
        if direct != expected {
            return Err(format!(
                "for {lang:?}, the direct steps build another module"
            ));
        }
        Ok(steps)
    }

    /// The driver's arguments for a job: `zig cc` / `zig c++` with the job flags, compiling
    /// `main.c` / `main.cpp` to `main.wasm` in the job directory.
    pub(super) fn driver_args(&self, lang: CLang, pch: Option<&Path>) -> Vec<String> {
        let mut args: Vec<String> = vec![lang.driver().to_owned()];
        args.extend(lang.flags().iter().map(|s| (*s).to_owned()));
        if lang == CLang::Cpp {
            args.push(format!(
                "-I{}",
                self.inner.toolchain.include_dir().display()
            ));
        }
        if let Some(pch) = pch {
            args.push("-include-pch".to_owned());
            args.push(pch.display().to_string());
        }
        args.extend(["-o".to_owned(), OUTPUT.to_owned()]);
        args.push(lang.source_name().to_owned());
        args.extend(LINK_FLAGS.iter().map(|s| (*s).to_owned()));
        args
    }

    /// A fresh job directory holding `source`.
    pub(super) fn job_with(&self, lang: CLang, source: &str) -> Result<tempfile::TempDir, CcError> {
        let job = super::run::job_dir(self.inner.shared.as_ref(), "grpo-cc-")
            .map_err(|e| CcError::io(std::env::temp_dir(), e))?;
        let path = job.path().join(lang.source_name());
        std::fs::write(&path, source).map_err(|e| CcError::io(&path, e))?;
        Ok(job)
    }

    /// The module `source` compiles to, through the driver or through `steps`.
    async fn module(
        &self,
        lang: CLang,
        source: &str,
        pch: Option<&Path>,
        steps: Option<&Steps>,
        limits: &CompileLimits,
    ) -> Result<Vec<u8>, String> {
        let job = self.job_with(lang, source).map_err(|e| e.to_string())?;
        let outcome = self
            .run_job(steps, lang, pch, job.path(), limits)
            .await
            .map_err(|e| e.to_string())?;
        if outcome.exit != Exit::Code(0) {
            let how = if steps.is_some() {
                "the direct steps"
            } else {
                "the driver"
            };
            return Err(format!(
                "{how} failed on a known-good program: {}",
                String::from_utf8_lossy(&outcome.stderr)
            ));
        }
        std::fs::read(job.path().join(OUTPUT)).map_err(|e| e.to_string())
    }

    /// Compiles and links the job in `job`: with `steps` when given, else through the driver.
    pub(super) async fn run_job(
        &self,
        steps: Option<&Steps>,
        lang: CLang,
        pch: Option<&Path>,
        job: &Path,
        limits: &CompileLimits,
    ) -> Result<Outcome, CcError> {
        match steps {
            Some(steps) => self.run_direct(steps, lang, pch, job, limits).await,
            None => {
                let args = self.driver_args(lang, pch);
                self.run_zig(&args, job, limits, Step::Driver).await
            }
        }
    }

    /// Compiles and links the job in `job` with `steps`: clang, then (when it succeeded) the
    /// linker, each confined, within one wall-clock limit. Messages are clang's, then the
    /// linker's.
    pub(super) async fn run_direct(
        &self,
        steps: &Steps,
        lang: CLang,
        pch: Option<&Path>,
        job: &Path,
        limits: &CompileLimits,
    ) -> Result<Outcome, CcError> {
        let start = Instant::now();
        let compiled = self
            .run_zig(&steps.compile_args(lang, pch), job, limits, Step::Direct)
            .await?;
        if compiled.exit != Exit::Code(0) {
            return Ok(compiled);
        }
        let left = limits.wall_ms.saturating_sub(elapsed_ms(start));
        if left == 0 {
            return Ok(Outcome {
                exit: Exit::WallTimeout,
                ..compiled
            });
        }
        let link_limits = CompileLimits {
            wall_ms: left,
            ..limits.clone()
        };
        let mut linked = self
            .run_zig(&steps.link_args(), job, &link_limits, Step::Direct)
            .await?;
        // Clang's warnings first, as the driver shows them; the cap holds for both together.
        let cap = limits.output_bytes;
        for (mut first, then) in [
            (compiled.stderr, &mut linked.stderr),
            (compiled.stdout, &mut linked.stdout),
        ] {
            if !first.is_empty() {
                first.extend_from_slice(then);
                if first.len() > cap {
                    first.truncate(cap);
                    linked.truncated = true;
                }
                *then = first;
            }
        }
        linked.truncated |= compiled.truncated;
        Ok(linked)
    }
}

/// Why captured commands cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum CaptureError {
    #[error("zig printed no clang command for {0}")]
    NoCompile(&'static str),
    #[error("zig printed no wasm-ld command writing {OUTPUT}")]
    NoLink,
    #[error("the clang command does not end in `-c -o OBJECT`: {0}")]
    CompileShape(String),
    #[error("the wasm-ld command reads {0} objects named {OBJECT}, not one")]
    Objects(usize),
}

/// The steps from the driver's verbose messages for a compile of `main.c` / `main.cpp` to
/// `main.wasm` (one line per command, arguments separated by single spaces, unquoted).
pub(super) fn parse(lang: CLang, messages: &str) -> Result<Steps, CaptureError> {
    let source = lang.source_name();
    let compile = messages
        .lines()
        .map(|line| line.split(' ').collect::<Vec<_>>())
        .find(|words| {
            // `zig clang SOURCE ... -c -o OBJECT`
            words.len() >= 6
                && words[0].ends_with("zig")
                && words[1] == "clang"
                && words[2] == source
        })
        .ok_or(CaptureError::NoCompile(source))?;
    let n = compile.len();
    if compile[n - 3] != "-c" || compile[n - 2] != "-o" {
        return Err(CaptureError::CompileShape(compile[n - 3..].join(" ")));
    }
    let mut clang = Vec::with_capacity(n);
    let mut words = compile[3..n - 3].iter();
    while let Some(&word) = words.next() {
        match word {
            // The dependency file zig reads for its cache: not needed here.
            "-MD" | "-MV" => {}
            "-MF" => {
                words.next();
            }
            _ => clang.push(word.to_owned()),
        }
    }
    let link = messages
        .lines()
        .map(|line| line.split(' ').collect::<Vec<_>>())
        .find(|words| {
            words.first() == Some(&"wasm-ld") && words.windows(2).any(|w| w == ["-o", OUTPUT])
        })
        .ok_or(CaptureError::NoLink)?;
    let object_suffix = format!("/{OBJECT}");
    let objects = link.iter().filter(|w| w.ends_with(&object_suffix)).count();
    if objects != 1 {
        return Err(CaptureError::Objects(objects));
    }
    let link: Vec<String> = link[1..]
        .iter()
        .map(|&w| {
            if w.ends_with(&object_suffix) {
                OBJECT.to_owned()
            } else {
                w.to_owned()
            }
        })
        .collect();
    Ok(Steps { clang, link })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What zig 0.17.0 prints for `zig cc ... -o main.wasm main.c` (paths shortened to ones
    /// that exist everywhere).
    fn messages(object: &str) -> String {
        format!(
            "/t/zig clang main.c --no-default-config -target wasm32-unknown-wasip1-unknown -MD -MV \
             -MF /t/zig-cache/tmp/77a9-main.o.d -fhosted -nostdinc -isystem /tmp -O2 \
             -Xclang -target-cpu -Xclang lime1 -UNDEBUG -std=gnu17 -c -o /t/zig-cache/tmp/77a9-main.o\n\
             wasm-ld --error-limit=0 --export-memory -s --entry _start -z stack-size=8388608 \
             -o main.wasm /tmp {object} /tmp\n"
        )
    }

    #[test]
    fn the_driver_commands_become_steps_for_any_job() {
        let steps = parse(CLang::C, &messages("/t/zig-cache/o/d02e/main.o")).unwrap();
        assert_eq!(
            steps.clang.join(" "),
            "--no-default-config -target wasm32-unknown-wasip1-unknown -fhosted -nostdinc \
             -isystem /tmp -O2 -Xclang -target-cpu -Xclang lime1 -UNDEBUG -std=gnu17"
        );
        assert_eq!(
            steps.link.join(" "),
            "--error-limit=0 --export-memory -s --entry _start -z stack-size=8388608 \
             -o main.wasm /tmp main.o /tmp"
        );
        let pch = Path::new("/tmp/x.pch");
        let compile = steps.compile_args(CLang::C, Some(pch)).join(" ");
        assert!(
            compile.starts_with("clang main.c --no-default-config "),
            "{compile}"
        );
        assert!(
            compile.ends_with(" -std=gnu17 -include-pch /tmp/x.pch -c -o main.o"),
            "{compile}"
        );
        assert_eq!(steps.link_args()[0], "wasm-ld");
    }

    #[test]
    fn kept_steps_whose_libraries_are_gone_are_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let library = dir.path().join("libc.a");
        std::fs::write(&library, b"!<arch>\n").unwrap();
        let steps = Steps {
            clang: vec!["-isystem".into(), "/no/such/include".into()],
            link: vec![
                "-o".into(),
                OUTPUT.into(),
                library.display().to_string(),
                OBJECT.into(),
            ],
        };
        let direct = Direct {
            c: steps.clone(),
            cpp: steps,
        };
        // An include directory clang skips may be missing; a library may not.
        assert!(libraries_exist(&direct));
        let kept = dir.path().join("direct.json");
        direct.store(&kept).unwrap();
        assert_eq!(Direct::load(&kept), Some(direct.clone()));
        std::fs::remove_file(&library).unwrap();
        assert!(!libraries_exist(&direct));
        std::fs::write(&kept, b"{ not json").unwrap();
        assert_eq!(Direct::load(&kept), None);
    }

    #[test]
    fn commands_that_cannot_be_replayed_are_refused() {
        // No compile of this language's source.
        assert_eq!(
            parse(CLang::Cpp, &messages("/t/o/main.o")),
            Err(CaptureError::NoCompile("main.cpp"))
        );
        // The program's object not among the linker's inputs.
        assert_eq!(
            parse(CLang::C, &messages("/t/o/other.o")),
            Err(CaptureError::Objects(0))
        );
        // A compile that does not write an object.
        let no_object = messages("/t/o/main.o").replace(" -c -o /t/zig-cache/tmp/77a9-main.o", "");
        assert!(matches!(
            parse(CLang::C, &no_object),
            Err(CaptureError::CompileShape(_))
        ));
        assert_eq!(
            parse(CLang::C, "1 error generated.\n"),
            Err(CaptureError::NoCompile("main.c"))
        );
    }
}
