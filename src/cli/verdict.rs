//! Which models `userdb` writes: only those that beat MIOpen's static default on their
//! held-out problems (issue 24, "never worse than doing nothing").

use std::path::PathBuf;

use crate::error::Result;
use crate::eval::{KindFigures, Verdict};
use crate::models::Located;

/// A loaded solver with its model's recorded validation figures.
#[derive(Debug, Clone)]
pub(super) struct Judged {
    pub solver: &'static str,
    pub verdict: Verdict,
    /// The figures per kind of problem (direction and precision).
    pub kinds: Vec<KindFigures>,
}

impl Judged {
    /// The summary line of a solver written only where MIOpen's default is not valid.
    pub fn mixed_line(&self, arch: &str, left: usize) -> String {
        format!(
            "{} on {arch}: written only where MIOpen's static default is not valid for the problem \
             ({left} problem(s) left to the default): on held-out problems that matches the tuned best \
             {:.1}%, the model alone {:.1}%, the default alone {:.1}% (--include-unproven writes the model everywhere)",
            self.solver,
            self.verdict.default_where_valid_pct.unwrap_or(0.0),
            self.verdict.model_exact_pct,
            self.verdict.default_exact_pct
        )
    }

    /// The kinds (`F FP32`, ...) whose problems `userdb` leaves to MIOpen's static default
    /// although the solver's model is written elsewhere: there the default alone beat what
    /// would be written ([`KindFigures::default_wins`]).
    pub fn kinds_left_to_default(&self) -> Vec<&KindFigures> {
        let mixed = self.verdict.policy() == crate::eval::Policy::WhereDefaultInvalid;
        self.kinds.iter().filter(|k| k.default_wins(mixed)).collect()
    }

    /// For a model that does not beat MIOpen's static default over all its held-out problems
    /// ([`crate::eval::Policy::Nowhere`]): the kinds where it does, beyond noise
    /// ([`KindFigures::model_wins_beyond_noise`]), the only ones `userdb` writes it for. Empty
    /// for any other model, and where no kind qualifies (then nothing is written).
    pub fn only_kinds(&self) -> Vec<&KindFigures> {
        if self.verdict.policy() != crate::eval::Policy::Nowhere {
            return Vec::new();
        }
        self.kinds.iter().filter(|k| k.model_wins_beyond_noise()).collect()
    }

    /// The summary line of a model written only for [`Judged::only_kinds`] (`left`: problems of
    /// the other kinds, left to MIOpen's static default).
    pub fn only_kinds_line(&self, arch: &str, left: usize) -> String {
        let kinds: Vec<String> = self
            .only_kinds()
            .iter()
            .map(|k| {
                format!(
                    "{} (model {:.1}% vs default {:.1}% on {})",
                    k.kind, k.model_exact_pct, k.default_exact_pct, k.problems
                )
            })
            .collect();
        format!(
            "{} on {arch}: written only for {}, where the model matches the tuned best more often than \
             MIOpen's static default on held-out problems; {left} problem(s) of other kinds left to the default \
             (over all held-out problems the model's {:.1}% does not beat the default's {:.1}%; \
             --include-unproven writes it everywhere)",
            self.solver,
            kinds.join(", "),
            self.verdict.model_exact_pct,
            self.verdict.default_exact_pct
        )
    }

    /// The summary line of a solver with kinds left to the default (`left`: problems).
    pub fn kinds_line(&self, arch: &str, left: usize) -> String {
        let kinds: Vec<String> = self
            .kinds_left_to_default()
            .iter()
            .map(|k| {
                format!(
                    "{} (default {:.1}% vs {:.1}% on {})",
                    k.kind,
                    k.default_exact_pct,
                    if self.verdict.policy() == crate::eval::Policy::WhereDefaultInvalid {
                        k.default_where_valid_pct.unwrap_or(k.model_exact_pct)
                    } else {
                        k.model_exact_pct
                    },
                    k.problems
                )
            })
            .collect();
        format!(
            "{} on {arch}: {left} problem(s) left to MIOpen's static default, whose kind's held-out \
             problems it matches the tuned best more often than the model: {} (--include-unproven writes the model)",
            self.solver,
            kinds.join(", ")
        )
    }

    /// The summary line: what was not written and why, and how to write it anyway.
    pub fn line(&self, arch: &str, written_anyway: bool) -> String {
        let figures = format!(
            "its model's exact match {:.1}% does not beat MIOpen's static default {:.1}% on held-out problems",
            self.verdict.model_exact_pct, self.verdict.default_exact_pct
        );
        if written_anyway {
            format!(
                "{} on {arch}: written (--include-unproven) although {figures}",
                self.solver
            )
        } else {
            format!(
                "{} on {arch}: not written: {figures} (--include-unproven writes it anyway)",
                self.solver
            )
        }
    }
}

/// The verdict of the model `solver` uses on `arch`, found as the engines found it
/// ([`crate::models::resolve`]; a model across GPUs by its figures for this GPU): tuneinfer's own model's metadata JSON figures; None for a model without
/// recorded figures (trained on every geometry) and for MIOpen's KTN models.
pub(super) fn verdict_of(
    arch: &str,
    solver: &'static str,
    dirs: &[PathBuf],
) -> Result<Option<(Verdict, Vec<KindFigures>)>> {
    let solver = crate::solvers::by_name(solver)?;
    let resolved = crate::models::resolve(arch, solver, dirs)?;
    match &resolved.located {
        Located::Attention(files, _) => {
            let (info, _) = crate::seq2seq::weights::read_info(&files.metadata)?;
            let metrics = info.metrics_for(resolved.figures_gpu());
            Ok(Verdict::from_metrics(metrics).map(|v| (v, KindFigures::from_metrics(metrics))))
        }
        Located::Ktn(_) | Located::Neighbour(..) => Ok(None),
    }
}

/// The solvers of `names` whose models record validation figures, with their index in `names`
/// (each model's JSON read once; [`Verdict::policy`] says where `userdb` writes it).
pub(super) fn judged(arch: &str, names: &[&'static str], dirs: &[PathBuf]) -> Result<Vec<(usize, Judged)>> {
    let mut out = Vec::new();
    for (i, &solver) in names.iter().enumerate() {
        if let Some((verdict, kinds)) = verdict_of(arch, solver, dirs)? {
            out.push((i, Judged { solver, verdict, kinds }));
        }
    }
    Ok(out)
}
