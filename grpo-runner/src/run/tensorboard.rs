//! TensorBoard event files, written beside `metrics.jsonl` (which stays the source of truth).
//!
//! The format is TensorFlow's record file of `Event` protocol buffers, as TensorBoard reads
//! it: each record is its length (u64, little-endian), the masked CRC-32C of those 8 bytes,
//! the bytes of one `Event`, and their masked CRC-32C. The first event carries
//! `file_version = "brain.Event:2"`; each later one a `Summary` of scalar values
//! (`simple_value`) at one step. Only the few protobuf fields this needs are encoded, by hand.
//!
//! Tags are the JSON records' keys, nested ones as `parent/key` (`rewards/accuracy`); numbers
//! are written, `true`/`false` as 1/0, anything else (text, null, lists) is left out.
//! Evaluation records go under `eval/`.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};

/// The name every event file of a run starts with (TensorBoard finds files by it).
pub const PREFIX: &str = "events.out.tfevents.";

/// An open event file.
#[derive(Debug)]
pub struct EventWriter {
    path: PathBuf,
    file: File,
}

impl EventWriter {
    /// Creates a new event file in `dir` (named as TensorFlow names them, with a `.grpo`
    /// suffix) and writes its version record.
    pub fn create(dir: &Path) -> Result<EventWriter> {
        let now = wall_time();
        let host = std::fs::read_to_string("/etc/hostname")
            .map(|h| h.trim().to_owned())
            .ok()
            .filter(|h| !h.is_empty() && !h.contains('/'))
            .unwrap_or_else(|| "localhost".to_owned());
        let path = dir.join(format!(
            "{PREFIX}{}.{host}.{}.grpo",
            now as u64,
            std::process::id()
        ));
        let file = File::create(&path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        let mut writer = EventWriter { path, file };
        let mut event = Vec::new();
        put_double(&mut event, 1, now);
        put_bytes(&mut event, 3, b"brain.Event:2");
        writer.write_record(&event)?;
        Ok(writer)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the scalars of one JSON record at `step`, tags prefixed with `prefix` (`""` or
    /// `"eval/"`). A record with no number in it writes nothing.
    pub fn write_scalars(&mut self, step: u64, prefix: &str, record: &Value) -> Result<()> {
        let mut scalars = Vec::new();
        flatten(prefix, record, &mut scalars);
        if scalars.is_empty() {
            return Ok(());
        }
        let mut summary = Vec::new();
        for (tag, value) in &scalars {
            let mut v = Vec::new();
            put_bytes(&mut v, 1, tag.as_bytes());
            put_float(&mut v, 2, *value as f32);
            put_bytes(&mut summary, 1, &v);
        }
        let mut event = Vec::new();
        put_double(&mut event, 1, wall_time());
        put_varint_field(&mut event, 2, step);
        put_bytes(&mut event, 5, &summary);
        self.write_record(&event)
    }

    /// Pushes what was written to the operating system (TensorBoard reads files as they
    /// grow).
    pub fn flush(&mut self) -> Result<()> {
        self.file.flush().map_err(|source| Error::Io {
            path: self.path.clone(),
            source,
        })
    }

    fn write_record(&mut self, data: &[u8]) -> Result<()> {
        let len = (data.len() as u64).to_le_bytes();
        let mut record = Vec::with_capacity(data.len() + 16);
        record.extend_from_slice(&len);
        record.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
        record.extend_from_slice(data);
        record.extend_from_slice(&masked_crc32c(data).to_le_bytes());
        // One write per record, as the JSON lines: a kill leaves at most the last one torn,
        // and TensorBoard stops reading at a torn record.
        self.file.write_all(&record).map_err(|source| Error::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// Removes the run's own event files in `dir` (those ending in `.grpo`): a resumed run
/// writes them again from its JSON records.
pub fn remove_event_files(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(PREFIX) && name.ends_with(".grpo") {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|source| Error::Io { path, source })?;
        }
    }
    Ok(())
}

/// The numeric leaves of a record (its `step` aside), as `(tag, value)` in key order.
fn flatten(prefix: &str, record: &Value, out: &mut Vec<(String, f64)>) {
    if let Value::Object(map) = record {
        for (key, v) in map.iter().filter(|(k, _)| k.as_str() != "step") {
            leaves(&format!("{prefix}{key}"), v, out);
        }
    }
}

fn leaves(tag: &str, value: &Value, out: &mut Vec<(String, f64)>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                leaves(&format!("{tag}/{key}"), v, out);
            }
        }
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                out.push((tag.to_owned(), x));
            }
        }
        Value::Bool(b) => out.push((tag.to_owned(), if *b { 1.0 } else { 0.0 })),
        Value::Null | Value::String(_) | Value::Array(_) => {}
    }
}

fn wall_time() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint field (wire type 0).
fn put_varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    put_varint(out, u64::from(field) << 3);
    put_varint(out, v);
}

/// A 64-bit field (wire type 1).
fn put_double(out: &mut Vec<u8>, field: u32, v: f64) {
    put_varint(out, (u64::from(field) << 3) | 1);
    out.extend_from_slice(&v.to_le_bytes());
}

/// A length-delimited field (wire type 2).
fn put_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_varint(out, (u64::from(field) << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A 32-bit field (wire type 5).
fn put_float(out: &mut Vec<u8>, field: u32, v: f32) {
    put_varint(out, (u64::from(field) << 3) | 5);
    out.extend_from_slice(&v.to_le_bytes());
}

/// CRC-32C (Castagnoli), as TFRecord files checksum their records.
fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// TensorFlow's masked CRC: rotated right by 15 bits, plus a constant.
fn masked_crc32c(data: &[u8]) -> u32 {
    let crc = crc32c(data);
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn crc32c_matches_the_published_check_values() {
        // RFC 3720 B.4 and the usual "123456789" check value.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62A8_AB43);
        assert_eq!(crc32c(b""), 0);
    }

    #[test]
    fn varints_are_protobufs() {
        let mut out = Vec::new();
        put_varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        let mut out = Vec::new();
        put_varint_field(&mut out, 2, 1);
        assert_eq!(out, [0x10, 0x01]);
        let mut out = Vec::new();
        put_float(&mut out, 2, 1.0);
        assert_eq!(out, [0x15, 0, 0, 0x80, 0x3f]);
    }

    #[test]
    fn records_flatten_to_tags() {
        let mut out = Vec::new();
        let record = json!({"step": 3, "loss": 0.5, "rewards": {"accuracy": 1.0, "format": 0},
                            "kl": null, "stopped": true, "note": "x", "lens": [1, 2]});
        flatten("", &record, &mut out);
        assert_eq!(
            out,
            [
                ("loss".to_owned(), 0.5),
                ("rewards/accuracy".to_owned(), 1.0),
                ("rewards/format".to_owned(), 0.0),
                ("stopped".to_owned(), 1.0),
            ]
        );
        let mut out = Vec::new();
        flatten("eval/", &json!({"step": 2, "accuracy": 0.25}), &mut out);
        assert_eq!(out, [("eval/accuracy".to_owned(), 0.25)]);
    }

    #[test]
    fn each_record_is_framed_with_its_checksums() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EventWriter::create(dir.path()).unwrap();
        w.write_scalars(1, "", &json!({"loss": 2.0})).unwrap();
        w.flush().unwrap();
        let bytes = std::fs::read(w.path()).unwrap();
        let mut at = 0;
        let mut records = 0;
        while at < bytes.len() {
            let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
            let len_crc = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap());
            assert_eq!(len_crc, masked_crc32c(&bytes[at..at + 8]));
            let data = &bytes[at + 12..at + 12 + len];
            let crc = u32::from_le_bytes(bytes[at + 12 + len..at + 16 + len].try_into().unwrap());
            assert_eq!(crc, masked_crc32c(data));
            at += 16 + len;
            records += 1;
        }
        assert_eq!((at, records), (bytes.len(), 2));
        remove_event_files(dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
