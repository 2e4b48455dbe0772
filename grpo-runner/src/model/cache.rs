//! The KV cache of incremental decoding.

use candle_core::Tensor;

use crate::error::Result;

/// Keys and values of earlier positions, one pair per layer, for incremental decoding.
///
/// Keys are stored after RoPE. All rows share one length (left padding keeps rows aligned).
#[derive(Debug, Clone)]
pub struct KvCache {
    pub(super) layers: Vec<Option<(Tensor, Tensor)>>,
    pub(super) len: usize,
}

impl KvCache {
    /// An empty cache for a model with `num_layers` layers.
    pub fn new(num_layers: usize) -> Self {
        KvCache {
            layers: vec![None; num_layers],
            len: 0,
        }
    }

    /// Number of positions (padding included) already in the cache.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no position has been cached yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keeps the given batch rows, in the given order (rows may repeat: `[0, 0, 1, 1]` makes
    /// two copies of each of two rows). Used to fan a prefilled prompt out to a group and to
    /// drop finished sequences.
    pub fn select_rows(&mut self, rows: &[u32]) -> Result<()> {
        for (k, v) in self.layers.iter_mut().flatten() {
            let idx = Tensor::new(rows, k.device())?;
            *k = k.index_select(&idx, 0)?;
            *v = v.index_select(&idx, 0)?;
        }
        Ok(())
    }
}
