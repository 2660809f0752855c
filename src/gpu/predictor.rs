//! `GpuPredictor`: the [`Predictor`] interface with the model on the GPU. Problems are prepared
//! on the host (features, rule words), then decoded in chunks sized to the device's limits.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::attention::GpuAttention;
use super::buffers::Pool;
use super::context::GpuContext;
use super::decode;
use super::driver::{self, BeamJob, GreedyJob, ResidentModel};
use super::host_steps::{self, HostSteps};
use super::kernels::{self, BindCache, END_VALUE, NEVER_VALUE};
use super::model::GpuKtn;
use super::parallel;
use super::single;
use super::Precision;
use crate::error::{Error, Result};
use crate::models::{self, LoadedModel};
use crate::predict::{DecodeMode, Prediction, Predictor, Prepared};
use crate::problem::ConvProblem;
use crate::search::{beam_search, greedy_miopen, Constraint, Hypothesis, Vocabulary};
use crate::seq2seq::{AttentionModel, KtnModel};
use crate::solvers::{self, GpuSearch, RuleWords, Solver, Target};

/// Device memory one decoding chunk may use (well below the 2 GiB the design allows).
const CHUNK_BUDGET: u64 = 1 << 30;

/// Batches of at most this many decoded problems take the single-dispatch greedy path
/// (`single_predict.wgsl`: encoder, decoder steps and walk in one dispatch) where the model
/// and the rules library allow it. On lavapipe one problem takes 6.0 ms that way against 9.9 ms
/// in ~40 dispatches, but two take 11.8 ms against 10.5 ms, so only single predictions do.
const SINGLE_DISPATCH_MAX: usize = 1;

/// Buffer pools a predictor keeps between decodes: the two chunks a batch has in flight.
const POOLS_KEPT: usize = 2;

/// A decode on its way: a resident search submitted to the GPU with the pool its buffers came
/// from, or a result already there (the host's searches, errors).
enum Decoding {
    Ready(Result<Vec<Vec<Hypothesis>>>),
    InFlight {
        pending: driver::Pending,
        pool: Box<(Pool, BindCache)>,
    },
}

/// `catalogue_rules.wgsl`'s `SOLVER_MAX_LEN`: the longest catalogue config decoded on the GPU.
const CATALOGUE_MAX_LEN: usize = 24;

/// The weights on the device: a KTN model or tuneinfer's attention model (both decode resident
/// when the solver has a WGSL rules library, else step the model under the host's search).
enum DeviceModel {
    Ktn(Box<GpuKtn>),
    Attention(GpuAttention),
}

/// A model loaded on the GPU, with the host-side [`Predictor`] for problem preparation, the
/// static defaults and the answers' text.
pub struct GpuPredictor {
    ctx: Arc<GpuContext>,
    model: DeviceModel,
    host: Predictor,
    /// Work buffers (and bind groups) of the decodes, reused by later decodes of the same or a
    /// smaller size: one set per decode in flight (a batch keeps two chunks in flight), at
    /// most [`POOLS_KEPT`] kept.
    pools: std::sync::Mutex<Vec<(Pool, BindCache)>>,
    /// Most problems per decoding chunk (below what the device allows; tests of the chunking).
    chunk_limit: usize,
    /// The KTN model packed for the single-dispatch greedy path (f32 weights, shapes it takes).
    single: Option<single::SingleModel>,
    /// The search kernels' vocabulary words, built once per predictor (its vocabulary).
    words: VocabWords,
}

/// The vocabulary words each search kernel reads, built on first use.
#[derive(Default)]
struct VocabWords {
    greedy: std::sync::OnceLock<Vec<i32>>,
    beam: std::sync::OnceLock<(Vec<i32>, usize, usize)>,
    /// The catalogue greedy walk's words; its beam's are these and one 0 (no look-ahead domain).
    catalogue: std::sync::OnceLock<(Vec<i32>, Vec<i32>)>,
}

impl GpuPredictor {
    /// Finds and loads the model of `solver` on `arch` (as [`Predictor::load`] does) and uploads
    /// its weights to `ctx`.
    pub fn load(arch: &str, solver: &str, model_dirs: &[PathBuf], ctx: Arc<GpuContext>) -> Result<GpuPredictor> {
        GpuPredictor::load_with(arch, solver, model_dirs, ctx, Precision::F32)
    }

    /// [`GpuPredictor::load`] with a weight precision (f16 needs an adapter with shader f16).
    pub fn load_with(
        arch: &str,
        solver: &str,
        model_dirs: &[PathBuf],
        ctx: Arc<GpuContext>,
        precision: Precision,
    ) -> Result<GpuPredictor> {
        let solver = solvers::by_name(solver)?;
        let target = Target::new(arch);
        let (model, served) = models::find_and_load_resolved(arch, solver, model_dirs)?;
        let solver = models::serving_solver(solver, &served.located);
        let mut gpu = match model {
            LoadedModel::Attention(m) => GpuPredictor::new_attention(ctx, target, solver, *m, precision),
            LoadedModel::Ktn(m) => GpuPredictor::new(ctx, target, solver, *m, precision),
            LoadedModel::NoNetwork(m) => Err(Error::Usage(format!(
                "{} on {arch} is served without a network ({}): nothing runs on a GPU; the CPU predictor answers it",
                solver.name(),
                m.file.display()
            ))),
        }?;
        gpu.host.served = Some(Box::new(served));
        Ok(gpu)
    }

    pub fn new(
        ctx: Arc<GpuContext>,
        target: Target,
        solver: &'static dyn Solver,
        model: KtnModel,
        precision: Precision,
    ) -> Result<GpuPredictor> {
        check_precision(&ctx, precision)?;
        let gpu = GpuKtn::upload(&ctx, &model, precision == Precision::F16)?;
        // Models of shapes the single-dispatch kernel does not take keep the multi-dispatch path.
        let single = match precision {
            Precision::F32 => single::SingleModel::upload(&ctx, &model).ok(),
            Precision::F16 => None,
        };
        Ok(GpuPredictor {
            ctx,
            model: DeviceModel::Ktn(Box::new(gpu)),
            host: Predictor::new(target, solver, Box::new(model)),
            pools: std::sync::Mutex::new(Vec::new()),
            chunk_limit: usize::MAX,
            single,
            words: VocabWords::default(),
        })
    }

    /// tuneinfer's own attention model on the GPU (every ensemble member); the host's searches
    /// step it on the device.
    pub fn new_attention(
        ctx: Arc<GpuContext>,
        target: Target,
        solver: &'static dyn Solver,
        model: AttentionModel,
        precision: Precision,
    ) -> Result<GpuPredictor> {
        check_precision(&ctx, precision)?;
        let gpu = GpuAttention::upload(&ctx, &model, precision == Precision::F16)?;
        Ok(GpuPredictor {
            ctx,
            model: DeviceModel::Attention(gpu),
            host: Predictor::new(target, solver, Box::new(model)),
            pools: std::sync::Mutex::new(Vec::new()),
            chunk_limit: usize::MAX,
            single: None,
            words: VocabWords::default(),
        })
    }

    /// Sets the compute-unit count for solvers whose features use it.
    pub fn with_compute_units(self, compute_units: Option<u32>) -> GpuPredictor {
        self.map_host(|h| h.with_compute_units(compute_units))
    }

    /// Decodes at most `problems` problems at a time (at least 1); batches are split anyway
    /// where the device's limits require it.
    /// Takes the multi-dispatch path for single greedy predictions too (benchmarks comparing
    /// the two paths; the answers are the same).
    #[doc(hidden)]
    pub fn without_single_dispatch(mut self) -> GpuPredictor {
        self.single = None;
        self
    }

    pub fn with_chunk_limit(mut self, problems: usize) -> GpuPredictor {
        self.chunk_limit = problems.max(1);
        self
    }

    /// Changes the host-side predictor's settings (target options, threads).
    pub fn map_host(mut self, f: impl FnOnce(Predictor) -> Predictor) -> GpuPredictor {
        self.host = f(self.host);
        self
    }

    /// The host-side predictor (same model, CPU path).
    pub fn host(&self) -> &Predictor {
        &self.host
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Bytes of weights on the device.
    pub fn weight_bytes(&self) -> u64 {
        match &self.model {
            DeviceModel::Ktn(m) => m.weight_bytes,
            DeviceModel::Attention(m) => m.weight_bytes,
        }
    }

    /// Device bytes per problem of a GPU-resident greedy decode.
    pub fn greedy_bytes_per_problem(&self) -> u64 {
        match &self.model {
            DeviceModel::Ktn(m) => decode::bytes_per_problem(m, self.config_len(), None),
            DeviceModel::Attention(m) => m.bytes_per_problem(1),
        }
    }

    /// Device bytes per problem of a beam decode of `width` (states, scores and step buffers of
    /// `width` rows).
    pub fn beam_bytes_per_problem(&self, width: usize) -> u64 {
        match &self.model {
            DeviceModel::Ktn(m) => decode::bytes_per_problem(m, self.config_len(), Some(width)),
            DeviceModel::Attention(m) => m.bytes_per_problem(width),
        }
    }

    fn config_len(&self) -> usize {
        self.host
            .model
            .metadata()
            .num_tuning_params
            .values()
            .copied()
            .max()
            .unwrap_or(8)
    }

    /// Problems per chunk so that no buffer exceeds the device's limits nor the memory budget
    /// (a batch of several chunks, two of them in flight, takes chunks half as large).
    pub fn chunk_size(&self, mode: DecodeMode) -> usize {
        self.chunk_size_within(mode, CHUNK_BUDGET)
    }

    fn chunk_size_within(&self, mode: DecodeMode, budget: u64) -> usize {
        let per_problem = match mode {
            DecodeMode::Miopen => self.greedy_bytes_per_problem(),
            DecodeMode::Beam { width, .. } => self.beam_bytes_per_problem(width),
        };
        let width = match mode {
            DecodeMode::Miopen => 1,
            DecodeMode::Beam { width, .. } => width.max(1) as u64,
        };
        let largest = match &self.model {
            DeviceModel::Ktn(m) => decode::greedy_largest_row_bytes(m),
            DeviceModel::Attention(m) => m.largest_row_bytes(),
        } * width;
        let limit = self
            .ctx
            .limits
            .max_storage_buffer_binding_size
            .min(self.ctx.limits.max_buffer_size);
        let per_dim = u64::from(self.ctx.limits.max_compute_workgroups_per_dimension);
        let max_threads = per_dim * per_dim * u64::from(kernels::WG);
        let by_threads = max_threads / (largest / 4).max(1);
        ((budget / per_problem.max(1))
            .min(limit / largest.max(1))
            .min(by_threads)
            .max(1) as usize)
            .min(self.chunk_limit)
    }

    /// Predicts one problem.
    pub fn predict_one(&self, problem: &ConvProblem, mode: DecodeMode) -> Result<Vec<Prediction>> {
        self.predict_batch(std::slice::from_ref(problem), mode)
            .pop()
            .unwrap_or_else(|| Err(Error::Internal("no result".into())))
    }

    /// Predicts a batch, one result per problem in order (same contract as
    /// [`Predictor::predict_batch`]); split into chunks that fit the device. The host's work
    /// overlaps the GPU's, and the GPU never waits for the host between chunks: chunk i + 1 is
    /// prepared while chunk i records, and recorded and submitted (with a second set of work
    /// buffers) before the host waits for chunk i; chunk i - 1 is answered meanwhile.
    pub fn predict_batch(&self, problems: &[ConvProblem], mode: DecodeMode) -> Vec<Result<Vec<Prediction>>> {
        if let Err(e) = mode.check() {
            let message = e.to_string();
            return problems.iter().map(|_| Err(Error::Usage(message.clone()))).collect();
        }
        let single = self.chunk_size(mode);
        if problems.len() <= single {
            let prepared = self.prepare(problems);
            let decoding = self.decode_prepared(&prepared, mode);
            let found = decoding.map(|d| self.collect(d));
            return self.finish(problems, prepared, found);
        }
        // Two chunks in flight share the memory budget of one.
        let parts: Vec<&[ConvProblem]> = problems
            .chunks(self.chunk_size_within(mode, CHUNK_BUDGET / 2))
            .collect();
        let panicked = |part: &[ConvProblem]| -> Vec<Result<Vec<Prediction>>> {
            part.iter()
                .map(|_| Err(Error::Internal("a worker thread panicked".into())))
                .collect()
        };
        type Prep = Result<(Prepared, Vec<Option<RuleWords>>)>;
        std::thread::scope(|scope| {
            let mut out = Vec::with_capacity(problems.len());
            let mut preparing = Some(scope.spawn(|| self.prepare(parts[0])));
            let mut finishing: Option<(&[ConvProblem], std::thread::ScopedJoinHandle<_>)> = None;
            let mut in_flight: Option<(&[ConvProblem], Prep, Option<Decoding>)> = None;
            for i in 0..=parts.len() {
                // Submit chunk i (while chunk i - 1 runs on the GPU).
                let submitted = parts.get(i).map(|&part| {
                    let prepared = match preparing.take().map(|h| h.join()) {
                        Some(Ok(p)) => p,
                        _ => Err(Error::Internal("a worker thread panicked".into())),
                    };
                    if let Some(&next) = parts.get(i + 1) {
                        preparing = Some(scope.spawn(move || self.prepare(next)));
                    }
                    let decoding = self.decode_prepared(&prepared, mode);
                    (part, prepared, decoding)
                });
                // Then wait for chunk i - 1 and answer it on another thread.
                if let Some((part, prepared, decoding)) = std::mem::replace(&mut in_flight, submitted) {
                    let found = decoding.map(|d| self.collect(d));
                    if let Some((done, h)) = finishing.take() {
                        out.extend(h.join().unwrap_or_else(|_| panicked(done)));
                    }
                    finishing = Some((part, scope.spawn(move || self.finish(part, prepared, found))));
                }
            }
            if let Some((done, h)) = finishing.take() {
                out.extend(h.join().unwrap_or_else(|_| panicked(done)));
            }
            out
        })
    }

    /// Starts decoding the problems `prepare` made ready (None when there are none or it
    /// failed).
    fn decode_prepared(
        &self,
        prepared: &Result<(Prepared, Vec<Option<RuleWords>>)>,
        mode: DecodeMode,
    ) -> Option<Decoding> {
        let _phase = self.ctx.phase(super::profile::DECODE);
        let (p, rules) = prepared.as_ref().ok()?;
        if p.decoded.is_empty() {
            return None;
        }
        Some(self.decode(&p.inputs, &p.constraints, rules, self.host.solver.gpu_search(), mode))
    }

    /// Every problem's result from its preparation and what the decode found.
    fn finish(
        &self,
        problems: &[ConvProblem],
        prepared: Result<(Prepared, Vec<Option<RuleWords>>)>,
        found: Option<Result<Vec<Vec<Hypothesis>>>>,
    ) -> Vec<Result<Vec<Prediction>>> {
        let _phase = self.ctx.phase(super::profile::ANSWERS);
        // The host's preparation and answers fail only when a worker thread panicked.
        let internal = |e: Error| {
            let msg = match e {
                Error::Internal(msg) => msg,
                other => other.to_string(),
            };
            problems.iter().map(|_| Err(Error::Internal(msg.clone()))).collect()
        };
        let Prepared {
            decoded,
            constraints,
            mut results,
            ..
        } = match prepared {
            Ok((p, _)) => p,
            Err(e) => return internal(e),
        };
        match found {
            Some(Ok(found)) => {
                // The answers (configs, fallbacks) over the host's threads; each job's
                // hypotheses are taken (not copied) by the thread that answers it.
                type Job<'c> = (usize, Mutex<Vec<Hypothesis>>, &'c (dyn Constraint + Send + Sync));
                let jobs: Vec<Job> = decoded
                    .iter()
                    .zip(found)
                    .zip(&constraints)
                    .map(|((&i, hyps), c)| (i, Mutex::new(hyps), c.as_ref()))
                    .collect();
                let answered = parallel::map_parts(&jobs, self.host.threads(), |_, part| {
                    part.iter()
                        .map(|(i, hyps, c)| {
                            let hyps = hyps.lock().map(|mut h| std::mem::take(&mut *h)).unwrap_or_default();
                            (*i, self.host.answers(&problems[*i], hyps, *c))
                        })
                        .collect::<Vec<_>>()
                });
                match answered {
                    Ok(parts) => {
                        for (i, answer) in parts.into_iter().flatten() {
                            results[i] = Some(answer);
                        }
                    }
                    Err(e) => return internal(e),
                }
            }
            Some(Err(e)) => {
                let msg = e.to_string();
                for &i in &decoded {
                    results[i] = Some(Err(Error::Gpu(msg.trim_start_matches("GPU error: ").to_string())));
                }
            }
            None => {}
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(Error::Internal("problem left undecoded".into()))))
            .collect()
    }

    /// The host's preparation of every problem (features, constraints, rule words) over its
    /// threads, merged in batch order.
    fn prepare(&self, problems: &[ConvProblem]) -> Result<(Prepared, Vec<Option<RuleWords>>)> {
        let _phase = self.ctx.phase(super::profile::PREPARE);
        let host = &self.host;
        let (target, solver) = (&host.target, host.solver);
        let parts = parallel::map_parts(problems, host.threads(), |start, part| {
            let prepared = host.prepare(part);
            let rules: Vec<Option<RuleWords>> = prepared
                .decoded
                .iter()
                .map(|&i| solver.wgsl_rule_words(target, &part[i]))
                .collect();
            (start, prepared, rules)
        })?;
        let mut all = Prepared {
            inputs: Vec::new(),
            constraints: Vec::new(),
            decoded: Vec::new(),
            results: Vec::with_capacity(problems.len()),
        };
        let mut rules = Vec::new();
        for (start, p, r) in parts {
            all.inputs.extend_from_slice(&p.inputs);
            all.constraints.extend(p.constraints);
            all.decoded.extend(p.decoded.iter().map(|i| start + i));
            all.results.extend(p.results);
            rules.extend(r);
        }
        Ok((all, rules))
    }

    fn decode(
        &self,
        inputs: &[f32],
        constraints: &[Box<dyn Constraint + Send + Sync>],
        rule_words: &[Option<RuleWords>],
        search: GpuSearch,
        mode: DecodeMode,
    ) -> Decoding {
        let model = self.host.model.as_ref();
        let vocab = model.vocab();
        let max_len = constraints.iter().map(|c| c.config_len(&[])).max().unwrap_or(0);
        let fixed_len = constraints.iter().all(|c| c.config_len(&[]) == max_len);
        let library = match search {
            GpuSearch::Table => return Decoding::Ready(self.decode_catalogue(inputs, constraints, mode)),
            GpuSearch::Rules(library) => Some(library),
            GpuSearch::Host => None,
        };
        // The longest config the library's resident searches take.
        let fits = |lib: &str| max_len <= super::registry::rules_max_len(lib).unwrap_or(0);
        // Every problem's rule words with the tables after them, in one storage binding; None
        // (the host's search) when a problem has none (the library does not take it) or they
        // do not fit one binding (tens of words a problem: a chunk's larger per-problem
        // buffers, which chunk_size keeps within the limits, reach them first).
        let packed = library
            .and_then(|_| pack_rule_words(rule_words.iter().map(Option::as_ref)))
            .filter(|(rules, tables)| {
                let limit = self
                    .ctx
                    .limits
                    .max_storage_buffer_binding_size
                    .min(self.ctx.limits.max_buffer_size);
                4 * (8 * rules.len() + tables.len()) as u64 <= limit
            });
        let (rules, tables) = match &packed {
            Some((rules, tables)) => (rules.as_slice(), tables.as_slice()),
            None => return Decoding::Ready(self.decode_on_host(inputs, constraints, mode)),
        };
        match (mode, library) {
            (DecodeMode::Miopen, Some(lib)) if fixed_len && fits(lib) => {
                let words = self.words.greedy.get_or_init(|| vocab_words(vocab));
                let job = GreedyJob {
                    inputs,
                    rules,
                    tables,
                    vocab_words: words,
                    rules_library: lib,
                    threads: self.host.threads(),
                    max_len,
                };
                let single = self.single.as_ref().filter(|m| {
                    rules.len() <= SINGLE_DISPATCH_MAX
                        && single::single_fits(&self.ctx, &m.shape, lib, 1, max_len).is_ok()
                });
                if let Some(single) = single {
                    // Shapes or libraries the kernel refuses take the multi-dispatch path.
                    if let Ok(found) =
                        self.with_pool(|pool, cache| single::greedy_single(&self.ctx, pool, cache, single, &job))
                    {
                        return Decoding::Ready(Ok(found.into_iter().map(|h| h.into_iter().collect()).collect()));
                    }
                }
                self.submit_with_pool(|pool, cache| match &self.model {
                    DeviceModel::Ktn(m) => driver::greedy_resident(&self.ctx, pool, cache, m.as_ref(), &job),
                    DeviceModel::Attention(m) => driver::greedy_resident(&self.ctx, pool, cache, m, &job),
                })
            }
            (DecodeMode::Beam { width, top }, Some(lib))
                if fixed_len && fits(lib) && kernels::beam_step_fits(&self.ctx, width.max(1), vocab.len()) =>
            {
                let (words, values, domain_len) = self.words.beam.get_or_init(|| beam_vocab_words(vocab));
                let (values, domain_len) = (*values, *domain_len);
                if domain_len <= kernels::MAX_DOMAIN {
                    let job = BeamJob {
                        inputs,
                        rules,
                        tables,
                        vocab_words: words,
                        values,
                        domain_len,
                        rules_library: lib,
                        max_len,
                        width: width.max(1),
                        top: top.clamp(1, width.max(1)),
                        threads: self.host.threads(),
                    };
                    return self.submit_with_pool(|pool, cache| match &self.model {
                        DeviceModel::Ktn(m) => driver::beam_resident(&self.ctx, pool, cache, m.as_ref(), &job),
                        DeviceModel::Attention(m) => driver::beam_resident(&self.ctx, pool, cache, m, &job),
                    });
                }
                Decoding::Ready(self.decode_on_host(inputs, constraints, mode))
            }
            _ => Decoding::Ready(self.decode_on_host(inputs, constraints, mode)),
        }
    }

    /// Catalogue solvers: both searches resident on the GPU with each problem's table
    /// ([`Constraint::gpu_table`]) checked by `catalogue_rules.wgsl`. Falls back to the host's
    /// search for configs longer than the library takes or beams wider than `beam_step` takes.
    fn decode_catalogue(
        &self,
        inputs: &[f32],
        constraints: &[Box<dyn Constraint + Send + Sync>],
        mode: DecodeMode,
    ) -> Result<Vec<Vec<Hypothesis>>> {
        let vocab = self.host.model.vocab();
        let Some(blocks) = constraints
            .iter()
            .map(|c| c.gpu_table())
            .collect::<Option<Vec<Vec<i32>>>>()
        else {
            return self.decode_on_host(inputs, constraints, mode);
        };
        let max_len = blocks
            .iter()
            .map(|b| b.get(1).copied().unwrap_or(0).max(1) as usize)
            .max();
        let max_len = max_len.unwrap_or(1);
        let beam_fits = |width: usize| kernels::beam_step_fits(&self.ctx, width, vocab.len());
        let fits = max_len <= CATALOGUE_MAX_LEN
            && match mode {
                DecodeMode::Miopen => true,
                DecodeMode::Beam { width, .. } => beam_fits(width.max(1)),
            };
        if !fits || constraints.is_empty() {
            return self.decode_on_host(inputs, constraints, mode);
        }
        let per_input = inputs.len() / constraints.len();
        // The rules buffer (rule words, then the tables) stays within one binding.
        let limit = self
            .ctx
            .limits
            .max_storage_buffer_binding_size
            .min(self.ctx.limits.max_buffer_size)
            .min(1 << 30)
            / 4;
        let mut found: Vec<Vec<Hypothesis>> = Vec::with_capacity(constraints.len());
        let mut start = 0;
        while start < blocks.len() {
            let mut end = start;
            let mut total = 0u64;
            while end < blocks.len() && (end == start || total + 8 + blocks[end].len() as u64 <= limit) {
                total += 8 + blocks[end].len() as u64;
                end += 1;
            }
            if total > limit || total > i32::MAX as u64 {
                return Err(Error::Gpu(format!(
                    "a catalogue table of {total} words does not fit one storage binding"
                )));
            }
            found.extend(self.decode_catalogue_part(
                &inputs[start * per_input..end * per_input],
                &blocks[start..end],
                max_len,
                mode,
            )?);
            start = end;
        }
        Ok(found)
    }

    fn decode_catalogue_part(
        &self,
        inputs: &[f32],
        blocks: &[Vec<i32>],
        max_len: usize,
        mode: DecodeMode,
    ) -> Result<Vec<Vec<Hypothesis>>> {
        let vocab = self.host.model.vocab();
        let miopen = i32::from(mode == DecodeMode::Miopen);
        let mut offset = 8 * blocks.len();
        let mut rules: Vec<[i32; 8]> = Vec::with_capacity(blocks.len());
        let mut tables: Vec<i32> = Vec::with_capacity(blocks.iter().map(Vec::len).sum());
        for b in blocks {
            rules.push([offset as i32, miopen, 0, 0, 0, 0, 0, 0]);
            tables.extend_from_slice(b);
            offset += b.len();
        }
        let (greedy_words, beam_words) = self.words.catalogue.get_or_init(|| {
            let greedy = catalogue_vocab_words(vocab);
            let mut beam = greedy.clone();
            beam.push(0);
            (greedy, beam)
        });
        match mode {
            DecodeMode::Miopen => {
                let job = GreedyJob {
                    inputs,
                    rules: &rules,
                    tables: &tables,
                    vocab_words: greedy_words,
                    rules_library: solvers::ck::CATALOGUE_RULES,
                    threads: self.host.threads(),
                    max_len,
                };
                let decoding = self.submit_with_pool(|pool, cache| match &self.model {
                    DeviceModel::Ktn(m) => driver::greedy_resident(&self.ctx, pool, cache, m.as_ref(), &job),
                    DeviceModel::Attention(m) => driver::greedy_resident(&self.ctx, pool, cache, m, &job),
                });
                self.collect(decoding)
            }
            DecodeMode::Beam { width, top } => {
                // No look-ahead domain: the table is its own look-ahead.
                let job = BeamJob {
                    inputs,
                    rules: &rules,
                    tables: &tables,
                    vocab_words: beam_words,
                    values: vocab.values.len(),
                    domain_len: 0,
                    rules_library: solvers::ck::CATALOGUE_RULES,
                    max_len,
                    width: width.max(1),
                    top: top.clamp(1, width.max(1)),
                    threads: self.host.threads(),
                };
                let decoding = self.submit_with_pool(|pool, cache| match &self.model {
                    DeviceModel::Ktn(m) => driver::beam_resident(&self.ctx, pool, cache, m.as_ref(), &job),
                    DeviceModel::Attention(m) => driver::beam_resident(&self.ctx, pool, cache, m, &job),
                });
                self.collect(decoding)
            }
        }
    }

    /// Records and submits a resident search with a pool of work buffers (a kept one, or a
    /// new one while the kept ones are in flight).
    fn submit_with_pool(&self, submit: impl FnOnce(&mut Pool, &mut BindCache) -> Result<driver::Pending>) -> Decoding {
        let kept = self.pools.lock().ok().and_then(|mut p| p.pop());
        let (mut pool, mut cache) = kept.unwrap_or_default();
        match submit(&mut pool, &mut cache) {
            Ok(pending) => Decoding::InFlight {
                pending,
                pool: Box::new((pool, cache)),
            },
            // The pool's buffers may be in any state: dropped.
            Err(e) => Decoding::Ready(Err(e)),
        }
    }

    /// Runs a synchronous decode with a pool of work buffers, given back after success.
    fn with_pool<T>(&self, decode: impl FnOnce(&mut Pool, &mut BindCache) -> Result<T>) -> Result<T> {
        let kept = self.pools.lock().ok().and_then(|mut p| p.pop());
        let (mut pool, mut cache) = kept.unwrap_or_default();
        let out = decode(&mut pool, &mut cache)?;
        self.give_back(pool, cache);
        Ok(out)
    }

    /// Keeps a pool whose decode finished for the next decode (its buffers recycled).
    fn give_back(&self, mut pool: Pool, mut cache: BindCache) {
        // Bind groups stay valid while decodes keep finding the same buffers.
        if pool.recycle() {
            cache.clear();
        }
        if let Ok(mut pools) = self.pools.lock() {
            if pools.len() < POOLS_KEPT {
                pools.push((pool, cache));
            }
        }
    }

    /// Waits for a decode; a search's pool goes back to the predictor after success (its
    /// buffers kept for the next decode) and is dropped after a failure.
    fn collect(&self, decoding: Decoding) -> Result<Vec<Vec<Hypothesis>>> {
        let _phase = self.ctx.phase(super::profile::DECODE);
        match decoding {
            Decoding::Ready(found) => found,
            Decoding::InFlight { pending, pool } => {
                let (pool, cache) = *pool;
                let found = pending.finish(&self.ctx);
                if found.is_ok() {
                    self.give_back(pool, cache);
                }
                found
            }
        }
    }

    /// The model on the GPU, the search on the host (solvers without a WGSL rules library).
    fn decode_on_host(
        &self,
        inputs: &[f32],
        constraints: &[Box<dyn Constraint + Send + Sync>],
        mode: DecodeMode,
    ) -> Result<Vec<Vec<Hypothesis>>> {
        let (found, error) = match &self.model {
            DeviceModel::Ktn(gpu) => self.host_search_on(gpu.as_ref(), inputs, constraints, mode)?,
            DeviceModel::Attention(gpu) => self.host_search_on(gpu, inputs, constraints, mode)?,
        };
        match error {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }

    /// The encoder and the decoder steps of `m` on the GPU under the host's search; the
    /// hypotheses and the first GPU error of a step.
    fn host_search_on<M: ResidentModel + Sync>(
        &self,
        m: &M,
        inputs: &[f32],
        constraints: &[Box<dyn Constraint + Send + Sync>],
        mode: DecodeMode,
    ) -> Result<(Vec<Vec<Hypothesis>>, Option<Error>)> {
        let states = host_steps::encode_to_states(&self.ctx, m, inputs, constraints.len())?;
        let decoder = HostSteps::new(&self.ctx, m);
        let found = self.host_search(&decoder, states, constraints, mode);
        Ok((found, decoder.take_error()))
    }

    /// The host's search (MIOpen's greedy walk or the constrained beam) over `decoder`'s steps.
    fn host_search(
        &self,
        decoder: &dyn crate::seq2seq::StepDecoder,
        states: crate::seq2seq::States,
        constraints: &[Box<dyn Constraint + Send + Sync>],
        mode: DecodeMode,
    ) -> Vec<Vec<Hypothesis>> {
        let vocab = self.host.model.vocab();
        let refs: Vec<&dyn Constraint> = constraints.iter().map(|c| c.as_ref() as &dyn Constraint).collect();
        match mode {
            DecodeMode::Miopen => greedy_miopen(decoder, vocab, states, &refs)
                .into_iter()
                .map(|h| h.into_iter().collect())
                .collect(),
            DecodeMode::Beam { width, top } => {
                beam_search(decoder, vocab, states, &refs, width, top.clamp(1, width.max(1)))
            }
        }
    }
}

/// The rule words of a resident search's problems as the kernels read them: 8 words per problem
/// (a [`RuleWords::Fixed`] as it is, a [`RuleWords::Table`] as `[offset, length, 0, 0, 0, 0, 0,
/// 0]`), and the tables, which follow the 8-word rows in the rules buffer (offsets count i32
/// words from the buffer's start). None when a problem has no words or an offset passes i32.
pub fn pack_rule_words<'a>(
    words: impl ExactSizeIterator<Item = Option<&'a RuleWords>>,
) -> Option<(Vec<[i32; 8]>, Vec<i32>)> {
    let mut offset = 8 * words.len();
    let mut rules = Vec::with_capacity(words.len());
    let mut tables = Vec::new();
    for w in words {
        match w? {
            RuleWords::Fixed(fixed) => rules.push(*fixed),
            RuleWords::Table(table) => {
                let at = i32::try_from(offset).ok()?;
                let len = i32::try_from(table.len()).ok()?;
                rules.push([at, len, 0, 0, 0, 0, 0, 0]);
                tables.extend_from_slice(table);
                offset += table.len();
            }
        }
    }
    i32::try_from(offset).ok()?;
    Some((rules, tables))
}

/// f16 weights need an adapter with shader f16.
fn check_precision(ctx: &GpuContext, precision: Precision) -> Result<()> {
    if precision == Precision::F16 && !ctx.adapter().shader_f16 {
        return Err(Error::NoGpu(format!(
            "{} has no shader f16 support; use --precision f32",
            ctx.adapter().name
        )));
    }
    Ok(())
}

/// `beam_step.wgsl`'s vocabulary table: [`vocab_words`], then the number of accepted values
/// and those values ascending (the look-ahead's domain). Also returns the counts.
pub fn beam_vocab_words(vocab: &Vocabulary) -> (Vec<i32>, usize, usize) {
    let mut words = vocab_words(vocab);
    let values = vocab.values.len();
    let mut domain: Vec<i32> = words[vocab.len()..]
        .iter()
        .copied()
        .filter(|&v| v != END_VALUE && v != NEVER_VALUE)
        .collect();
    domain.sort_unstable();
    domain.dedup();
    words.push(domain.len() as i32);
    words.extend_from_slice(&domain);
    (words, values, domain.len())
}

/// The vocabulary table of catalogue solvers: the value id of each token, then each value id as
/// itself ([`END_VALUE`] for "-1"): `catalogue_rules.wgsl` compares value ids.
pub fn catalogue_vocab_words(vocab: &Vocabulary) -> Vec<i32> {
    let mut words: Vec<i32> = vocab.token_value.iter().map(|&v| v as i32).collect();
    words.extend(
        vocab
            .values
            .iter()
            .enumerate()
            .map(|(i, s)| if s == "-1" { END_VALUE } else { i as i32 }),
    );
    words
}

/// `greedy_step.wgsl`'s vocabulary table: the value id of each token, then each value as an
/// i32 ([`END_VALUE`] for "-1", [`NEVER_VALUE`] for anything that is not a small integer).
pub fn vocab_words(vocab: &Vocabulary) -> Vec<i32> {
    let mut words: Vec<i32> = vocab.token_value.iter().map(|&v| v as i32).collect();
    words.extend(vocab.values.iter().map(|s| {
        if s == "-1" {
            return END_VALUE;
        }
        match s.trim().parse::<i64>() {
            Ok(v) if v != -1 && (-(1 << 24)..(1 << 24)).contains(&v) => v as i32,
            _ => NEVER_VALUE,
        }
    }));
    words
}
