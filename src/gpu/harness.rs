//! What the test and benchmark entry points of the GPU's non-default greedy paths share
//! (`single::SinglePathPredictor`, `fused::FusedPathPredictor`): the host's preparation, the
//! rule words and vocabulary words, the pooled buffers and the answers, as `GpuPredictor`
//! does them, around one greedy decode the caller runs.

use std::sync::Mutex;

use super::buffers::Pool;
use super::driver::GreedyJob;
use super::kernels::BindCache;
use super::predictor::{pack_rule_words, vocab_words};
use crate::error::{Error, Result};
use crate::models::{self, LoadedModel};
use crate::predict::{DecodeMode, Prediction, Predictor};
use crate::problem::ConvProblem;
use crate::search::Hypothesis;
use crate::seq2seq::KtnModel;
use crate::solvers::{self, GpuSearch, RuleWords, Solver, Target};

/// The KTN model of `solver` on `arch` from `model_dirs`, with its solver and target (`path`
/// names the path in the error for a model of another kind).
pub(crate) fn load_ktn(
    path: &str,
    arch: &str,
    solver: &str,
    model_dirs: &[std::path::PathBuf],
) -> Result<(&'static dyn Solver, Target, Box<KtnModel>)> {
    let solver = solvers::by_name(solver)?;
    match models::find_and_load(arch, solver, model_dirs)? {
        LoadedModel::Ktn(m) => Ok((solver, Target::new(arch), m)),
        LoadedModel::Attention(_) | LoadedModel::NoNetwork(_) => {
            Err(Error::Gpu(format!("{path}: takes MIOpen's KTN models only")))
        }
    }
}

/// The WGSL rules library of `host`'s solver (`path` names the path in the error without one).
pub(crate) fn rules_library(path: &str, host: &Predictor) -> Result<&'static str> {
    match host.solver.gpu_search() {
        GpuSearch::Rules(library) => Ok(library),
        _ => Err(Error::Gpu(format!(
            "{path}: {} has no WGSL rules library",
            host.solver.name()
        ))),
    }
}

/// Predicts `problems` with MIOpen's greedy walk, `decode` running the walk on the device (the
/// rows of `job`: the decoded problems); one result per problem. `path` names the path in the
/// errors for what it does not take (another mode, a solver without a rules library, configs
/// of different lengths).
pub(crate) fn greedy_batch(
    path: &str,
    host: &Predictor,
    pool: &Mutex<(Pool, BindCache)>,
    problems: &[ConvProblem],
    mode: DecodeMode,
    decode: impl FnOnce(&mut Pool, &mut BindCache, &GreedyJob<'_>) -> Result<Vec<Option<Hypothesis>>>,
) -> Result<Vec<Result<Vec<Prediction>>>> {
    let unsupported = |what: &str| Error::Gpu(format!("{path}: {what}"));
    if mode != DecodeMode::Miopen {
        return Err(unsupported("MIOpen's greedy walk only"));
    }
    let library = match host.solver.gpu_search() {
        GpuSearch::Rules(library) => library,
        _ => {
            return Err(unsupported(&format!(
                "{} has no WGSL rules library",
                host.solver.name()
            )))
        }
    };
    let mut prepared = host.prepare(problems);
    if prepared.decoded.is_empty() {
        return Ok(finish(prepared.results));
    }
    let rule_words: Vec<Option<RuleWords>> = prepared
        .decoded
        .iter()
        .map(|&i| host.solver.wgsl_rule_words(&host.target, &problems[i]))
        .collect();
    let (rules, tables) = pack_rule_words(rule_words.iter().map(Option::as_ref))
        .ok_or_else(|| unsupported("a problem without rule words"))?;
    let max_len = prepared
        .constraints
        .iter()
        .map(|c| c.config_len(&[]))
        .max()
        .unwrap_or(0);
    if prepared.constraints.iter().any(|c| c.config_len(&[]) != max_len) {
        return Err(unsupported("configs of different lengths"));
    }
    let words = vocab_words(host.model.vocab());
    let job = GreedyJob {
        inputs: &prepared.inputs,
        rules: &rules,
        tables: &tables,
        vocab_words: &words,
        rules_library: library,
        threads: 1,
        max_len,
    };
    let found = {
        let mut guard = pool
            .lock()
            .map_err(|_| Error::Gpu("buffer pool poisoned by an earlier panic".into()))?;
        let (pool, cache) = &mut *guard;
        let out = decode(pool, cache, &job);
        match &out {
            Ok(_) => {
                if pool.recycle() {
                    cache.clear();
                }
            }
            Err(_) => {
                pool.clear();
                cache.clear();
            }
        }
        out?
    };
    for ((&i, hyp), c) in prepared.decoded.iter().zip(found).zip(&prepared.constraints) {
        prepared.results[i] = Some(host.answers(&problems[i], hyp.into_iter().collect(), c.as_ref()));
    }
    Ok(finish(prepared.results))
}

fn finish(results: Vec<Option<Result<Vec<Prediction>>>>) -> Vec<Result<Vec<Prediction>>> {
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Internal("problem left undecoded".into()))))
        .collect()
}
