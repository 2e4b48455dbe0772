//! The pinned C/C++ toolchain: zig 0.17.0 from the PyPI wheel `ziglang`, found in, fetched
//! into and unpacked under `<cache>/toolchains/zig-0.17.0/`.
//!
//! Layout of an installed toolchain:
//!
//! | path | what |
//! |---|---|
//! | `ziglang/zig`, `ziglang/lib/` | the wheel's zig binary and its library sources (read-only to jobs) |
//! | `include-<hash>/bits/stdc++.h`, `thread`, `fstream`, `testlib.h` | our `<bits/stdc++.h>`, `<thread>`, `<fstream>` and `testlib.h` for wasm32-wasi (written by the compiler) |
//! | `zig-cache/` | zig's global cache: wasi-libc, libc++ and compiler-rt built on first use |
//! | `pch/` | the precompiled `<bits/stdc++.h>`, built by the warm-up |
//! | `warm-<hash>` | marks that the warm-up finished for these flags and this header |
//!
//! The wheel is checked against its pinned SHA-256 before anything is unpacked; it is
//! unpacked into a temporary directory beside the target and renamed into place, so a reader
//! never sees half a toolchain and of two concurrent installs the first rename wins (the
//! other's copy is removed). Once installed nothing is fetched again: it works offline.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::engine::digest::hex;

use super::error::CcError;

/// The pinned zig version.
pub const ZIG_VERSION: &str = "0.17.0";

/// The `<bits/stdc++.h>` shipped to every C++ compile.
pub(crate) const BITS_STDCXX_H: &str = include_str!("stdc++.h");

/// The `<thread>` shipped to every C++ compile: `std::this_thread` for a single thread.
pub(crate) const THREAD_H: &str = include_str!("thread.h");

/// The `<fstream>` shipped to every C++ compile: libc++'s file streams, which its wasm32-wasi
/// configuration leaves out, over the guest's files.
pub(crate) const FSTREAM_H: &str = include_str!("fstream");

/// The `testlib.h` shipped to every C++ compile: testlib 0.9.44 (`vendor/testlib/`) with the
/// edits of `vendor/testlib/testlib.patch`, so that checkers written against it compile
/// without C++ exceptions.
pub(crate) const TESTLIB_H: &str = include_str!("testlib.h");

/// The headers shipped to every C++ compile: where they go under
/// [`Toolchain::include_dir`], and their text.
pub(crate) const SHIPPED_HEADERS: [(&str, &str); 4] = [
    ("bits/stdc++.h", BITS_STDCXX_H),
    ("thread", THREAD_H),
    ("fstream", FSTREAM_H),
    ("testlib.h", TESTLIB_H),
];

/// The SHA-256 of the shipped headers, hex: what names their directory, and part of every
/// key that depends on them.
pub(crate) fn shipped_headers_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| {
        let mut hasher = Sha256::new();
        for (path, text) in SHIPPED_HEADERS {
            hasher.update((path.len() as u64).to_le_bytes());
            hasher.update(path.as_bytes());
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        }
        hex(&hasher.finalize())
    })
}

/// One pinned wheel of PyPI `ziglang` (from `https://pypi.org/simple/ziglang/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedWheel {
    /// `std::env::consts::OS` of the host it runs on.
    pub os: &'static str,
    /// `std::env::consts::ARCH` of the host it runs on.
    pub arch: &'static str,
    /// The wheel's file name.
    pub file_name: &'static str,
    /// Where it is downloaded from.
    pub url: &'static str,
    /// Its SHA-256, lowercase hex.
    pub sha256: &'static str,
    /// Its size in bytes.
    pub size: u64,
}

/// The wheels of `ziglang` 0.17.0 this crate accepts, one per supported host.
pub const PINNED_WHEELS: [PinnedWheel; 2] = [
    PinnedWheel {
        os: "linux",
        arch: "x86_64",
        file_name: "ziglang-0.17.0-py3-none-manylinux_2_12_x86_64.manylinux2010_x86_64.musllinux_1_1_x86_64.whl",
        url: "https://files.pythonhosted.org/packages/fe/6f/e1c380fe61db36cb464d5d4d18c557338812500986885373e2550d4ebf6b/ziglang-0.17.0-py3-none-manylinux_2_12_x86_64.manylinux2010_x86_64.musllinux_1_1_x86_64.whl",
        sha256: "97079827064a7492cce5541ceb438ae8003ce1e54e399676da2d62fb7a5dc08b",
        size: 101_011_302,
    },
    PinnedWheel {
        os: "linux",
        arch: "aarch64",
        file_name: "ziglang-0.17.0-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl",
        url: "https://files.pythonhosted.org/packages/02/21/abee2f0524f54fe3e8783748b9df79bb07d4b955e6b465677d1cfbda335c/ziglang-0.17.0-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl",
        sha256: "d2804f94f54f7fcf8169f4b212a619ad688a4e2e6592e976f0cf2e58e2cd8af3",
        size: 97_992_724,
    },
];

/// The wheel pinned for this host.
pub fn pinned_wheel() -> Result<&'static PinnedWheel, CcError> {
    PINNED_WHEELS
        .iter()
        .find(|w| w.os == std::env::consts::OS && w.arch == std::env::consts::ARCH)
        .ok_or(CcError::UnsupportedHost {
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
        })
}

/// How far an install has got, for a progress line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Bytes of the wheel downloaded (or read, for a local wheel), of `total` when known.
    Fetch {
        /// Bytes so far.
        done: u64,
        /// The wheel's size.
        total: Option<u64>,
    },
    /// Files unpacked, of `total`.
    Unpack {
        /// Files so far.
        done: u64,
        /// Files in the wheel.
        total: u64,
    },
}

/// What an install did.
#[derive(Debug, Clone)]
pub struct InstallReport {
    /// The installed toolchain.
    pub toolchain: Toolchain,
    /// It was already installed: nothing was fetched or unpacked.
    pub already_installed: bool,
    /// Bytes downloaded (0 for a local wheel or an existing install).
    pub downloaded_bytes: u64,
    /// Milliseconds spent fetching, checking and unpacking.
    pub elapsed_ms: u64,
}

/// An installed zig toolchain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    root: PathBuf,
}

impl Toolchain {
    /// Where the toolchain lives under a grpo cache directory (`<cache_root>/toolchains/zig-0.17.0`).
    pub fn dir_in(cache_root: &Path) -> PathBuf {
        cache_root
            .join("toolchains")
            .join(format!("zig-{ZIG_VERSION}"))
    }

    /// The grpo cache directory ([`default_cache_dir`](crate::engine::runtime::default_cache_dir)).
    pub fn default_cache_root() -> Result<PathBuf, CcError> {
        crate::engine::runtime::default_cache_dir().ok_or(CcError::NoCacheDir)
    }

    /// The toolchain installed under `cache_root`, or [`CcError::Missing`] saying how to get it.
    pub fn locate(cache_root: &Path) -> Result<Toolchain, CcError> {
        let toolchain = Toolchain {
            root: Self::dir_in(cache_root),
        };
        if toolchain.zig().is_file() {
            Ok(toolchain)
        } else {
            Err(CcError::Missing {
                dir: toolchain.root,
                version: ZIG_VERSION,
                url: pinned_wheel()
                    .map(|w| w.url)
                    .unwrap_or("(no wheel for this host)"),
            })
        }
    }

    /// The toolchain under the default cache directory.
    pub fn locate_default() -> Result<Toolchain, CcError> {
        Self::locate(&Self::default_cache_root()?)
    }

    /// The toolchain under the default cache directory, installed first when it is missing:
    /// the C/C++ path needs no install step. One install runs at a time on a host (a lock
    /// file beside the toolchains, so concurrent first uses in any process install once and
    /// the others wait for it). It installs from `GRPO_ZIG_WHEEL` when that names a local copy
    /// of the pinned wheel, else from PyPI; with [`NO_DOWNLOAD_ENV`] set it never downloads,
    /// and a missing toolchain is the [`CcError::Missing`] that says how to install from a
    /// file. Blocking: async callers run it on a blocking thread.
    pub fn obtain_default() -> Result<Toolchain, CcError> {
        let root = Self::default_cache_root()?;
        if let Ok(toolchain) = Self::locate(&root) {
            return Ok(toolchain);
        }
        let local_wheel = std::env::var_os("GRPO_ZIG_WHEEL").is_some();
        if downloads_forbidden() && !local_wheel {
            return Self::locate(&root);
        }
        let parent = prepare_parent(&root)?;
        let lock_path = parent.join(".install.lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| CcError::io(&lock_path, e))?;
        lock.lock().map_err(|e| CcError::io(&lock_path, e))?;
        if let Ok(toolchain) = Self::locate(&root) {
            // Another process or thread installed it while this one waited.
            return Ok(toolchain);
        }
        tracing::info!(
            dir = %Self::dir_in(&root).display(),
            "the C/C++ toolchain is not installed: installing it now, once \
             (`grpo toolchain install` does this ahead of time; {NO_DOWNLOAD_ENV}=1 forbids it)"
        );
        let report = Self::install_default(&mut |_| {})?;
        if let Some(report) = &report {
            tracing::info!(
                downloaded_bytes = report.downloaded_bytes,
                ms = report.elapsed_ms,
                "C/C++ toolchain installed"
            );
        }
        // The lock is released when `lock` closes.
        Self::locate(&root)
    }

    /// Makes sure the toolchain is under the default cache directory: `None` when it already
    /// was, else the report of installing it from `GRPO_ZIG_WHEEL` (a local copy of the pinned
    /// wheel) when that is set, or from PyPI (pinned URL and SHA-256), as
    /// `grpo toolchain install` does.
    pub fn install_default(
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Option<InstallReport>, CcError> {
        let root = Toolchain::default_cache_root()?;
        if Toolchain::locate(&root).is_ok() {
            return Ok(None);
        }
        let report = match std::env::var_os("GRPO_ZIG_WHEEL") {
            Some(wheel) => Toolchain::install_from_file(&root, wheel.as_ref(), progress)?,
            None => Toolchain::install(&root, progress)?,
        };
        Ok(Some(report))
    }

    /// Downloads the pinned wheel for this host over HTTPS, checks its SHA-256 and installs it
    /// under `cache_root` (nothing is downloaded when it is already installed).
    pub fn install(
        cache_root: &Path,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<InstallReport, CcError> {
        let start = Instant::now();
        if let Ok(toolchain) = Self::locate(cache_root) {
            return Ok(already(toolchain, start));
        }
        let wheel = pinned_wheel()?;
        let parent = prepare_parent(cache_root)?;
        let mut file = tempfile::Builder::new()
            .prefix(".download-")
            .suffix(".whl")
            .tempfile_in(&parent)
            .map_err(|e| CcError::io(&parent, e))?;
        let download = |reason: String| CcError::Download {
            url: wheel.url.to_owned(),
            reason,
        };
        tracing::info!(url = wheel.url, "downloading the zig toolchain");
        // The host's trust store (with rustls): behind a TLS-inspecting proxy whose CA the
        // host trusts the download works; the pinned hash is what guarantees the content.
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .tls_config(
                ureq::tls::TlsConfig::builder()
                    .root_certs(ureq::tls::RootCerts::PlatformVerifier)
                    .build(),
            )
            .build()
            .into();
        let response = agent
            .get(wheel.url)
            .call()
            .map_err(|e| download(e.to_string()))?;
        let total = response.body().content_length().or(Some(wheel.size));
        let mut body = response
            .into_body()
            .into_with_config()
            .limit(wheel.size.saturating_add(1 << 20))
            .reader();
        let digest = copy_hashing(&mut body, file.as_file_mut(), total, progress)
            .map_err(|e| download(e.to_string()))?;
        check_digest(wheel, wheel.url, &digest)?;
        let downloaded_bytes = file
            .as_file()
            .metadata()
            .map_err(|e| CcError::io(file.path(), e))?
            .len();
        let toolchain = unpack_into_place(file.path(), cache_root, progress)?;
        Ok(InstallReport {
            toolchain,
            already_installed: false,
            downloaded_bytes,
            elapsed_ms: elapsed_ms(start),
        })
    }

    /// Installs from a local copy of the pinned wheel (for hosts without network), still
    /// checking its SHA-256 before unpacking.
    pub fn install_from_file(
        cache_root: &Path,
        wheel_path: &Path,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<InstallReport, CcError> {
        let start = Instant::now();
        if let Ok(toolchain) = Self::locate(cache_root) {
            return Ok(already(toolchain, start));
        }
        let wheel = pinned_wheel()?;
        let mut file = File::open(wheel_path).map_err(|e| CcError::io(wheel_path, e))?;
        let total = file.metadata().map(|m| m.len()).ok();
        let digest = copy_hashing(&mut file, &mut io::sink(), total, progress)
            .map_err(|e| CcError::io(wheel_path, e))?;
        check_digest(wheel, &wheel_path.display().to_string(), &digest)?;
        prepare_parent(cache_root)?;
        let toolchain = unpack_into_place(wheel_path, cache_root, progress)?;
        Ok(InstallReport {
            toolchain,
            already_installed: false,
            downloaded_bytes: 0,
            elapsed_ms: elapsed_ms(start),
        })
    }

    /// The toolchain's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The zig binary.
    pub fn zig(&self) -> PathBuf {
        self.root.join("ziglang").join("zig")
    }

    /// The directory holding our `bits/stdc++.h` and `thread`, named by their hash so that a
    /// newer header never meets a precompiled older one (written by
    /// [`Toolchain::write_header`]).
    pub fn include_dir(&self) -> PathBuf {
        self.root
            .join(format!("include-{}", &shipped_headers_hash()[..16]))
    }

    /// Writes our headers into [`Toolchain::include_dir`] unless they are there (atomically:
    /// a concurrent writer writes the same bytes).
    pub fn write_header(&self) -> Result<(), CcError> {
        for (path, text) in SHIPPED_HEADERS {
            let header = self.include_dir().join(path);
            if header.is_file() {
                continue;
            }
            let dir = header.parent().unwrap_or(&self.root).to_owned();
            fs::create_dir_all(&dir).map_err(|e| CcError::io(&dir, e))?;
            let mut file =
                tempfile::NamedTempFile::new_in(&dir).map_err(|e| CcError::io(&dir, e))?;
            file.write_all(text.as_bytes())
                .map_err(|e| CcError::io(file.path(), e))?;
            file.persist(&header)
                .map_err(|e| CcError::io(&header, e.error))?;
        }
        Ok(())
    }

    /// zig's global cache (`ZIG_GLOBAL_CACHE_DIR`).
    pub fn global_cache_dir(&self) -> PathBuf {
        self.root.join("zig-cache")
    }

    /// Where compiled modules are kept on disk when asked for (`<cache>/cc-modules/zig-0.17.0`):
    /// outside the toolchain directory, which every compile can read, so that no source can
    /// `#embed` the module of another.
    pub fn module_cache_dir(&self) -> PathBuf {
        let version_dir = format!("zig-{ZIG_VERSION}");
        match self.root.parent() {
            Some(toolchains) => toolchains.with_file_name("cc-modules").join(version_dir),
            None => PathBuf::from("cc-modules").join(version_dir),
        }
    }

    /// Where precompiled headers are kept.
    pub fn pch_dir(&self) -> PathBuf {
        self.root.join("pch")
    }
}

fn already(toolchain: Toolchain, start: Instant) -> InstallReport {
    InstallReport {
        toolchain,
        already_installed: true,
        downloaded_bytes: 0,
        elapsed_ms: elapsed_ms(start),
    }
}

pub(crate) fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Creates `<cache_root>/toolchains` and returns it.
/// The environment variable that forbids fetching the toolchain on first use (air-gapped
/// hosts): any value but empty, `0`, `false` or `no`.
pub const NO_DOWNLOAD_ENV: &str = "GRPO_NO_DOWNLOAD";

fn downloads_forbidden() -> bool {
    std::env::var(NO_DOWNLOAD_ENV).is_ok_and(|v| {
        let v = v.trim().to_ascii_lowercase();
        !(v.is_empty() || v == "0" || v == "false" || v == "no")
    })
}

fn prepare_parent(cache_root: &Path) -> Result<PathBuf, CcError> {
    let parent = cache_root.join("toolchains");
    fs::create_dir_all(&parent).map_err(|e| CcError::io(&parent, e))?;
    Ok(parent)
}

/// Copies `from` into `to`, hashing it, reporting progress every MiB.
fn copy_hashing(
    from: &mut dyn Read,
    to: &mut dyn Write,
    total: Option<u64>,
    progress: &mut dyn FnMut(Progress),
) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut done = 0u64;
    let mut reported = 0u64;
    progress(Progress::Fetch { done, total });
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buf[..n];
        hasher.update(chunk);
        to.write_all(chunk)?;
        done += n as u64;
        if done - reported >= 1 << 20 {
            reported = done;
            progress(Progress::Fetch { done, total });
        }
    }
    to.flush()?;
    progress(Progress::Fetch { done, total });
    Ok(hex(&hasher.finalize()))
}

fn check_digest(wheel: &PinnedWheel, what: &str, actual: &str) -> Result<(), CcError> {
    if actual == wheel.sha256 {
        Ok(())
    } else {
        Err(CcError::HashMismatch {
            what: what.to_owned(),
            expected: wheel.sha256,
            actual: actual.to_owned(),
        })
    }
}

/// Unpacks the wheel's `ziglang/` tree and our header into a temporary directory beside the
/// target, then renames it into place (keeping an install that won a race).
fn unpack_into_place(
    wheel_path: &Path,
    cache_root: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Toolchain, CcError> {
    let target = Toolchain::dir_in(cache_root);
    let parent = prepare_parent(cache_root)?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".zig-{ZIG_VERSION}-"))
        .tempdir_in(&parent)
        .map_err(|e| CcError::io(&parent, e))?;
    let unpack = |reason: String| CcError::Unpack {
        path: wheel_path.to_owned(),
        reason,
    };
    let file = File::open(wheel_path).map_err(|e| CcError::io(wheel_path, e))?;
    let mut archive =
        zip::ZipArchive::new(io::BufReader::new(file)).map_err(|e| unpack(e.to_string()))?;
    let total = archive.len() as u64;
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(|e| unpack(e.to_string()))?;
        let Some(relative) = entry.enclosed_name() else {
            return Err(unpack(format!(
                "unsafe path `{}`",
                String::from_utf8_lossy(entry.name_raw())
            )));
        };
        if !relative.starts_with("ziglang") {
            continue; // the wheel's dist-info and Python wrapper are not needed
        }
        let out = staging.path().join(&relative);
        if entry.is_dir() {
            fs::create_dir_all(&out).map_err(|e| CcError::io(&out, e))?;
            continue;
        }
        if let Some(dir) = out.parent() {
            fs::create_dir_all(dir).map_err(|e| CcError::io(dir, e))?;
        }
        let mut dest = File::create(&out).map_err(|e| CcError::io(&out, e))?;
        io::copy(&mut entry, &mut dest).map_err(|e| CcError::io(&out, e))?;
        let executable = entry.unix_mode().is_some_and(|m| m & 0o111 != 0)
            || relative == Path::new("ziglang/zig");
        set_mode(&out, if executable { 0o755 } else { 0o644 })?;
        if index % 256 == 0 {
            progress(Progress::Unpack {
                done: index as u64,
                total,
            });
        }
    }
    progress(Progress::Unpack { done: total, total });
    let zig = staging.path().join("ziglang/zig");
    if !zig.is_file() {
        return Err(unpack("no `ziglang/zig` in the wheel".to_owned()));
    }
    for dir in ["zig-cache", "pch"] {
        let dir = staging.path().join(dir);
        fs::create_dir_all(&dir).map_err(|e| CcError::io(&dir, e))?;
    }
    let staged = staging.keep();
    match fs::rename(&staged, &target) {
        Ok(()) => {
            tracing::info!(dir = %target.display(), "installed the zig toolchain");
        }
        Err(e) if target.join("ziglang/zig").is_file() => {
            tracing::info!(error = %e, "another install finished first; keeping it");
            if let Err(e) = fs::remove_dir_all(&staged) {
                tracing::warn!(dir = %staged.display(), error = %e, "could not remove a staging copy");
            }
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&staged);
            return Err(CcError::io(&target, e));
        }
    }
    Toolchain::locate(cache_root)
}

fn set_mode(path: &Path, mode: u32) -> Result<(), CcError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(|e| CcError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_toolchain_says_how_to_install_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = Toolchain::locate(dir.path()).expect_err("nothing installed");
        let message = err.to_string();
        assert!(message.contains("grpo toolchain install"), "{message}");
        assert!(message.contains("--from-file"), "{message}");
        assert!(message.contains("files.pythonhosted.org"), "{message}");
    }

    #[test]
    fn a_wheel_with_the_wrong_hash_is_refused_before_unpacking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fake = dir.path().join("fake.whl");
        fs::write(&fake, b"not a wheel").expect("write");
        let err = Toolchain::install_from_file(dir.path(), &fake, &mut |_| {})
            .expect_err("hash mismatch");
        assert!(matches!(err, CcError::HashMismatch { .. }), "{err}");
        assert!(!dir.path().join("toolchains").exists());
    }

    #[test]
    fn every_pin_is_a_pypi_url_with_a_sha256() {
        for wheel in PINNED_WHEELS {
            assert!(wheel.url.starts_with("https://files.pythonhosted.org/"));
            assert!(wheel.url.ends_with(wheel.file_name));
            assert_eq!(wheel.sha256.len(), 64);
        }
    }
}
