//! Recurrent state of a batch of sequences.

/// Per LSTM layer, `h` and `c` as `[batch, units]` (row = one sequence or hypothesis).
#[derive(Debug, Clone, PartialEq)]
pub struct States {
    pub batch: usize,
    pub units: Vec<usize>,
    pub h: Vec<Vec<f32>>,
    pub c: Vec<Vec<f32>>,
}

impl States {
    /// All-zero states for `batch` rows.
    pub fn zeros(units: &[usize], batch: usize) -> States {
        States {
            batch,
            units: units.to_vec(),
            h: units.iter().map(|&u| vec![0.0; u * batch]).collect(),
            c: units.iter().map(|&u| vec![0.0; u * batch]).collect(),
        }
    }

    /// Resizes to `batch` rows (contents unspecified) without reallocating when shrinking.
    pub fn resize(&mut self, batch: usize) {
        self.batch = batch;
        for (l, &u) in self.units.iter().enumerate() {
            self.h[l].resize(u * batch, 0.0);
            self.c[l].resize(u * batch, 0.0);
        }
    }

    /// `self[i] = source[rows[i]]` for every layer: how a beam reorders its hypotheses.
    pub fn gather_from(&mut self, source: &States, rows: &[usize]) {
        self.resize(rows.len());
        for (l, &u) in self.units.iter().enumerate() {
            for (i, &r) in rows.iter().enumerate() {
                self.h[l][i * u..(i + 1) * u].copy_from_slice(&source.h[l][r * u..(r + 1) * u]);
                self.c[l][i * u..(i + 1) * u].copy_from_slice(&source.c[l][r * u..(r + 1) * u]);
            }
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
