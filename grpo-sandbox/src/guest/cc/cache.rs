//! The compile cache: a GRPO group repeats programs, and a compile costs tens to thousands of
//! times a run, so results are kept by the SHA-256 of everything that decides them (language,
//! flags, toolchain version, source): modules and ordinary compile errors in a small
//! least-recently-used map in memory, modules optionally on disk as well.

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

use sha2::{Digest, Sha256};

/// The cache key: SHA-256 over the length-prefixed parts.
pub type Key = [u8; 32];

/// Hashes each part with its length first, so no two part lists collide by concatenation.
pub fn key(parts: &[&[u8]]) -> Key {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// A result worth remembering.
#[derive(Debug, Clone)]
pub enum Entry {
    /// The module.
    Module(Arc<[u8]>),
    /// The compiler's verdict on a source that does not compile (an ordinary error exit, never
    /// a limit or a timeout, which may not repeat).
    Failed {
        /// The exit code.
        return_code: i32,
        /// The messages.
        stderr: String,
    },
}

/// A bounded least-recently-used map.
#[derive(Debug)]
pub struct Lru {
    capacity: usize,
    clock: u64,
    entries: HashMap<Key, (u64, Entry)>,
}

impl Lru {
    /// An empty cache of at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Lru {
            capacity,
            clock: 0,
            entries: HashMap::new(),
        }
    }

    /// The entry for `key`, now the most recently used.
    pub fn get(&mut self, key: &Key) -> Option<Entry> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(key).map(|(used, entry)| {
            *used = clock;
            entry.clone()
        })
    }

    /// Stores `entry`, evicting the least recently used one when full.
    pub fn put(&mut self, key: Key, entry: Entry) {
        if self.capacity == 0 {
            return;
        }
        self.clock += 1;
        if !self.entries.contains_key(&key) && self.entries.len() >= self.capacity {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| *k);
            if let Some(oldest) = oldest {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(key, (self.clock, entry));
    }

    /// How many entries are held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Modules on disk, one file per key (`<dir>/<hex>.wasm`), written atomically.
#[derive(Debug, Clone)]
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: PathBuf) -> Self {
        DiskCache { dir }
    }

    fn path(&self, key: &Key) -> PathBuf {
        self.dir
            .join(format!("{}.wasm", crate::engine::digest::hex(key)))
    }

    /// The module stored for `key`, if any and if it is one.
    pub fn get(&self, key: &Key) -> Option<Arc<[u8]>> {
        let bytes = fs::read(self.path(key)).ok()?;
        bytes.starts_with(b"\0asm").then(|| bytes.into())
    }

    /// Stores a module; a failure only costs a later compile.
    pub fn put(&self, key: &Key, wasm: &[u8]) {
        let write = || -> std::io::Result<()> {
            fs::create_dir_all(&self.dir)?;
            let mut file = tempfile::NamedTempFile::new_in(&self.dir)?;
            std::io::Write::write_all(&mut file, wasm)?;
            file.persist(self.path(key)).map_err(|e| e.error)?;
            Ok(())
        };
        if let Err(e) = write() {
            tracing::debug!(dir = %self.dir.display(), error = %e, "could not cache a module on disk");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(byte: u8) -> Entry {
        Entry::Module(vec![byte].into())
    }

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let mut lru = Lru::new(2);
        lru.put([1; 32], module(1));
        lru.put([2; 32], module(2));
        assert!(lru.get(&[1; 32]).is_some()); // 2 is now the oldest
        lru.put([3; 32], module(3));
        assert_eq!(lru.len(), 2);
        assert!(lru.get(&[2; 32]).is_none());
        assert!(lru.get(&[1; 32]).is_some());
        assert!(lru.get(&[3; 32]).is_some());
    }

    #[test]
    fn keys_do_not_collide_by_concatenation() {
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_eq!(key(&[b"ab", b"c"]), key(&[b"ab", b"c"]));
    }
}
