//! The KV cache of incremental decoding.

use candle_core::Tensor;

use crate::error::Result;

/// Keys and values of earlier positions, one pair per layer, for incremental decoding.
///
/// Keys are stored after RoPE. All rows share one length (left padding keeps rows aligned).
///
/// Two ways to grow: [`KvCache::new`] concatenates each step's keys and values onto the
/// earlier ones (a fresh copy of the whole cache per step, differentiable); a cache made by
/// [`KvCache::with_capacity`] writes them in place into buffers reserved for that many
/// positions and attends over a view of the filled part (no copy per step; for sampling, which
/// records no graph). A reserved buffer that fills up is enlarged (doubled).
#[derive(Debug, Clone)]
pub struct KvCache {
    /// Per layer: keys and values `[batch, kv_heads, positions, head_dim]` (with a capacity,
    /// the reserved buffers, of which the first `len` positions are filled).
    pub(super) layers: Vec<Option<(Tensor, Tensor)>>,
    pub(super) len: usize,
    /// Positions reserved per buffer; 0 grows by concatenation.
    capacity: usize,
}

impl KvCache {
    /// An empty cache for a model with `num_layers` layers, growing by concatenation.
    pub fn new(num_layers: usize) -> Self {
        Self::with_capacity(num_layers, 0)
    }

    /// An empty cache that reserves `capacity` positions per layer and writes new keys and
    /// values in place (0: grow by concatenation, as [`KvCache::new`]). For decoding without
    /// gradients: in-place writes are not recorded by autograd.
    pub fn with_capacity(num_layers: usize, capacity: usize) -> Self {
        KvCache {
            layers: vec![None; num_layers],
            len: 0,
            capacity,
        }
    }

    /// Number of positions (padding included) already in the cache.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Positions reserved per layer (0: the cache grows by concatenation).
    pub fn capacity(&self) -> usize {
        self.capacity
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

/// One layer's part of a [`KvCache`] during a forward pass.
pub(super) struct LayerCache<'a> {
    /// The layer's keys and values (see [`KvCache::layers`]).
    pub(super) slot: &'a mut Option<(Tensor, Tensor)>,
    /// The cache's reservation (0: concatenation).
    pub(super) capacity: usize,
    /// Positions already cached.
    pub(super) offset: usize,
}

/// Appends `k`, `v` (`[batch, kv_heads, seq, head_dim]`, contiguous) after the positions
/// already in the layer's cache and returns the keys and values of all of them (see
/// [`KvCache`] for the two ways it grows).
pub(super) fn append(
    cache: LayerCache<'_>,
    k: Tensor,
    v: Tensor,
) -> candle_core::Result<(Tensor, Tensor)> {
    let LayerCache {
        slot,
        capacity,
        offset,
    } = cache;
    let seq = k.dim(2)?;
    if capacity == 0 {
        let (k, v) = match slot.as_ref() {
            None => (k, v),
            Some((pk, pv)) => (Tensor::cat(&[pk, &k], 2)?, Tensor::cat(&[pv, &v], 2)?),
        };
        *slot = Some((k.clone(), v.clone()));
        return Ok((k, v));
    }
    let total = offset + seq;
    let reserve = |t: &Tensor, positions: usize| {
        let (b, h, _, d) = t.dims4()?;
        Tensor::zeros((b, h, positions, d), t.dtype(), t.device())
    };
    let (kb, vb) = match slot.take() {
        None => (
            reserve(&k, capacity.max(total))?,
            reserve(&v, capacity.max(total))?,
        ),
        Some((kb, vb)) if kb.dim(2)? >= total => (kb, vb),
        Some((kb, vb)) => {
            // Full: double the reservation (the filled part is copied once).
            let grown = (2 * kb.dim(2)?).max(total);
            let more_k = reserve(&kb, grown - kb.dim(2)?)?;
            let more_v = reserve(&vb, grown - vb.dim(2)?)?;
            (
                Tensor::cat(&[&kb, &more_k], 2)?,
                Tensor::cat(&[&vb, &more_v], 2)?,
            )
        }
    };
    kb.slice_set(&k.contiguous()?, 2, offset)?;
    vb.slice_set(&v.contiguous()?, 2, offset)?;
    let views = (kb.narrow(2, 0, total)?, vb.narrow(2, 0, total)?);
    *slot = Some((kb, vb));
    Ok(views)
}
