//! The integer-parameter side of a solver ([`Tunable`]), its rules over integer values
//! ([`IntRules`]) and the search's constraint built from them ([`IntConstraint`]).
//!
//! A tunable solver's config is a fixed number of integers, written comma-joined in MIOpen's
//! perf-db order. Its rules are a prefix check (does every rule that the first L values decide
//! hold?) plus a look-ahead (can a valid prefix still be completed?), both pure functions of the
//! problem (and target) fixed when the rules are built.

use super::{Solver, Target};
use crate::error::{Error, Result};
use crate::format::metadata::KtnMetadata;
use crate::problem::ConvProblem;
use crate::search::{Constraint, Vocabulary};

/// Number of features of tuneinfer's own model, for every tunable solver (the encoder reads one
/// feature per step).
pub const NUM_FEATURES: usize = 12;

/// The GPU families a model with the GPU as an input tells apart (a prefix of the arch name:
/// `gfx94` is gfx940/941/942, `gfx103` is RDNA2's gfx1030-1036), one flag each.
pub const GPU_FAMILIES: [&str; 6] = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx94", "gfx103"];

/// Features of the GPU that a model trained across GPUs reads after the solver's
/// [`NUM_FEATURES`]: log2 of the compute units, then one flag per [`GPU_FAMILIES`] entry.
pub const NUM_GPU_FEATURES: usize = 1 + GPU_FAMILIES.len();

/// Names of [`gpu_features`], in encoder step order.
pub const GPU_FEATURE_NAMES: [&str; NUM_GPU_FEATURES] = [
    "log2_compute_units",
    "is_gfx900",
    "is_gfx906",
    "is_gfx908",
    "is_gfx90a",
    "is_gfx94x",
    "is_gfx103x",
];

/// The GPU's features (see [`NUM_GPU_FEATURES`]): log2 of `compute_units` (at least 1), then
/// 1.0 for the family `arch` belongs to and 0.0 for the others (all 0.0 for an arch outside
/// [`GPU_FAMILIES`]).
pub fn gpu_features(arch: &str, compute_units: u32) -> [f32; NUM_GPU_FEATURES] {
    let mut f = [0f32; NUM_GPU_FEATURES];
    f[0] = (compute_units.max(1) as f32).log2();
    let arch = arch.to_ascii_lowercase();
    for (i, family) in GPU_FAMILIES.iter().enumerate() {
        if arch.starts_with(family) {
            f[1 + i] = 1.0;
        }
    }
    f
}

/// The most parameters a tunable solver's config may have (the constraint's stack buffer).
pub const MAX_INT_PARAMS: usize = 40;

/// What the dataset, training, `eval` and the search need of a solver with integer parameters.
pub trait Tunable: Send + Sync {
    /// MIOpen's solver name (the same as [`super::Solver::name`]).
    fn solver_name(&self) -> &'static str;

    /// Parameter names in MIOpen's perf-db order; their count is the config length.
    fn param_names(&self) -> &'static [&'static str];

    /// Parses MIOpen's params string (e.g. `4,8,4,16,1,4,1,8`): exactly as many comma-separated
    /// integers as [`Tunable::param_names`] (spaces around a field allowed). Errors name the bad
    /// field; a string of the wrong length is an error, never padded or cut.
    fn parse_params(&self, s: &str) -> Result<Vec<i64>> {
        parse_int_list(self.solver_name(), self.param_names(), s)
    }

    /// How MIOpen writes a config (comma-joined).
    fn format_params(&self, config: &[i64]) -> String {
        config.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
    }

    /// The text a model file stores for value `value` of parameter `position` (the token's
    /// value). By default the integer itself; a solver whose values are indices into a list
    /// built from data (CK's catalogue) stores what the index stands for, so that a model keeps
    /// its meaning when the list is built from other data.
    fn value_text(&self, _position: usize, value: i64) -> String {
        value.to_string()
    }

    /// The value a model file's token text stands for today: what [`Tunable::value_text`]
    /// wrote, read back. `Ok(None)`: a value the solver cannot take today (never accepted).
    /// By default the text is the integer.
    fn text_value(&self, text: &str) -> Result<Option<i64>> {
        text.trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| Error::format(self.solver_name(), format!("'{text}' is not an integer")))
    }

    /// Ok when the solver applies to the problem on this target; otherwise
    /// [`Error::NotApplicable`] saying why.
    fn applicable(&self, target: &Target, problem: &ConvProblem) -> Result<()>;

    /// The validity rules for one problem.
    fn rules(&self, target: &Target, problem: &ConvProblem) -> Box<dyn IntRules>;

    /// MIOpen's static default (`GetDefaultPerformanceConfig`).
    fn static_default(&self, target: &Target, problem: &ConvProblem) -> Vec<i64>;

    /// Names of the features of tuneinfer's model, in encoder step order.
    fn feature_names(&self) -> [&'static str; NUM_FEATURES];

    /// The raw features of tuneinfer's model (standardised by the model's fitted transform).
    /// The first [`Tunable::size_features`] are log2 sizes: the nearest-neighbour baseline
    /// measures distance over them.
    fn features(&self, problem: &ConvProblem) -> [f32; NUM_FEATURES];

    /// The arches MIOpen ships a KernelTuningNet model of this solver for (`eval` compares
    /// with the first; empty: none).
    fn miopen_model_arches(&self) -> &'static [&'static str] {
        &[]
    }

    /// What `bench`'s random workload draws for this solver: the directions and the (square)
    /// filter size (padding "same").
    fn workload_kind(&self) -> (&'static [crate::problem::Direction], u64);

    /// A class of problems, beside direction and precision, whose figures `eval` reports on
    /// their own (and `userdb` leaves to MIOpen's default where it wins there, as a kind): e.g.
    /// ConvAsm1x1U's stride-2 problems, which run a subsampling kernel first. None for most.
    fn problem_class(&self, _problem: &ConvProblem) -> Option<&'static str> {
        None
    }

    /// How many leading features are log2 sizes (see [`Tunable::features`]).
    fn size_features(&self) -> usize {
        6
    }

    /// True when `config` is not a tuned config but a marker MIOpen stores in its place and
    /// treats as "no entry" (the MLIR solvers' heuristic init request `-2,...`, written when
    /// tuning found no valid config). The dataset counts such rows apart and never trains on
    /// them. Default: no such marker.
    fn is_default_request(&self, _config: &[i64]) -> bool {
        false
    }

    /// One representative of the configs that launch the same kernel with the same arguments
    /// as `config` on this problem (e.g. GTC wrw's split values that give one split count).
    /// `eval` compares representatives, so two answers MIOpen runs identically count as one
    /// (training keeps the tuned values as stored). Default: the config itself.
    fn canonical(&self, _target: &Target, _problem: &ConvProblem, config: &[i64]) -> Vec<i64> {
        config.to_vec()
    }
}

/// A solver's rules for one problem, over integer values.
pub trait IntRules: Send + Sync {
    /// Number of parameters of a complete config.
    fn config_len(&self) -> usize;

    /// Do all rules that the first `prefix.len()` values decide hold? False for a prefix longer
    /// than [`IntRules::config_len`].
    fn prefix_valid(&self, prefix: &[i64]) -> bool;

    /// Is there some completion of the valid prefix, with each later value drawn from `domain`,
    /// that is a fully valid config? False when the prefix itself is invalid. The default is a
    /// depth-first search that stops at the first success; solvers whose dead prefixes need a
    /// long search to be found dead override it.
    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        if !self.prefix_valid(prefix) {
            return false;
        }
        let n = self.config_len();
        if prefix.len() >= n {
            return prefix.len() == n;
        }
        let mut buf = prefix.to_vec();
        complete_dfs(self, &mut buf, n, domain)
    }

    /// Is the full config valid?
    fn is_valid(&self, config: &[i64]) -> bool {
        config.len() == self.config_len() && self.prefix_valid(config)
    }
}

/// The default look-ahead: `buf` is a valid prefix; can it be extended to length `n`?
fn complete_dfs<R: IntRules + ?Sized>(rules: &R, buf: &mut Vec<i64>, n: usize, domain: &[i64]) -> bool {
    if buf.len() == n {
        return true;
    }
    for &x in domain {
        buf.push(x);
        if rules.prefix_valid(buf) && complete_dfs(rules, buf, n, domain) {
            buf.pop();
            return true;
        }
        buf.pop();
    }
    false
}

/// The look-ahead of [`IntRules::completable`] for rules whose later positions read only a few
/// values of a prefix: a depth-first search over `domain`, stopping at the first complete valid
/// config of length `n`, with a per-call memo of failed states (`key(prefix, depth)`: what the
/// rules after position `depth - 1` read of the first `depth` values; equal keys at equal depth
/// share the answer) and a prune (`dead(prefix, depth)`: a necessary condition of every
/// completion fails). The memo and the prune only save work: the answer is the plain search's.
pub fn memoised_completable<K: std::hash::Hash + Eq>(
    prefix_valid: &dyn Fn(&[i64]) -> bool,
    prefix: &[i64],
    n: usize,
    domain: &[i64],
    key: &dyn Fn(&[i64], usize) -> K,
    dead: &dyn Fn(&[i64], usize) -> bool,
) -> bool {
    struct Search<'a, K> {
        prefix_valid: &'a dyn Fn(&[i64]) -> bool,
        n: usize,
        domain: &'a [i64],
        key: &'a dyn Fn(&[i64], usize) -> K,
        dead: &'a dyn Fn(&[i64], usize) -> bool,
        failed: std::collections::HashSet<(usize, K)>,
    }
    impl<K: std::hash::Hash + Eq> Search<'_, K> {
        /// `buf[..depth]` is a valid prefix; can it be completed?
        fn from(&mut self, buf: &mut [i64], depth: usize) -> bool {
            if depth == self.n {
                return true;
            }
            if (self.dead)(buf, depth) {
                return false;
            }
            let key = (depth, (self.key)(buf, depth));
            if self.failed.contains(&key) {
                return false;
            }
            for i in 0..self.domain.len() {
                buf[depth] = self.domain[i];
                if (self.prefix_valid)(&buf[..=depth]) && self.from(buf, depth + 1) {
                    return true;
                }
            }
            self.failed.insert(key);
            false
        }
    }
    if prefix.len() > n || !prefix_valid(prefix) {
        return false;
    }
    let mut buf = vec![0i64; n];
    buf[..prefix.len()].copy_from_slice(prefix);
    let mut search = Search {
        prefix_valid,
        n,
        domain,
        key,
        dead,
        failed: std::collections::HashSet::new(),
    };
    search.from(&mut buf, prefix.len())
}

/// Every config over the per-position `domain` (first position slowest) that `accepts`: a
/// depth-first walk that extends a prefix only when `accepts(prefix)` holds, where every shorter
/// prefix was accepted (so a caller may check only the last position's rules). For solvers
/// whose valid configs are few enough to list (the table-constraint solvers).
pub fn valid_configs_over<const N: usize>(domain: &[&[i64]; N], accepts: &dyn Fn(&[i64]) -> bool) -> Vec<[i64; N]> {
    fn walk<const N: usize>(
        domain: &[&[i64]; N],
        accepts: &dyn Fn(&[i64]) -> bool,
        depth: usize,
        c: &mut [i64; N],
        out: &mut Vec<[i64; N]>,
    ) {
        if depth == N {
            out.push(*c);
            return;
        }
        for &v in domain[depth] {
            c[depth] = v;
            if accepts(&c[..=depth]) {
                walk(domain, accepts, depth + 1, c, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(domain, accepts, 0, &mut [0i64; N], &mut out);
    out
}

/// Is there a valid config that starts with `prefix` and whose later values are all in
/// `domain`? Exact: a scan of the valid configs (an [`IntRules::completable`] for solvers that
/// list them, [`valid_configs_over`]).
pub fn completable_in(configs: &[impl AsRef<[i64]>], prefix: &[i64], domain: &[i64]) -> bool {
    configs.iter().any(|c| {
        let c = c.as_ref();
        prefix.len() <= c.len() && c[..prefix.len()] == *prefix && c[prefix.len()..].iter().all(|v| domain.contains(v))
    })
}

/// Parses `count` comma-separated integers (the default [`Tunable::parse_params`]).
pub fn parse_int_list(solver: &str, names: &[&str], s: &str) -> Result<Vec<i64>> {
    let what = format!("{solver} config '{s}'");
    let fields: Vec<&str> = s.split(',').collect();
    if fields.len() != names.len() {
        return Err(Error::format(
            what,
            format!(
                "expected {} comma-separated values ({}), got {}",
                names.len(),
                names.join(","),
                fields.len()
            ),
        ));
    }
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            f.trim().parse::<i64>().map_err(|_| {
                Error::format(
                    what.clone(),
                    format!("field {} ({}): '{}' is not an integer", i + 1, names[i], f.trim()),
                )
            })
        })
        .collect()
}

/// The search's constraint for a tunable solver on one problem and one vocabulary: values are
/// the vocabulary's integers (`"-1"` and non-integers are never accepted).
#[derive(Clone)]
pub struct IntConstraint {
    rules: std::sync::Arc<dyn IntRules>,
    /// For each index of `Vocabulary::values`, its integer value; `None` for "-1" and for
    /// anything that is not an integer (never accepted).
    value_int: Vec<Option<i64>>,
    /// All distinct accepted integer values of the vocabulary, ascending.
    domain: Vec<i64>,
}

impl IntConstraint {
    pub fn new(rules: Box<dyn IntRules>, vocab: &Vocabulary) -> IntConstraint {
        let value_int: Vec<Option<i64>> = vocab
            .values
            .iter()
            .map(|s| s.trim().parse::<i64>().ok().filter(|&v| v != -1))
            .collect();
        let mut domain: Vec<i64> = value_int.iter().flatten().copied().collect();
        domain.sort_unstable();
        domain.dedup();
        IntConstraint {
            rules: rules.into(),
            value_int,
            domain,
        }
    }

    /// Builds the constraint of `tunable` for a problem after checking that the model decodes
    /// configs of the solver's length (`metadata`: MIOpen's `num_tuning_params` with
    /// predict_type 0, or the `seq_len` of tuneinfer's model).
    pub fn for_model(
        tunable: &dyn Tunable,
        target: &Target,
        problem: &ConvProblem,
        vocab: &Vocabulary,
        metadata: &KtnMetadata,
    ) -> Result<IntConstraint> {
        let n = tunable.param_names().len();
        let lengths_ok = metadata.predict_type == 0
            && !metadata.num_tuning_params.is_empty()
            && metadata.num_tuning_params.values().all(|&k| k == n);
        if !lengths_ok {
            let counts: Vec<String> = metadata
                .num_tuning_params
                .iter()
                .map(|(d, k)| format!("{k} {d}"))
                .collect();
            return Err(Error::Format {
                path: "metadata".into(),
                detail: format!(
                    "a {} model decodes {n} parameters per direction (predict_type 0); this one has predict_type \
                     {} and {} parameters (MIOpen's num_tuning_params; model.seq_len in tuneinfer's .json)",
                    tunable.solver_name(),
                    metadata.predict_type,
                    if counts.is_empty() {
                        "no".to_string()
                    } else {
                        counts.join(", ")
                    }
                ),
            });
        }
        Ok(IntConstraint::new(tunable.rules(target, problem), vocab))
    }

    /// The integer of a value index, `None` when unknown or not accepted.
    fn int(&self, value: u32) -> Option<i64> {
        self.value_int.get(value as usize).copied().flatten()
    }

    /// Chosen value indices as integers in a stack buffer (`None` if any is not an integer or
    /// there are more than the config holds).
    fn ints(&self, chosen: &[u32]) -> Option<([i64; MAX_INT_PARAMS], usize)> {
        if chosen.len() > self.rules.config_len().min(MAX_INT_PARAMS) {
            return None;
        }
        let mut buf = [0i64; MAX_INT_PARAMS];
        for (i, &c) in chosen.iter().enumerate() {
            buf[i] = self.int(c)?;
        }
        Some((buf, chosen.len()))
    }
}

impl Constraint for IntConstraint {
    fn config_len(&self, _chosen: &[u32]) -> usize {
        self.rules.config_len()
    }

    fn accepts(&self, chosen: &[u32], value: u32) -> bool {
        if chosen.len() >= self.rules.config_len().min(MAX_INT_PARAMS) {
            return false;
        }
        let (Some((mut buf, len)), Some(x)) = (self.ints(chosen), self.int(value)) else {
            return false;
        };
        buf[len] = x;
        self.rules.prefix_valid(&buf[..=len])
    }

    fn completable(&self, chosen: &[u32]) -> bool {
        match self.ints(chosen) {
            Some((buf, len)) => self.rules.completable(&buf[..len], &self.domain),
            None => false,
        }
    }
}

/// A tunable solver MIOpen ships no KernelTuningNet model of: its whole engine view
/// ([`Solver`]) follows from its [`Tunable`] side (only tuneinfer's own models, named after the
/// solver; configs comma-joined; MIOpen's fallback is the static default). A solver with a WGSL
/// rules library names it here.
pub trait OwnModelsOnly: Tunable {
    /// The solver's WGSL rules library ([`GpuSearch::Rules`](super::GpuSearch::Rules)); None:
    /// the host searches (unless [`OwnModelsOnly::table_constraint`]).
    fn wgsl_rules(&self) -> Option<&'static str> {
        None
    }

    /// See [`Solver::wgsl_rule_words`].
    fn wgsl_rule_words(&self, _target: &Target, _problem: &ConvProblem) -> Option<super::RuleWords> {
        None
    }

    /// See [`Solver::problem_note`].
    fn problem_note(&self, _target: &Target, _problem: &ConvProblem) -> Option<String> {
        None
    }

    /// True for solvers whose valid configs per problem are few (a catalogue entry and a split,
    /// one count): the search's constraint is then the table of every valid config over the
    /// model's values ([`table_constraint`]), which the GPU checks with the catalogue rules
    /// library (`shaders/catalogue_rules.wgsl`, both searches resident), instead of
    /// [`IntConstraint`]. A value is accepted only when some valid config has it there, so the
    /// table is its own look-ahead.
    fn table_constraint(&self) -> bool {
        false
    }

    /// With [`OwnModelsOnly::table_constraint`]: a key such that every problem (on this target)
    /// with an equal key has the same valid configs (e.g. the data type, for rules that read
    /// nothing else of the problem). The table over a vocabulary is then built once per
    /// (solver, key, vocabulary) and shared ([`shared_table`]). None (the default): built for
    /// each problem.
    fn table_key(&self, _target: &Target, _problem: &ConvProblem) -> Option<u64> {
        None
    }

    /// See [`Solver::written_form`].
    fn written_form(
        &self,
        _problem: &ConvProblem,
        config: &str,
        _version: Option<super::MiopenVersion>,
    ) -> std::result::Result<String, String> {
        Ok(config.to_string())
    }
}

/// The most tables [`shared_table`] keeps (then it starts again empty).
const SHARED_TABLES: usize = 64;

/// The table of `solver`'s valid configs for `key` over `vocab` ([`OwnModelsOnly::table_key`]):
/// built by `build` the first time, then a copy of the stored one.
pub fn shared_table(
    solver: &'static str,
    key: u64,
    vocab: &Vocabulary,
    build: impl FnOnce() -> Option<crate::solvers::ck::constraint::CandidateTable>,
) -> Option<crate::solvers::ck::constraint::CandidateTable> {
    use crate::solvers::ck::constraint::CandidateTable;
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Tables = HashMap<(&'static str, u64, Vec<String>), Option<CandidateTable>>;
    static TABLES: OnceLock<Mutex<Tables>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| Mutex::new(HashMap::new()));
    let id = (solver, key, vocab.values.clone());
    if let Some(t) = tables.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
        return t.clone();
    }
    let built = build();
    let mut tables = tables.lock().unwrap_or_else(|e| e.into_inner());
    if tables.len() >= SHARED_TABLES {
        tables.clear();
    }
    tables.insert(id, built.clone());
    built
}

/// The most rows [`table_constraint`] builds; a problem with more valid configs gets the
/// [`IntConstraint`] (host search) instead.
pub const MAX_TABLE_ROWS: usize = 1 << 16;

/// Every valid config of `rules` over the vocabulary's integer values, as a catalogue
/// constraint (rows of value ids in ascending value order; each row's answer is
/// `format(config)`). `None` when there are more than [`MAX_TABLE_ROWS`].
pub fn table_constraint(
    rules: &dyn IntRules,
    vocab: &Vocabulary,
    format: &dyn Fn(&[i64]) -> String,
) -> Option<crate::solvers::ck::constraint::CatalogueConstraint> {
    use crate::solvers::ck::constraint::{CatalogueConstraint, Lengths};
    let table = candidate_table(rules, vocab, format)?;
    Some(CatalogueConstraint::new(
        table,
        Lengths::Fixed(rules.config_len()),
        None,
    ))
}

/// The table of [`table_constraint`] (`None` when there are more than [`MAX_TABLE_ROWS`]).
pub fn candidate_table(
    rules: &dyn IntRules,
    vocab: &Vocabulary,
    format: &dyn Fn(&[i64]) -> String,
) -> Option<crate::solvers::ck::constraint::CandidateTable> {
    use crate::solvers::ck::constraint::CandidateTable;
    let n = rules.config_len();
    let mut values: Vec<(i64, u32)> = vocab
        .values
        .iter()
        .enumerate()
        .filter_map(|(id, s)| {
            s.trim()
                .parse::<i64>()
                .ok()
                .filter(|&v| v != -1)
                .map(|v| (v, id as u32))
        })
        .collect();
    values.sort_unstable();
    let mut table = CandidateTable::new(n);
    let mut answers = Vec::new();
    let mut ints = Vec::with_capacity(n);
    let mut ids = Vec::with_capacity(n);
    fn walk(
        rules: &dyn IntRules,
        values: &[(i64, u32)],
        n: usize,
        ints: &mut Vec<i64>,
        ids: &mut Vec<u32>,
        found: &mut dyn FnMut(&[i64], &[u32]) -> bool,
    ) -> bool {
        if ints.len() == n {
            return found(ints, ids);
        }
        for &(v, id) in values {
            ints.push(v);
            ids.push(id);
            let ok = !rules.prefix_valid(ints) || walk(rules, values, n, ints, ids, found);
            ints.pop();
            ids.pop();
            if !ok {
                return false;
            }
        }
        true
    }
    let mut found = |config: &[i64], row: &[u32]| {
        if table.rows() >= MAX_TABLE_ROWS {
            return false;
        }
        table.push(row, answers.len() as u32, None);
        answers.push(format(config));
        true
    };
    if !walk(rules, &values, n, &mut ints, &mut ids, &mut found) {
        return None;
    }
    table.answers = std::sync::Arc::new(answers);
    Some(table)
}

impl<T: OwnModelsOnly> Solver for T {
    fn name(&self) -> &'static str {
        self.solver_name()
    }

    fn model_name(&self, _arch: &str) -> Result<&'static str> {
        Ok(self.solver_name())
    }

    fn check(&self, target: &Target, problem: &ConvProblem) -> Result<()> {
        crate::solvers::refuse_xnack(target, self.solver_name())?;
        self.applicable(target, problem)
    }

    /// MIOpen has no KTN model of this solver, so there is no MIOpen encoder input.
    fn encoder_input(&self, _target: &Target, _problem: &ConvProblem) -> Result<Vec<f32>> {
        Err(Error::Usage(format!(
            "{}: MIOpen ships no KernelTuningNet model of this solver; use tuneinfer's own model",
            self.solver_name()
        )))
    }

    fn constraint(
        &self,
        target: &Target,
        problem: &ConvProblem,
        vocab: &Vocabulary,
        metadata: &KtnMetadata,
    ) -> Result<Box<dyn Constraint + Send + Sync>> {
        let int = IntConstraint::for_model(self, target, problem, vocab, metadata)?;
        if OwnModelsOnly::table_constraint(self) {
            use crate::solvers::ck::constraint::{CatalogueConstraint, Lengths};
            let build = || candidate_table(int.rules.as_ref(), vocab, &|c| self.format_params(c));
            let table = match OwnModelsOnly::table_key(self, target, problem) {
                Some(key) => shared_table(self.solver_name(), key, vocab, build),
                None => build(),
            };
            if let Some(table) = table {
                let n = int.rules.config_len();
                return Ok(Box::new(CatalogueConstraint::new(table, Lengths::Fixed(n), None)));
            }
        }
        Ok(Box::new(int))
    }

    fn fallback(&self, target: &Target, problem: &ConvProblem) -> Result<Vec<String>> {
        Ok(self
            .static_default(target, problem)
            .iter()
            .map(|v| v.to_string())
            .collect())
    }

    /// The solver's [`Tunable::format_params`] of the values (comma-joined when one is not an
    /// integer).
    fn format_config(&self, values: &[String]) -> String {
        match values
            .iter()
            .map(|v| v.trim().parse::<i64>())
            .collect::<std::result::Result<Vec<i64>, _>>()
        {
            Ok(ints) => self.format_params(&ints),
            Err(_) => values.join(","),
        }
    }

    fn check_vocabulary(&self, vocab: &Vocabulary, source: &str) -> Result<()> {
        check_integer_vocabulary(self.solver_name(), vocab, source)
    }

    fn gpu_search(&self) -> super::GpuSearch {
        if OwnModelsOnly::table_constraint(self) {
            return super::GpuSearch::Table;
        }
        match OwnModelsOnly::wgsl_rules(self) {
            Some(library) => super::GpuSearch::Rules(library),
            None => super::GpuSearch::Host,
        }
    }

    fn wgsl_rule_words(&self, target: &Target, problem: &ConvProblem) -> Option<super::RuleWords> {
        OwnModelsOnly::wgsl_rule_words(self, target, problem)
    }

    fn problem_note(&self, target: &Target, problem: &ConvProblem) -> Option<String> {
        OwnModelsOnly::problem_note(self, target, problem)
    }

    fn tunable(&self) -> Option<&dyn Tunable> {
        Some(self)
    }

    fn written_form(
        &self,
        problem: &ConvProblem,
        config: &str,
        version: Option<super::MiopenVersion>,
    ) -> std::result::Result<String, String> {
        OwnModelsOnly::written_form(self, problem, config, version)
    }
}

/// MIOpen's deprecated-solver allow-list (`src/solver.cpp:716-731`: gfx803, gfx900, gfx906,
/// gfx908, gfx90a, gfx103*) intersected with "the device name is gfx8 or gfx9", where the
/// assembly solvers that check both apply.
pub const DEPRECATED_GFX8_GFX9_ARCHES: [&str; 5] = ["gfx803", "gfx900", "gfx906", "gfx908", "gfx90a"];

/// The precision as a model feature: 0 FP32, 1 FP16, 2 BF16 (every tunable solver's).
pub fn precision_feature(p: crate::problem::Precision) -> f32 {
    match p {
        crate::problem::Precision::Fp32 => 0.0,
        crate::problem::Precision::Fp16 => 1.0,
        crate::problem::Precision::Bf16 => 2.0,
    }
}

/// A problem size as MIOpen's `int` sees it (clamped to [`MAX_FIELD_VALUE`](crate::problem::MAX_FIELD_VALUE)).
pub fn int_size(v: u64) -> i64 {
    v.min(crate::problem::MAX_FIELD_VALUE) as i64
}

/// MIOpen's (in_channels, out_channels, in h, in w, out h, out w) of a forward or
/// backward-data problem: for F "in" is x (C) and "out" y (K); for B "in" is dy (K) and "out"
/// dx (C). Each clamped as [`int_size`].
pub fn miopen_in_out(p: &ConvProblem) -> (i64, i64, i64, i64, i64, i64) {
    let s = int_size;
    if p.direction.is_forward() {
        (s(p.c), s(p.k), s(p.in_h), s(p.in_w), s(p.out_h), s(p.out_w))
    } else {
        (s(p.k), s(p.c), s(p.out_h), s(p.out_w), s(p.in_h), s(p.in_w))
    }
}

/// Bit `v` set for each value `v` of `domain` in `0..=max` (`max` < 32): the look-aheads'
/// bounded checks enumerate a position's accepted values as such a mask.
pub fn domain_bits(domain: &[i64], max: i64) -> u32 {
    domain
        .iter()
        .filter(|v| (0..=max.min(31)).contains(*v))
        .fold(0u32, |m, &v| m | 1 << v)
}

/// The values whose bits `m` sets, ascending.
pub fn bit_values(mut m: u32) -> impl Iterator<Item = i64> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let v = m.trailing_zeros();
            m &= m - 1;
            i64::from(v)
        })
    })
}

/// `log2(x)` as a feature (0 for 0).
pub fn log2_feature(x: u64) -> f32 {
    (x.max(1) as f64).log2() as f32
}

/// The power-of-two divisibility of `x` as a feature: its trailing zero bits, at most 12.
pub fn twos_feature(x: u64) -> f32 {
    x.max(1).trailing_zeros().min(12) as f32
}

/// Is the product of `factors` below `2^log2_limit` (false when it overflows)? MIOpen's
/// kernels' size limits.
pub fn product_below(factors: &[u128], log2_limit: u32) -> bool {
    factors
        .iter()
        .try_fold(1u128, |acc, &f| acc.checked_mul(f))
        .is_some_and(|prod| prod < (1u128 << log2_limit))
}

/// Rewrites a model's token values that are not integers through [`Tunable::text_value`]:
/// each becomes the integer it stands for today, or, when it stands for nothing today, a
/// distinct negative integer below -1 that no rule accepts (a model trained on a catalogue
/// entry that the catalogue of this run lacks never answers it). A text the solver does not
/// know is left as it is ([`check_integer_vocabulary`] then refuses the model, naming it).
pub fn read_int_vocabulary(tunable: &dyn Tunable, vocab: &mut Vocabulary) {
    let mut absent = -2i64;
    for v in vocab.values.iter_mut() {
        if v == "-1" || v.trim().parse::<i64>().is_ok() {
            continue;
        }
        match tunable.text_value(v) {
            Ok(Some(x)) => *v = x.to_string(),
            Ok(None) => {
                *v = absent.to_string();
                absent -= 1;
            }
            Err(_) => {}
        }
    }
}

/// A vocabulary check for tunable solvers: every token value is an integer (`"-1"`, the end
/// token, included).
pub fn check_integer_vocabulary(solver: &str, vocab: &Vocabulary, source: &str) -> Result<()> {
    match vocab.values.iter().find(|v| v.parse::<i32>().is_err()) {
        Some(v) => Err(Error::format(
            source,
            format!("token value '{v}' is not an integer ({solver}'s parameters are integers)"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_features_by_hand() {
        // MI210 (gfx90a68): 0x68 = 104 compute units, the gfx90a flag (the fourth family).
        let f = gpu_features("gfx90a", 104);
        assert!((f[0] - 6.700_44).abs() < 1e-4, "{f:?}");
        assert_eq!(&f[1..], &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        // gfx1030 with 36 CUs; gfx942 is a gfx94 part; gfx906 is not gfx90a (prefixes differ).
        assert_eq!(gpu_features("gfx1030", 36)[6], 1.0);
        assert_eq!(gpu_features("gfx1030", 36)[0], 36f32.log2());
        assert_eq!(&gpu_features("gfx942", 304)[1..], &[0.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        assert_eq!(&gpu_features("gfx906", 60)[1..], &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
        // An arch of no family: no flag; zero compute units count as one.
        assert_eq!(gpu_features("gfx1100", 0), [0.0; NUM_GPU_FEATURES]);
        assert_eq!(GPU_FEATURE_NAMES.len(), NUM_GPU_FEATURES);
    }

    /// Two parameters a, b in the domain with a + b == 5 and a <= 3: hand-derived rules.
    struct SumFive;

    impl IntRules for SumFive {
        fn config_len(&self) -> usize {
            2
        }
        fn prefix_valid(&self, p: &[i64]) -> bool {
            p.len() <= 2 && p.first().is_none_or(|&a| a <= 3) && (p.len() < 2 || p[0] + p[1] == 5)
        }
    }

    #[test]
    fn default_look_ahead_finds_completions_and_dead_prefixes() {
        let r = SumFive;
        assert!(r.completable(&[], &[1, 2, 3, 4]));
        assert!(r.completable(&[1], &[1, 2, 3, 4]), "1 + 4");
        assert!(!r.completable(&[1], &[1, 2, 3]), "no 4 in the domain");
        assert!(!r.completable(&[4], &[1, 2, 3, 4]), "4 breaks a <= 3");
        assert!(r.completable(&[2, 3], &[]));
        assert!(!r.completable(&[2, 3, 1], &[1]), "longer than the config");
        assert!(r.is_valid(&[3, 2]) && !r.is_valid(&[3]) && !r.is_valid(&[3, 3]));
    }

    #[test]
    fn int_constraint_maps_values_and_never_accepts_the_end_token() {
        let vocab = Vocabulary::from_token_values(&["-1", "1", "4", "x", "2", "3"].map(String::from));
        let c = IntConstraint::new(Box::new(SumFive), &vocab);
        let id = |v: &str| vocab.values.iter().position(|x| x == v).unwrap() as u32;
        assert_eq!(c.config_len(&[]), 2);
        assert!(c.accepts(&[], id("1")) && !c.accepts(&[], id("4")));
        assert!(!c.accepts(&[], id("-1")) && !c.accepts(&[], id("x")));
        assert!(c.accepts(&[id("1")], id("4")) && !c.accepts(&[id("1")], id("3")));
        assert!(c.accepts(&[id("3")], id("2")));
        assert!(!c.accepts(&[id("3"), id("2")], id("1")), "the config is complete");
        assert!(c.completable(&[id("1")]) && c.completable(&[id("2")]));
        assert!(!c.completable(&[id("x")]));
    }

    #[test]
    fn table_constraint_lists_every_valid_config_and_is_its_own_look_ahead() {
        // Values 1..4 (and the end token, and a non-integer): SumFive's valid configs are
        // (1,4), (2,3), (3,2) by hand; (4,1) breaks a <= 3.
        let vocab = Vocabulary::from_token_values(&["-1", "1", "4", "x", "2", "3"].map(String::from));
        let id = |v: &str| vocab.values.iter().position(|x| x == v).unwrap() as u32;
        let c = table_constraint(&SumFive, &vocab, &|cfg| format!("{cfg:?}")).unwrap();
        assert_eq!(c.table.rows(), 3);
        let rows: Vec<Vec<u32>> = (0..3).map(|r| c.table.row(r).to_vec()).collect();
        assert_eq!(
            rows,
            vec![vec![id("1"), id("4")], vec![id("2"), id("3")], vec![id("3"), id("2")]]
        );
        assert_eq!(c.config_text(&[id("2"), id("3")]).as_deref(), Some("[2, 3]"));
        // A value is accepted only when a valid config continues with it.
        assert!(c.accepts(&[], id("1")) && c.accepts(&[], id("3")) && !c.accepts(&[], id("4")));
        assert!(!c.accepts(&[], id("-1")) && !c.accepts(&[], id("x")));
        assert!(c.accepts(&[id("1")], id("4")) && !c.accepts(&[id("1")], id("3")));
        assert!(c.completable(&[id("1")]) && !c.completable(&[id("4")]));
        assert!(!c.accepts(&[id("2"), id("3")], id("1")), "the config is complete");
        // No valid config over the vocabulary: an empty table, nothing accepted.
        let small = Vocabulary::from_token_values(&["-1", "4"].map(String::from));
        let empty = table_constraint(&SumFive, &small, &|cfg| format!("{cfg:?}")).unwrap();
        assert_eq!(empty.table.rows(), 0);
        assert!(!empty.accepts(&[], 1) && !empty.completable(&[]));
    }

    #[test]
    fn params_strings_of_the_wrong_length_or_type_are_errors() {
        let names = ["a", "b", "c"];
        assert_eq!(parse_int_list("S", &names, "1, 2,3").unwrap(), vec![1, 2, 3]);
        let e = parse_int_list("S", &names, "1,2").unwrap_err().to_string();
        assert!(e.contains("expected 3") && e.contains("got 2"), "{e}");
        let e = parse_int_list("S", &names, "1,2,z").unwrap_err().to_string();
        assert!(e.contains("field 3 (c)"), "{e}");
        assert!(parse_int_list("S", &names, "1,2,3,4").is_err());
    }
}
