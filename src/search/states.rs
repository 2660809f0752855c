//! Recurrent state of a batch of sequences.

/// Per LSTM layer, `h` and `c` as `[batch, units]` (row = one sequence or hypothesis), plus
/// optional per-row side buffers (`extra`, e.g. an attention decoder's encoder outputs) that
/// travel with their row when a beam reorders hypotheses.
#[derive(Debug, Clone, PartialEq)]
pub struct States {
    pub batch: usize,
    pub units: Vec<usize>,
    pub h: Vec<Vec<f32>>,
    pub c: Vec<Vec<f32>>,
    /// Width of each side buffer per row.
    pub extra_widths: Vec<usize>,
    /// Side buffers, `[batch, width]` each.
    pub extra: Vec<Vec<f32>>,
}

impl States {
    /// All-zero states for `batch` rows, no side buffers.
    pub fn zeros(units: &[usize], batch: usize) -> States {
        States::zeros_with_extra(units, &[], batch)
    }

    /// All-zero states for `batch` rows with side buffers of the given widths.
    pub fn zeros_with_extra(units: &[usize], extra_widths: &[usize], batch: usize) -> States {
        States {
            batch,
            units: units.to_vec(),
            h: units.iter().map(|&u| vec![0.0; u * batch]).collect(),
            c: units.iter().map(|&u| vec![0.0; u * batch]).collect(),
            extra_widths: extra_widths.to_vec(),
            extra: extra_widths.iter().map(|&w| vec![0.0; w * batch]).collect(),
        }
    }

    /// An empty set of states shaped like `self` (same layers and side buffers, 0 rows).
    pub fn empty_like(&self) -> States {
        States::zeros_with_extra(&self.units, &self.extra_widths, 0)
    }

    /// Resizes to `batch` rows (contents unspecified) without reallocating when shrinking.
    pub fn resize(&mut self, batch: usize) {
        self.batch = batch;
        for (l, &u) in self.units.iter().enumerate() {
            self.h[l].resize(u * batch, 0.0);
            self.c[l].resize(u * batch, 0.0);
        }
        for (e, &w) in self.extra_widths.iter().enumerate() {
            self.extra[e].resize(w * batch, 0.0);
        }
    }

    /// `self[i] = source[rows[i]]` for every layer and side buffer: how a beam reorders its
    /// hypotheses. `self` takes `source`'s shape.
    pub fn gather_from(&mut self, source: &States, rows: &[usize]) {
        if self.units != source.units || self.extra_widths != source.extra_widths {
            *self = source.empty_like();
        }
        self.resize(rows.len());
        let copy_rows = |dst: &mut Vec<f32>, src: &Vec<f32>, w: usize| {
            for (i, &r) in rows.iter().enumerate() {
                dst[i * w..(i + 1) * w].copy_from_slice(&src[r * w..(r + 1) * w]);
            }
        };
        for (l, &u) in source.units.iter().enumerate() {
            copy_rows(&mut self.h[l], &source.h[l], u);
            copy_rows(&mut self.c[l], &source.c[l], u);
        }
        for (e, &w) in source.extra_widths.iter().enumerate() {
            copy_rows(&mut self.extra[e], &source.extra[e], w);
        }
    }

    /// One row's states in the KTN contract order: h1, c1, h2, c2, ...
    pub fn row(&self, row: usize) -> Vec<Vec<f32>> {
        let mut out = Vec::new();
        for (l, &u) in self.units.iter().enumerate() {
            out.push(self.h[l][row * u..(row + 1) * u].to_vec());
            out.push(self.c[l][row * u..(row + 1) * u].to_vec());
        }
        out
    }
}
