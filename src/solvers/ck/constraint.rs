//! The catalogue constraint: a decoded sequence is valid when some supported kernel instance
//! spells it. Reusable by any catalogue-style solver: the solver lists, per problem, the ways
//! its supported instances can be written as value sequences ([`CandidateTable`] rows), and the
//! constraint accepts a value only if a row consistent with the prefix has it there.
//!
//! The table is plain data (rows of vocabulary value ids), so a GPU search can check it with
//! one generic kernel: row `r` is alive while `cells[r][i] == chosen[i]` for every decoded
//! position `i`.
//!
//! MIOpen's own walk ([`Constraint::accepts_miopen`]) differs in two places, both kept
//! exactly: its first-position filter is a substring match (so any value that occurs in a
//! supported instance's name is taken, ending the sequence when it is not a kernel type), and
//! for gfx942 wrw it accepts any first value and never accepts a split-k value.

use std::sync::{Arc, Mutex};

use crate::search::Constraint;

/// Value id that never equals a decoded value (a token text absent from the vocabulary, or a
/// position past a row's end).
pub const NO_VALUE: u32 = u32::MAX;

/// Supported instances of one problem, one row per way of writing an instance.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CandidateTable {
    /// Number of positions of the longest row.
    pub width: usize,
    /// `rows x width` value ids, row-major; [`NO_VALUE`] past a row's end.
    pub cells: Vec<u32>,
    /// Length of each row's complete sequence.
    pub lens: Vec<u8>,
    /// The answer each row stands for (MIOpen's kernel id), by index into `answers`.
    pub answer: Vec<u32>,
    /// Position at which each row carries a split-k value (`u8::MAX`: none).
    pub split_pos: Vec<u8>,
    /// Answer texts (shared by every problem of a solver).
    pub answers: Arc<Vec<String>>,
}

impl CandidateTable {
    pub fn new(width: usize) -> CandidateTable {
        CandidateTable {
            width,
            ..CandidateTable::default()
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.lens.len()
    }

    /// Appends a row: its value ids (at most `width`), its answer (index into `answers`) and
    /// split-k position.
    pub fn push(&mut self, values: &[u32], answer: u32, split_pos: Option<usize>) {
        let len = values.len().min(self.width);
        self.cells.extend_from_slice(&values[..len]);
        self.cells.resize(self.cells.len() + self.width - len, NO_VALUE);
        self.lens.push(len as u8);
        self.answer.push(answer);
        self.split_pos.push(split_pos.map_or(u8::MAX, |p| p.min(254) as u8));
    }

    /// The answer text of row `r`.
    pub fn answer_text(&self, r: usize) -> Option<&str> {
        self.answers.get(*self.answer.get(r)? as usize).map(String::as_str)
    }

    /// The value ids of row `r`.
    pub fn row(&self, r: usize) -> &[u32] {
        &self.cells[r * self.width..(r + 1) * self.width]
    }

    fn consistent(&self, r: usize, chosen: &[u32]) -> bool {
        chosen.len() <= self.width && self.row(r)[..chosen.len()] == *chosen
    }
}

/// How the model's first value and the sequence length work.
#[derive(Debug, Clone, PartialEq)]
pub enum Lengths {
    /// `predict_type` 0: every sequence has this many values.
    Fixed(usize),
    /// `predict_type` 1: the first value names a kernel type; `by_value[v]` is the sequence
    /// length for value id `v` (0 for values that are not a kernel type).
    ByFirstValue(Vec<usize>),
}

/// MIOpen's first-position behaviour for `predict_type` 1 models.
#[derive(Debug, Clone, PartialEq)]
pub enum MiopenFirst {
    /// Accept a value when a supported instance's name contains it (fwd gfx942); for values
    /// that are not a kernel type, `answers[v]` is MIOpen's answer (the sequence ends there).
    Substring(Vec<Option<String>>),
    /// Accept any value (wrw gfx942: MIOpen only checks that some instance is supported);
    /// a value that is not a kernel type ends the sequence with an empty kernel id.
    Any,
}

/// The constraint over one problem's [`CandidateTable`].
#[derive(Debug)]
pub struct CatalogueConstraint {
    pub table: CandidateTable,
    pub lengths: Lengths,
    pub miopen_first: Option<MiopenFirst>,
    /// Last prefix asked about and the rows consistent with it (the search asks about the same
    /// prefix many times in a row).
    alive: Mutex<(Vec<u32>, Vec<u32>)>,
}

impl CatalogueConstraint {
    pub fn new(table: CandidateTable, lengths: Lengths, miopen_first: Option<MiopenFirst>) -> CatalogueConstraint {
        let all: Vec<u32> = (0..table.rows() as u32).collect();
        CatalogueConstraint {
            table,
            lengths,
            miopen_first,
            alive: Mutex::new((Vec::new(), all)),
        }
    }

    /// Calls `f` with the rows consistent with `chosen` (computed incrementally from the last
    /// prefix asked about when it extends it).
    fn with_alive<T>(&self, chosen: &[u32], f: impl FnOnce(&[u32]) -> T) -> T {
        let filter = |rows: &mut Vec<u32>, from: usize| {
            rows.retain(|&r| {
                let row = self.table.row(r as usize);
                chosen.len() <= row.len() && row[from..chosen.len()] == chosen[from..]
            })
        };
        match self.alive.lock() {
            Ok(mut guard) => {
                let (prefix, rows) = &mut *guard;
                if prefix.as_slice() != chosen {
                    if chosen.len() >= prefix.len() && chosen[..prefix.len()] == prefix[..] {
                        let from = prefix.len();
                        filter(rows, from);
                    } else {
                        *rows = (0..self.table.rows() as u32).collect();
                        filter(rows, 0);
                    }
                    prefix.clear();
                    prefix.extend_from_slice(chosen);
                }
                f(rows)
            }
            Err(_) => {
                let rows: Vec<u32> = (0..self.table.rows() as u32)
                    .filter(|&r| self.table.consistent(r as usize, chosen))
                    .collect();
                f(&rows)
            }
        }
    }

    /// The table as `shaders/catalogue_rules.wgsl` reads it (value ids as i32, [`NO_VALUE`] as
    /// -1): `[R, W, NV, fixed length (-1: by first value), MIOpen first-position kind (0 none,
    /// 1 substring, 2 any), 0, 0, 0]`, the length by first value `[NV]`, MIOpen's first-position
    /// mask `[NV]`, row lengths `[R]`, split-k positions `[R]` (-1: none), cells `[R, W]`; rows
    /// sorted by their cells.
    pub fn gpu_block(&self) -> Vec<i32> {
        let t = &self.table;
        let by: &[usize] = match &self.lengths {
            Lengths::ByFirstValue(by) => by,
            Lengths::Fixed(_) => &[],
        };
        let (kind, mask): (i32, Vec<i32>) = match &self.miopen_first {
            None => (0, Vec::new()),
            Some(MiopenFirst::Substring(answers)) => (1, answers.iter().map(|a| i32::from(a.is_some())).collect()),
            Some(MiopenFirst::Any) => (2, Vec::new()),
        };
        let nv = by.len().max(mask.len());
        let fixed = match self.lengths {
            Lengths::Fixed(n) => n as i32,
            Lengths::ByFirstValue(_) => -1,
        };
        let as_i32 = |v: u32| if v == NO_VALUE { -1 } else { v as i32 };
        let mut words = vec![t.rows() as i32, t.width as i32, nv as i32, fixed, kind, 0, 0, 0];
        words.extend((0..nv).map(|v| by.get(v).map_or(0, |&n| n as i32)));
        words.extend((0..nv).map(|v| mask.get(v).copied().unwrap_or(0)));
        // Rows sorted by their cells, so that the rows spelling a prefix are one run.
        let mut order: Vec<usize> = (0..t.rows()).collect();
        order.sort_by(|&a, &b| {
            t.row(a)
                .iter()
                .map(|&v| as_i32(v))
                .cmp(t.row(b).iter().map(|&v| as_i32(v)))
        });
        words.extend(order.iter().map(|&r| i32::from(t.lens[r])));
        words.extend(order.iter().map(|&r| match t.split_pos[r] {
            u8::MAX => -1,
            p => i32::from(p),
        }));
        words.extend(order.iter().flat_map(|&r| t.row(r).iter().map(|&v| as_i32(v))));
        words
    }

    fn first_len(&self, value: u32) -> usize {
        match &self.lengths {
            Lengths::Fixed(n) => *n,
            Lengths::ByFirstValue(by) => by.get(value as usize).copied().unwrap_or(0),
        }
    }
}

impl Constraint for CatalogueConstraint {
    fn config_len(&self, chosen: &[u32]) -> usize {
        match (&self.lengths, chosen.first()) {
            (Lengths::Fixed(n), _) => *n,
            (Lengths::ByFirstValue(_), None) => 1,
            (Lengths::ByFirstValue(_), Some(&v)) => self.first_len(v),
        }
    }

    fn accepts(&self, chosen: &[u32], value: u32) -> bool {
        let pos = chosen.len();
        if pos >= self.table.width {
            return false;
        }
        self.with_alive(chosen, |rows| {
            rows.iter().any(|&r| {
                let r = r as usize;
                pos < self.table.lens[r] as usize && self.table.row(r)[pos] == value
            })
        })
    }

    fn completable(&self, chosen: &[u32]) -> bool {
        // Every row is a complete supported config, so a prefix can be completed exactly when a
        // row of the length it will have is consistent with it.
        let want = if chosen.is_empty() {
            None
        } else {
            Some(self.config_len(chosen))
        };
        self.with_alive(chosen, |rows| {
            rows.iter()
                .any(|&r| want.is_none_or(|n| self.table.lens[r as usize] as usize == n))
        })
    }

    fn accepts_miopen(&self, chosen: &[u32], value: u32) -> bool {
        if chosen.is_empty() {
            match &self.miopen_first {
                Some(MiopenFirst::Any) => return self.table.rows() > 0,
                Some(MiopenFirst::Substring(answers)) if answers.get(value as usize).is_some_and(|a| a.is_some()) => {
                    return true
                }
                Some(MiopenFirst::Substring(_)) => {}
                None => {}
            }
        }
        let pos = chosen.len() as u8;
        // MIOpen builds a malformed kernel id at the split-k position, which never matches.
        if self.with_alive(chosen, |rows| {
            rows.iter().any(|&r| self.table.split_pos[r as usize] == pos)
        }) {
            return false;
        }
        self.accepts(chosen, value)
    }

    fn gpu_table(&self) -> Option<Vec<i32>> {
        Some(self.gpu_block())
    }

    fn config_text(&self, chosen: &[u32]) -> Option<String> {
        if chosen.len() == 1 && self.first_len(chosen[0]) == 0 {
            if let Lengths::ByFirstValue(_) = self.lengths {
                return match &self.miopen_first {
                    Some(MiopenFirst::Substring(answers)) => answers.get(chosen[0] as usize).cloned().flatten(),
                    Some(MiopenFirst::Any) => Some(String::new()),
                    None => None,
                };
            }
        }
        self.with_alive(chosen, |rows| {
            rows.iter()
                .find(|&&r| self.table.lens[r as usize] as usize == chosen.len())
                .and_then(|&r| self.table.answer_text(r as usize).map(String::from))
        })
    }
}
