//! The sandbox's stdout and stderr: in memory, capped, and stopping the guest on the write
//! that crosses the cap.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};

pub(crate) const OUTPUT_LIMIT_MESSAGE: &str = "sandbox output limit reached";

/// An in-memory stdout/stderr that keeps at most `cap` bytes. The write that crosses the cap
/// is cut to fit, marks the stream truncated, and traps, so a flood ends at once.
#[derive(Clone)]
pub(crate) struct CappedPipe {
    buffer: Arc<Mutex<Vec<u8>>>,
    truncated: Arc<AtomicBool>,
    cap: usize,
}

impl CappedPipe {
    pub(crate) fn new(cap: usize) -> Self {
        CappedPipe {
            buffer: Arc::default(),
            truncated: Arc::default(),
            cap,
        }
    }

    pub(crate) fn contents(&self) -> Vec<u8> {
        self.buffer.lock().map(|b| b.clone()).unwrap_or_default()
    }

    pub(crate) fn truncated(&self) -> bool {
        self.truncated.load(Ordering::Relaxed)
    }

    pub(crate) fn append(&self, bytes: &[u8]) -> usize {
        let Ok(mut buffer) = self.buffer.lock() else {
            return 0;
        };
        let room = self.cap.saturating_sub(buffer.len());
        let taken = bytes.len().min(room);
        buffer.extend_from_slice(&bytes[..taken]);
        if taken < bytes.len() {
            self.truncated.store(true, Ordering::Relaxed);
        }
        taken
    }
}

impl IsTerminal for CappedPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedPipe {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for CappedPipe {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        if self.append(&bytes) < bytes.len() {
            return Err(StreamError::Trap(wasmtime::Error::msg(
                OUTPUT_LIMIT_MESSAGE,
            )));
        }
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    /// As much as the cap leaves, plus one byte (so the write that crosses it traps). A
    /// smaller permit splits a large write, and CPython for WASI does not write the rest of a
    /// short write: a 100 KB `print` came out as its first 64 KiB, with status `ok`.
    fn check_write(&mut self) -> StreamResult<usize> {
        let used = self.buffer.lock().map_or(self.cap, |b| b.len());
        Ok(self.cap.saturating_sub(used).saturating_add(1))
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CappedPipe {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for CappedPipe {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let taken = self.append(buf);
        if taken == 0 && !buf.is_empty() {
            return std::task::Poll::Ready(Err(std::io::Error::other(OUTPUT_LIMIT_MESSAGE)));
        }
        std::task::Poll::Ready(Ok(taken))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_pipe_keeps_the_prefix_and_marks_truncation() {
        let mut pipe = CappedPipe::new(5);
        assert!(pipe.write(Bytes::from_static(b"abc")).is_ok());
        assert!(!pipe.truncated());
        assert!(matches!(
            pipe.write(Bytes::from_static(b"defg")),
            Err(StreamError::Trap(_))
        ));
        assert!(pipe.truncated());
        assert_eq!(pipe.contents(), b"abcde");
    }
}
