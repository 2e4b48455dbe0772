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
///
/// An interpreter session's streams ([`CappedPipe::for_session`]) outlive one call: they
/// drop what passes the cap instead of trapping (the session and its state go on), are
/// emptied by the host after each call, and hand the harness's end-of-call lines (a write
/// that starts with [`CALL_DONE_TAG`]) to the host instead of keeping them.
#[derive(Clone)]
pub(crate) struct CappedPipe {
    buffer: Arc<Mutex<Vec<u8>>>,
    truncated: Arc<AtomicBool>,
    cap: usize,
    session: Option<tokio::sync::mpsc::UnboundedSender<Bytes>>,
}

/// How the session harness's end-of-call line starts.
pub(crate) const CALL_DONE_TAG: &[u8] = b"\x1egrpo-done ";

impl CappedPipe {
    pub(crate) fn new(cap: usize) -> Self {
        CappedPipe {
            buffer: Arc::default(),
            truncated: Arc::default(),
            cap,
            session: None,
        }
    }

    /// A session's stream: cut at `cap` per call without trapping; end-of-call lines go to
    /// `done`.
    pub(crate) fn for_session(cap: usize, done: tokio::sync::mpsc::UnboundedSender<Bytes>) -> Self {
        CappedPipe {
            session: Some(done),
            ..CappedPipe::new(cap)
        }
    }

    /// Takes what the stream holds and whether it was cut, and starts it afresh.
    pub(crate) fn take(&self) -> (Vec<u8>, bool) {
        let bytes = self
            .buffer
            .lock()
            .map(|mut b| std::mem::take(&mut *b))
            .unwrap_or_default();
        (bytes, self.truncated.swap(false, Ordering::Relaxed))
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
        if let Some(done) = &self.session {
            if bytes.starts_with(CALL_DONE_TAG) {
                // The host may be gone (the session closed): the line has no reader then.
                let _ = done.send(bytes);
            } else {
                self.append(&bytes);
            }
            return Ok(());
        }
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
        let room = self.cap.saturating_sub(used).saturating_add(1);
        // A session's stream never traps: any write is taken (and cut), and the harness's
        // end-of-call line always fits in one write.
        Ok(if self.session.is_some() {
            room.max(1 << 16)
        } else {
            room
        })
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
