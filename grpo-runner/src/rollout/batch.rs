//! Packing (prompt, completion) pairs into the tensors of one teacher-forced forward pass.
//!
//! Every row is `prompt ++ completion`, right padded to the longest row, positions from 0. The
//! model sees `row[..n-1]` and predicts `row[1..]`, so the completion's `k`-th token is
//! predicted at position `prompt_len - 1 + k`. Right padding never influences the real
//! positions (attention is causal) and the response mask excludes it, so no left-padding
//! bookkeeping is needed and positions match those the sampler used.

use candle_core::{Device, Tensor};

use crate::error::{Error, Result};

/// The tensors of one packed batch.
///
/// # Shapes
/// - `inputs`, `targets`: `[batch, seq]`, u32.
/// - `mask`: `[batch, seq]`, f32, 1 on completion tokens.
#[derive(Debug, Clone)]
pub struct PackedBatch {
    /// Token ids fed to the model.
    pub inputs: Tensor,
    /// The next token at every position.
    pub targets: Tensor,
    /// 1 where the target is a completion token.
    pub mask: Tensor,
    /// Per row, the position of the first completion target.
    pub starts: Vec<usize>,
    /// Per row, the number of completion tokens.
    pub lens: Vec<usize>,
}

impl PackedBatch {
    /// Packs `rows` of (prompt ids, completion ids); padding uses `pad_id`.
    ///
    /// ```
    /// use candle_core::Device;
    /// use grpo_runner::rollout::batch::PackedBatch;
    /// let b = PackedBatch::pack(&[(&[5, 6][..], &[7, 0][..]), (&[5][..], &[8][..])], 0, &Device::Cpu)?;
    /// assert_eq!(b.inputs.to_vec2::<u32>()?, [[5, 6, 7], [5, 0, 0]]);
    /// assert_eq!(b.targets.to_vec2::<u32>()?, [[6, 7, 0], [8, 0, 0]]);
    /// assert_eq!(b.mask.to_vec2::<f32>()?, [[0., 1., 1.], [1., 0., 0.]]);
    /// # Ok::<(), grpo_runner::Error>(())
    /// ```
    pub fn pack(rows: &[(&[u32], &[u32])], pad_id: u32, device: &Device) -> Result<Self> {
        if rows.is_empty() {
            return Err(Error::invalid("cannot pack an empty batch"));
        }
        if let Some(i) = rows.iter().position(|(p, c)| p.is_empty() || c.is_empty()) {
            return Err(Error::invalid(format!(
                "row {i} has an empty prompt or completion"
            )));
        }
        let seq = rows
            .iter()
            .map(|(p, c)| p.len() + c.len() - 1)
            .max()
            .unwrap_or(1);
        let b = rows.len();
        let mut inputs = vec![pad_id; b * seq];
        let mut targets = vec![pad_id; b * seq];
        let mut mask = vec![0f32; b * seq];
        let mut starts = Vec::with_capacity(b);
        let mut lens = Vec::with_capacity(b);
        for (r, (prompt, completion)) in rows.iter().enumerate() {
            let full: Vec<u32> = prompt.iter().chain(completion.iter()).copied().collect();
            let n = full.len() - 1;
            inputs[r * seq..r * seq + n].copy_from_slice(&full[..n]);
            targets[r * seq..r * seq + n].copy_from_slice(&full[1..]);
            let start = prompt.len() - 1;
            mask[r * seq + start..r * seq + n].fill(1.0);
            starts.push(start);
            lens.push(completion.len());
        }
        Ok(PackedBatch {
            inputs: Tensor::from_vec(inputs, (b, seq), device)?,
            targets: Tensor::from_vec(targets, (b, seq), device)?,
            mask: Tensor::from_vec(mask, (b, seq), device)?,
            starts,
            lens,
        })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.starts.len()
    }

    /// Left padding per row (always zero: rows are right padded).
    pub fn left_pad(&self) -> Vec<usize> {
        vec![0; self.rows()]
    }
}

/// A GRPO micro-batch packed so each group's prompt is run once: the prompts, left padded, then
/// every completion as a continuation of its prompt's KV cache.
///
/// Row `r` of the window predicts completion `r`: column 0 from the prompt's last position,
/// column `k` from the completion's token `k − 1`, so `targets[r][k]` is the completion's
/// token `k` (right padded), `mask` is 1 on the completion's tokens, `starts` are all 0.
/// The prompt tokens of a group go through the decoder once instead of once per completion
/// (G times), the same computation as the sampler's prefill and fan-out.
///
/// # Shapes
/// - `prompts`: `[groups, prompt_len]`, u32, left padded (`prompt_pad` per group);
/// - `continuations`: `[rows, width − 1]`, u32 (each completion without its last token,
///   right padded), or `None` when every completion has one token;
/// - `window.targets`, `window.mask`: `[rows, width]` (`width`: the longest completion);
///   `window.inputs` is `continuations` (or the targets when there is none).
#[derive(Debug, Clone)]
pub struct GroupBatch {
    /// The groups' prompts, left padded.
    pub prompts: Tensor,
    /// Left padding of each group's prompt.
    pub prompt_pad: Vec<usize>,
    /// The group of each row.
    pub group_of_row: Vec<u32>,
    /// Each completion but its last token, right padded.
    pub continuations: Option<Tensor>,
    /// Targets, mask, starts (all 0) and lengths of the completions.
    pub window: PackedBatch,
}

impl GroupBatch {
    /// Packs `groups` of (prompt ids, that prompt's completions); padding uses `pad_id`.
    ///
    /// ```
    /// use candle_core::Device;
    /// use grpo_runner::rollout::batch::GroupBatch;
    /// let g = GroupBatch::pack(&[(&[5, 6][..], vec![&[7, 0][..], &[8][..]])], 0, &Device::Cpu)?;
    /// assert_eq!(g.prompts.to_vec2::<u32>()?, [[5, 6]]);
    /// assert_eq!(g.group_of_row, [0, 0]);
    /// // Each completion but its last token, right padded.
    /// assert_eq!(g.continuations.unwrap().to_vec2::<u32>()?, [[7], [0]]);
    /// assert_eq!(g.window.targets.to_vec2::<u32>()?, [[7, 0], [8, 0]]);
    /// assert_eq!(g.window.mask.to_vec2::<f32>()?, [[1., 1.], [1., 0.]]);
    /// # Ok::<(), grpo_runner::Error>(())
    /// ```
    pub fn pack(groups: &[(&[u32], Vec<&[u32]>)], pad_id: u32, device: &Device) -> Result<Self> {
        if groups.is_empty() || groups.iter().any(|(_, c)| c.is_empty()) {
            return Err(Error::invalid(
                "cannot pack an empty batch or an empty group",
            ));
        }
        if let Some(i) = groups
            .iter()
            .position(|(p, c)| p.is_empty() || c.iter().any(|c| c.is_empty()))
        {
            return Err(Error::invalid(format!(
                "group {i} has an empty prompt or completion"
            )));
        }
        let prompt_len = groups.iter().map(|(p, _)| p.len()).max().unwrap_or(1);
        let mut prompts = Vec::with_capacity(groups.len() * prompt_len);
        let mut prompt_pad = Vec::with_capacity(groups.len());
        for (prompt, _) in groups {
            prompt_pad.push(prompt_len - prompt.len());
            prompts.extend(std::iter::repeat_n(pad_id, prompt_len - prompt.len()));
            prompts.extend_from_slice(prompt);
        }
        let completions: Vec<(u32, &[u32])> = groups
            .iter()
            .enumerate()
            .flat_map(|(g, (_, cs))| cs.iter().map(move |c| (g as u32, *c)))
            .collect();
        let rows = completions.len();
        let width = completions.iter().map(|(_, c)| c.len()).max().unwrap_or(1);
        let mut targets = vec![pad_id; rows * width];
        let mut mask = vec![0f32; rows * width];
        let mut continuations = vec![pad_id; rows * (width - 1)];
        for (r, (_, c)) in completions.iter().enumerate() {
            targets[r * width..r * width + c.len()].copy_from_slice(c);
            mask[r * width..r * width + c.len()].fill(1.0);
            let w = width - 1;
            continuations[r * w..r * w + c.len() - 1].copy_from_slice(&c[..c.len() - 1]);
        }
        let targets = Tensor::from_vec(targets, (rows, width), device)?;
        let continuations = if width > 1 {
            Some(Tensor::from_vec(continuations, (rows, width - 1), device)?)
        } else {
            None
        };
        Ok(GroupBatch {
            prompts: Tensor::from_vec(prompts, (groups.len(), prompt_len), device)?,
            prompt_pad,
            group_of_row: completions.iter().map(|(g, _)| *g).collect(),
            window: PackedBatch {
                inputs: continuations.clone().unwrap_or_else(|| targets.clone()),
                targets,
                mask: Tensor::from_vec(mask, (rows, width), device)?,
                starts: vec![0; rows],
                lens: completions.iter().map(|(_, c)| c.len()).collect(),
            },
            continuations,
        })
    }

    /// Zeroes the mask on tokens a tool wrote (`spans[r]`: row `r`'s `[start, end)` ranges
    /// of completion tokens), so they are context and not actions: out of the loss, the
    /// ratio, the KL and the length normalisation, which all follow the mask.
    ///
    /// ```
    /// use candle_core::Device;
    /// use grpo_runner::rollout::batch::GroupBatch;
    /// let mut g = GroupBatch::pack(&[(&[5][..], vec![&[7, 8, 9, 1][..], &[2][..]])], 0, &Device::Cpu)?;
    /// g.mask_spans(&[&[(1, 3)], &[]])?;
    /// assert_eq!(g.window.mask.to_vec2::<f32>()?, [[1., 0., 0., 1.], [1., 0., 0., 0.]]);
    /// # Ok::<(), grpo_runner::Error>(())
    /// ```
    pub fn mask_spans(&mut self, spans: &[&[(usize, usize)]]) -> Result<()> {
        let mut mask = self.window.mask.to_vec2::<f32>()?;
        if spans.len() != mask.len() {
            return Err(Error::invalid(format!(
                "{} rows of tool spans for a batch of {}",
                spans.len(),
                mask.len()
            )));
        }
        for (r, (row, row_spans)) in mask.iter_mut().zip(spans).enumerate() {
            for &(start, end) in row_spans.iter() {
                if start > end || end > self.window.lens[r] {
                    return Err(Error::invalid(format!(
                        "row {r}: tool span {start}..{end} outside its {} tokens",
                        self.window.lens[r]
                    )));
                }
                row[start..end].fill(0.0);
            }
        }
        let (rows, width) = self.window.mask.dims2()?;
        let flat: Vec<f32> = mask.into_iter().flatten().collect();
        self.window.mask = Tensor::from_vec(flat, (rows, width), self.window.mask.device())?;
        Ok(())
    }

    /// The batch of `groups` alone (indices into this batch's groups, in the order given):
    /// the same tensors [`GroupBatch::pack`] makes of those groups, tool spans masked as
    /// here, cut from this batch's tensors instead of packed again.
    ///
    /// ```
    /// use candle_core::Device;
    /// use grpo_runner::rollout::batch::GroupBatch;
    /// let p: &[u32] = &[5, 6];
    /// let (a, b): (&[u32], &[u32]) = (&[7, 8, 9], &[1]);
    /// let all = GroupBatch::pack(&[(&[4][..], vec![a]), (p, vec![b, b])], 0, &Device::Cpu)?;
    /// let second = all.select(&[1])?;
    /// let alone = GroupBatch::pack(&[(p, vec![b, b])], 0, &Device::Cpu)?;
    /// assert_eq!(second.prompts.to_vec2::<u32>()?, alone.prompts.to_vec2::<u32>()?);
    /// assert_eq!(second.window.targets.to_vec2::<u32>()?, [[1], [1]]);
    /// assert!(second.continuations.is_none());
    /// # Ok::<(), grpo_runner::Error>(())
    /// ```
    pub fn select(&self, groups: &[usize]) -> Result<GroupBatch> {
        let count = self.prompt_pad.len();
        if groups.is_empty() {
            return Err(Error::invalid("cannot select no group"));
        }
        if let Some(&g) = groups.iter().find(|&&g| g >= count) {
            return Err(Error::invalid(format!(
                "group {g} selected from a batch of {count}"
            )));
        }
        let device = self.prompts.device();
        let (_, prompt_len) = self.prompts.dims2()?;
        // The selection's prompts keep only the left padding its longest prompt needs.
        let least_pad = groups
            .iter()
            .map(|&g| self.prompt_pad[g])
            .min()
            .unwrap_or(0);
        let ids: Vec<u32> = groups.iter().map(|&g| g as u32).collect();
        let prompts = self
            .prompts
            .index_select(&Tensor::new(ids.as_slice(), device)?, 0)?
            .narrow(1, least_pad, prompt_len - least_pad)?
            .contiguous()?;
        let mut rows = Vec::new();
        let mut group_of_row = Vec::new();
        for (new, &g) in groups.iter().enumerate() {
            for (r, &of) in self.group_of_row.iter().enumerate() {
                if of as usize == g {
                    rows.push(r as u32);
                    group_of_row.push(new as u32);
                }
            }
        }
        let lens: Vec<usize> = rows.iter().map(|&r| self.window.lens[r as usize]).collect();
        let width = lens.iter().copied().max().unwrap_or(1);
        let rows = Tensor::new(rows.as_slice(), device)?;
        let cut = |t: &Tensor, width: usize| -> Result<Tensor> {
            Ok(t.index_select(&rows, 0)?
                .narrow(1, 0, width)?
                .contiguous()?)
        };
        let targets = cut(&self.window.targets, width)?;
        let continuations = match &self.continuations {
            Some(c) if width > 1 => Some(cut(c, width - 1)?),
            _ => None,
        };
        Ok(GroupBatch {
            prompts,
            prompt_pad: groups
                .iter()
                .map(|&g| self.prompt_pad[g] - least_pad)
                .collect(),
            group_of_row,
            window: PackedBatch {
                inputs: continuations.clone().unwrap_or_else(|| targets.clone()),
                targets,
                mask: cut(&self.window.mask, width)?,
                starts: vec![0; lens.len()],
                lens,
            },
            continuations,
        })
    }

    /// Left padding of each row (its group's prompt padding).
    pub fn row_pad(&self) -> Vec<usize> {
        self.group_of_row
            .iter()
            .map(|&g| self.prompt_pad[g as usize])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_targets_line_up_with_the_mask() {
        let rows: Vec<(Vec<u32>, Vec<u32>)> = vec![
            (vec![1, 2, 3], vec![4]),
            (vec![9], vec![8, 7, 6, 5]),
            (vec![3, 3], vec![2, 2]),
        ];
        let refs: Vec<(&[u32], &[u32])> = rows.iter().map(|(p, c)| (&p[..], &c[..])).collect();
        let b = PackedBatch::pack(&refs, 0, &Device::Cpu).unwrap();
        let targets = b.targets.to_vec2::<u32>().unwrap();
        let mask = b.mask.to_vec2::<f32>().unwrap();
        for (r, (_, completion)) in rows.iter().enumerate() {
            let picked: Vec<u32> = targets[r]
                .iter()
                .zip(&mask[r])
                .filter(|(_, m)| **m == 1.0)
                .map(|(t, _)| *t)
                .collect();
            assert_eq!(&picked, completion, "row {r}");
            assert_eq!(b.lens[r], completion.len());
            assert_eq!(targets[r][b.starts[r]], completion[0]);
        }
        assert_eq!(b.inputs.dims(), [3, 4]);
    }

    #[test]
    fn groups_pack_prompts_once_and_completions_as_continuations() {
        let p0: &[u32] = &[1, 2, 3];
        let p1: &[u32] = &[4];
        let b = GroupBatch::pack(
            &[
                (p0, vec![&[5, 6][..], &[7][..]]),
                (p1, vec![&[8, 9, 10][..]]),
            ],
            0,
            &Device::Cpu,
        )
        .unwrap();
        assert_eq!(b.prompts.to_vec2::<u32>().unwrap(), [[1, 2, 3], [0, 0, 4]]);
        assert_eq!(b.prompt_pad, [0, 2]);
        assert_eq!(b.group_of_row, [0, 0, 1]);
        assert_eq!(b.row_pad(), [0, 0, 2]);
        assert_eq!(
            b.continuations.unwrap().to_vec2::<u32>().unwrap(),
            [[5, 0], [0, 0], [8, 9]]
        );
        assert_eq!(
            b.window.targets.to_vec2::<u32>().unwrap(),
            [[5, 6, 0], [7, 0, 0], [8, 9, 10]]
        );
        assert_eq!(
            b.window.mask.to_vec2::<f32>().unwrap(),
            [[1., 1., 0.], [1., 0., 0.], [1., 1., 1.]]
        );
        assert_eq!(b.window.lens, [2, 1, 3]);
        assert_eq!(b.window.starts, [0, 0, 0]);
        // One-token completions need no continuation pass.
        let one = GroupBatch::pack(&[(p1, vec![&[3][..]])], 0, &Device::Cpu).unwrap();
        assert!(one.continuations.is_none());
        assert!(GroupBatch::pack(&[(p1, vec![&[][..]])], 0, &Device::Cpu).is_err());
        assert!(GroupBatch::pack(&[(p1, vec![])], 0, &Device::Cpu).is_err());
    }

    /// Asserts that two batches hold the same tensors and indices, exactly.
    fn assert_same(a: &GroupBatch, b: &GroupBatch, what: &str) {
        let u32s = |t: &Tensor| t.to_vec2::<u32>().unwrap();
        assert_eq!(u32s(&a.prompts), u32s(&b.prompts), "{what}: prompts");
        assert_eq!(a.prompt_pad, b.prompt_pad, "{what}: prompt_pad");
        assert_eq!(a.group_of_row, b.group_of_row, "{what}: group_of_row");
        assert_eq!(
            a.continuations.as_ref().map(u32s),
            b.continuations.as_ref().map(u32s),
            "{what}: continuations"
        );
        assert_eq!(
            u32s(&a.window.targets),
            u32s(&b.window.targets),
            "{what}: targets"
        );
        assert_eq!(
            u32s(&a.window.inputs),
            u32s(&b.window.inputs),
            "{what}: inputs"
        );
        assert_eq!(
            a.window.mask.to_vec2::<f32>().unwrap(),
            b.window.mask.to_vec2::<f32>().unwrap(),
            "{what}: mask"
        );
        assert_eq!(a.window.lens, b.window.lens, "{what}: lens");
        assert_eq!(a.window.starts, b.window.starts, "{what}: starts");
    }

    #[test]
    fn a_selection_is_the_pack_of_the_selected_groups() {
        let groups: Vec<(Vec<u32>, Vec<Vec<u32>>)> = vec![
            (vec![1, 2, 3], vec![vec![4, 5], vec![6, 7, 8, 9]]),
            (vec![5], vec![vec![3], vec![2]]),
            (vec![7, 7], vec![vec![1, 1, 1], vec![2, 2]]),
        ];
        let refs = |ids: &[usize]| -> Vec<(&[u32], Vec<&[u32]>)> {
            ids.iter()
                .map(|&g| {
                    let (p, cs) = &groups[g];
                    (&p[..], cs.iter().map(|c| &c[..]).collect())
                })
                .collect()
        };
        let mut all = GroupBatch::pack(&refs(&[0, 1, 2]), 0, &Device::Cpu).unwrap();
        let spans: Vec<&[(usize, usize)]> = vec![&[], &[(1, 3)], &[], &[], &[(1, 2)], &[]];
        all.mask_spans(&spans).unwrap();
        for ids in [vec![1], vec![2, 0], vec![1, 2], vec![0, 1, 2], vec![2]] {
            let mut alone = GroupBatch::pack(&refs(&ids), 0, &Device::Cpu).unwrap();
            let alone_spans: Vec<&[(usize, usize)]> = ids
                .iter()
                .flat_map(|&g| spans[2 * g..2 * g + 2].iter().copied())
                .collect();
            alone.mask_spans(&alone_spans).unwrap();
            assert_same(&all.select(&ids).unwrap(), &alone, &format!("{ids:?}"));
        }
        assert!(all.select(&[]).is_err());
        assert!(all.select(&[3]).is_err());
    }

    #[test]
    fn empty_rows_are_refused() {
        assert!(PackedBatch::pack(&[], 0, &Device::Cpu).is_err());
        assert!(PackedBatch::pack(&[(&[1][..], &[][..])], 0, &Device::Cpu).is_err());
    }
}
