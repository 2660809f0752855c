//! Decoding: MIOpen's greedy walk and the constrained beam search.
//!
//! The search works on token ids (what the decoder consumes) but checks validity on *values*
//! (what the solver sees): MIOpen's constraint is value-based, so a token from another
//! position's block whose value is acceptable is taken too.

/// Work buffers a decoder reuses across steps (one per thread).
#[derive(Debug, Default, Clone)]
pub struct DecoderScratch {
    pub buffers: Vec<Vec<f32>>,
}

impl DecoderScratch {
    /// Buffer `i`, created on first use.
    pub fn buffer(&mut self, i: usize) -> &mut Vec<f32> {
        if self.buffers.len() <= i {
            self.buffers.resize(i + 1, Vec::new());
        }
        &mut self.buffers[i]
    }
}

/// A decoder the search can step: one token per row in, raw scores per row out. The search owns
/// this interface; the models (`seq2seq`, `gpu`) implement it.
pub trait StepDecoder: Sync {
    /// Number of scores per step.
    fn vocab_size(&self) -> usize;
    /// One step for `states.batch` rows: feeds `tokens`, updates `states` in place and writes
    /// raw scores `[batch, vocab]` into `scores`.
    fn step(&self, tokens: &[u32], states: &mut States, scores: &mut Vec<f32>, scratch: &mut DecoderScratch);
}

/// A decoder's output vocabulary: token id -> parameter value, with the values interned.
#[derive(Debug, Clone, PartialEq)]
pub struct Vocabulary {
    /// Distinct parameter values as written in the metadata (`"-1"` included).
    pub values: Vec<String>,
    /// For each token id, the index of its value in `values`.
    pub token_value: Vec<u32>,
}

impl Vocabulary {
    /// Builds a vocabulary from the value text of each token id (index = token id).
    pub fn from_token_values(token_values: &[String]) -> Vocabulary {
        let mut values: Vec<String> = Vec::new();
        let mut token_value = Vec::with_capacity(token_values.len());
        for v in token_values {
            let id = match values.iter().position(|x| x == v) {
                Some(i) => i,
                None => {
                    values.push(v.clone());
                    values.len() - 1
                }
            };
            token_value.push(id as u32);
        }
        Vocabulary { values, token_value }
    }

    /// Number of token ids.
    pub fn len(&self) -> usize {
        self.token_value.len()
    }

    pub fn is_empty(&self) -> bool {
        self.token_value.is_empty()
    }

    /// True when the token's value is "-1", i.e. the token ends a sequence.
    pub fn is_end(&self, token: usize) -> bool {
        self.values[self.token_value[token] as usize] == "-1"
    }

    /// The value text of a token.
    pub fn value_text(&self, token: usize) -> &str {
        &self.values[self.token_value[token] as usize]
    }
}

/// A solver's rules for one problem, as the search sees them. Values are indices into
/// [`Vocabulary::values`] of the vocabulary the constraint was built for.
pub trait Constraint {
    /// Number of parameters of a complete config, given the values chosen so far (for solvers
    /// whose first value picks a kernel type this depends on `chosen[0]`; `chosen` may be empty).
    fn config_len(&self, chosen: &[u32]) -> usize;
    /// Does the solver accept `value` at position `chosen.len()` after the valid prefix `chosen`?
    fn accepts(&self, chosen: &[u32], value: u32) -> bool;
    /// Can the valid prefix `chosen` still be completed to a full valid config with values of
    /// the vocabulary (look-ahead)?
    fn completable(&self, chosen: &[u32]) -> bool;
    /// MIOpen's own acceptance test, used by [`greedy_miopen`] where it differs from
    /// [`Constraint::accepts`] (e.g. catalogue solvers whose MIOpen walk has quirks the beam
    /// search should not copy). Default: `accepts`.
    fn accepts_miopen(&self, chosen: &[u32], value: u32) -> bool {
        self.accepts(chosen, value)
    }
    /// How MIOpen names the complete config `chosen` when the solver, not the value list,
    /// decides it (e.g. the kernel instance a catalogue solver selects). Default: `None`, the
    /// solver's `format_config` of the values.
    fn config_text(&self, _chosen: &[u32]) -> Option<String> {
        None
    }
    /// The constraint as a table the GPU checks (`shaders/catalogue_rules.wgsl`'s block), for
    /// solvers whose rules are a table. Default: `None`.
    fn gpu_table(&self) -> Option<Vec<i32>> {
        None
    }
}

mod beam;
mod greedy;
mod states;

pub use beam::{beam_iteration, beam_search, BeamRow, BeamScratch};
pub use greedy::{greedy_miopen, greedy_position};
pub use states::States;

/// A decoded parameter sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct Hypothesis {
    /// Token ids chosen at each position.
    pub tokens: Vec<u32>,
    /// Value ids (indices into [`Vocabulary::values`]) of those tokens.
    pub values: Vec<u32>,
    /// Sum over the chosen tokens of log-softmax over the full vocabulary.
    pub score: f32,
}

/// Ranking order of MIOpen and of the beam: higher score first; on equal scores the higher raw
/// score (the decoder's own output, which log-softmax can round together), then the larger
/// token id.
#[inline]
pub(crate) fn rank_cmp(a: (f32, f32, u32), b: (f32, f32, u32)) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)).then(b.2.cmp(&a.2))
}

#[cfg(test)]
mod tests;
