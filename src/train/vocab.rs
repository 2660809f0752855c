//! Tokens of an attention model: token 0 (value "-1") starts decoding; every other token is a
//! (position, value) pair seen in the training set, in position order then value order.

use crate::data::dataset::Sample;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenTable {
    /// For each position, the values seen there (sorted) and their token ids.
    pub positions: Vec<Vec<(i64, u32)>>,
    /// Value text of each token id.
    pub token_values: Vec<String>,
}

impl TokenTable {
    /// The tokens of configs of `seq_len` values (samples of another length give none).
    pub fn from_samples(samples: &[Sample], seq_len: usize) -> TokenTable {
        let mut positions: Vec<Vec<(i64, u32)>> = Vec::with_capacity(seq_len);
        let mut token_values = vec!["-1".to_string()];
        for pos in 0..seq_len {
            let mut vals: Vec<i64> = samples
                .iter()
                .filter(|s| s.config.len() == seq_len)
                .map(|s| s.config[pos])
                .collect();
            vals.sort_unstable();
            vals.dedup();
            let mut list = Vec::with_capacity(vals.len());
            for v in vals {
                list.push((v, token_values.len() as u32));
                token_values.push(v.to_string());
            }
            positions.push(list);
        }
        TokenTable {
            positions,
            token_values,
        }
    }

    /// Position of each token id (token 0, the start token, has none: -1).
    pub fn token_positions(&self) -> Vec<i64> {
        let mut out = vec![-1; self.token_values.len()];
        for (pos, list) in self.positions.iter().enumerate() {
            for &(_, id) in list {
                out[id as usize] = pos as i64;
            }
        }
        out
    }

    /// Rebuilds the table of configs of `seq_len` values from saved token values and positions.
    pub fn from_token_positions(
        token_values: &[String],
        token_positions: &[i64],
        seq_len: usize,
    ) -> Option<TokenTable> {
        if token_values.len() != token_positions.len() {
            return None;
        }
        let mut positions: Vec<Vec<(i64, u32)>> = vec![Vec::new(); seq_len];
        for (id, (v, &pos)) in token_values.iter().zip(token_positions).enumerate().skip(1) {
            let x: i64 = v.parse().ok()?;
            positions.get_mut(usize::try_from(pos).ok()?)?.push((x, id as u32));
        }
        for list in &mut positions {
            list.sort_unstable();
        }
        Some(TokenTable {
            positions,
            token_values: token_values.to_vec(),
        })
    }

    pub fn len(&self) -> usize {
        self.token_values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.token_values.is_empty()
    }

    /// Token ids of a config, or None when a value was never seen at its position (or the
    /// config has another length).
    pub fn encode(&self, config: &[i64]) -> Option<Vec<u32>> {
        if config.len() != self.positions.len() {
            return None;
        }
        config
            .iter()
            .enumerate()
            .map(|(pos, v)| {
                let list = self.positions.get(pos)?;
                list.binary_search_by_key(v, |e| e.0).ok().map(|i| list[i].1)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::ConvProblem;

    #[test]
    fn tokens_round_trip() {
        let p = ConvProblem::from_perfdb_key("64-7-7-1x1-64-7-7-1-0x0-1x1-1x1-0-NCHW-FP32-F").unwrap();
        let s = |c: [i64; 8]| Sample {
            source_id: 0,
            problem: p.clone(),
            config: c.to_vec(),
        };
        let t = TokenTable::from_samples(&[s([1, 4, 1, 1, 1, 1, 1, 1]), s([2, 4, 2, 8, 1, 2, 1, 1])], 8);
        assert_eq!(t.len(), 1 + 2 + 1 + 2 + 2 + 1 + 2 + 1 + 1);
        assert_eq!(
            t.encode(&[2, 4, 1, 8, 1, 2, 1, 1]),
            Some(vec![2, 3, 4, 7, 8, 10, 11, 12])
        );
        assert_eq!(t.encode(&[3, 4, 1, 8, 1, 2, 1, 1]), None);
        assert_eq!(t.encode(&[2, 4, 1, 8, 1, 2, 1]), None, "a config of another length");
        assert_eq!(
            TokenTable::from_token_positions(&t.token_values, &t.token_positions(), 8),
            Some(t)
        );
    }
}
