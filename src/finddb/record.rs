//! One find-db record, `KEY=ID:VALUES;ID:VALUES;...`, as MIOpen reads and writes it.
//!
//! MIOpen (ROCm/MIOpen 2d1fd997a and MIOpen 3.5.1 alike) stores a record through `DbRecord`
//! (`src/db_record.cpp`): `WriteContents` writes `KEY=` and the pairs joined by `;`, each pair
//! `ID:VALUES`; for a find-db the ID is the solver name and VALUES is `FindDbData` serialised by
//! `SerDes<','>` in its `Visit` order (`src/include/miopen/perf_field.hpp`): `time,workspace,
//! algorithm`. The two versions write the same form; 3.5.1's reader trims the VALUES
//! (`boost::trim`), 2024's does not. Both still read the legacy (find-db 1.0) item
//! `ALGORITHM:SOLVER,TIME,WORKSPACE,ALGORITHM,KERNEL_INFO` by turning it into the current form
//! (`TransformFindDbItem10to20`); the installed find-dbs of gfx900, gfx906 and gfx1030 use it.

use crate::error::{Error, Result};

/// The MIOpen version whose find-db form is written. Both versions serialise a record the same
/// way (see the module's note); the version is kept so that a later form has its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// ROCm/MIOpen 2d1fd997a (the late-2024 releases).
    Miopen2024,
    /// MIOpen 3.5.1.
    Miopen351,
}

impl Form {
    /// The form of a user-db suffix or version text (`3.5.1`, `3.5.1.0`, `2024`, `3.3.0`...):
    /// 3.5 and later are [`Form::Miopen351`], anything else [`Form::Miopen2024`].
    pub fn from_version(version: &str) -> Form {
        let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        if (major, minor) >= (3, 5) && major < 1000 {
            Form::Miopen351
        } else {
            Form::Miopen2024
        }
    }
}

/// One entry of a record: a solver, its time and workspace, its algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// MIOpen's solver name (`ConvBinWinogradRxSf2x3g1`).
    pub solver: String,
    /// The time in ms: measured by MIOpen's Find, or tuneinfer's prediction in a record it writes.
    pub time_ms: f64,
    /// Workspace bytes.
    pub workspace: u64,
    /// The algorithm name (`miopenConvolutionFwdAlgoWinograd`).
    pub algorithm: String,
}

/// One record: the problem key and its entries, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub key: String,
    pub entries: Vec<Entry>,
}

/// MIOpen's `IsValidConvolutionDirAlgo`: the algorithm names of the three directions.
pub fn is_algorithm_name(id: &str) -> bool {
    const NAMES: [&str; 13] = [
        "miopenConvolutionFwdAlgoGEMM",
        "miopenConvolutionFwdAlgoDirect",
        "miopenConvolutionFwdAlgoFFT",
        "miopenConvolutionFwdAlgoWinograd",
        "miopenConvolutionFwdAlgoImplicitGEMM",
        "miopenConvolutionBwdDataAlgoGEMM",
        "miopenConvolutionBwdDataAlgoDirect",
        "miopenConvolutionBwdDataAlgoFFT",
        "miopenConvolutionBwdDataAlgoWinograd",
        "miopenConvolutionBwdDataAlgoImplicitGEMM",
        "miopenConvolutionBwdWeightsAlgoGEMM",
        "miopenConvolutionBwdWeightsAlgoDirect",
        "miopenConvolutionBwdWeightsAlgoWinograd",
    ];
    NAMES.contains(&id) || id == "miopenConvolutionBwdWeightsAlgoImplicitGEMM" || id == "miopenTransposeBwdDataAlgoGEMM"
}

/// The values of one item, parsed as MIOpen's `FindDbData::Deserialize` does: three
/// comma-separated fields (time, workspace, algorithm); more fields are ignored as the
/// `getline` reads stop after the third. `None` where a field is missing or not a number.
fn parse_values(values: &str) -> Option<(f64, u64, String)> {
    let mut it = values.split(',');
    let time = it.next()?.trim().parse::<f64>().ok()?;
    let workspace = it.next()?.trim().parse::<u64>().ok()?;
    let algorithm = it.next()?.trim().to_string();
    if !time.is_finite() {
        return None;
    }
    Some((time, workspace, algorithm))
}

/// Parses one line `KEY=ITEMS` the way MIOpen's `DbRecord::ParseContents` and `FindDbData`
/// do: an item without `:` is skipped, a legacy item (an algorithm name as its ID) is turned
/// into the current form, a repeated solver keeps its first entry, an item whose values do not
/// deserialise is dropped (`As<FindDbData>` skips it). `Ok(None)` for a blank or comment line; an
/// error for a line without `=`.
pub fn parse_line(line: &str) -> Result<Option<Record>> {
    let line = line.trim_end_matches(['\r', '\n']);
    if line.trim().is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let Some((key, items)) = line.split_once('=') else {
        return Err(Error::format(
            "find-db line",
            format!("no '=' in '{}'", crate::error::quote_short(line)),
        ));
    };
    let mut entries: Vec<Entry> = Vec::new();
    for item in items.split(';') {
        let Some((id, values)) = item.split_once(':') else {
            continue;
        };
        let (solver, values) = if is_algorithm_name(id) {
            // Legacy item: SOLVER,TIME,WORKSPACE,... -> TIME,WORKSPACE,ALGORITHM.
            let mut parts = values.splitn(4, ',');
            let (Some(solver), Some(time), Some(ws)) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            (solver.to_string(), format!("{time},{ws},{id}"))
        } else {
            (id.to_string(), values.to_string())
        };
        if entries.iter().any(|e| e.solver == solver) {
            continue;
        }
        if let Some((time_ms, workspace, algorithm)) = parse_values(&values) {
            entries.push(Entry {
                solver,
                time_ms,
                workspace,
                algorithm,
            });
        }
    }
    Ok(Some(Record {
        key: key.to_string(),
        entries,
    }))
}

/// C++'s `std::ostream << float` with the default precision (6 significant digits, `%g`).
pub fn format_time(time: f32) -> String {
    if time == 0.0 || !time.is_finite() {
        return if time.is_nan() {
            "nan".into()
        } else if time == 0.0 {
            "0".into()
        } else {
            "inf".into()
        };
    }
    let sci = format!("{:.5e}", time);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let m = strip_zeros(mantissa);
        return format!("{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    strip_zeros(&format!("{:.*}", decimals, time))
}

fn strip_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// One record line as MIOpen's `DbRecord::WriteContents` writes it (without the newline):
/// `KEY=SOLVER:TIME,WORKSPACE,ALGORITHM;...`, the time as a `float` through an ostream.
pub fn serialize(key: &str, entries: &[Entry], _form: Form) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|e| {
            format!(
                "{}:{},{},{}",
                e.solver,
                format_time(e.time_ms as f32),
                e.workspace,
                e.algorithm
            )
        })
        .collect();
    format!("{key}={}", items.join(";"))
}

/// MIOpen's algorithm name of a direction and an algorithm kind (`ImplicitGEMM`, `Winograd`,
/// `Direct`, `GEMM`, `FFT`).
pub fn algorithm_name(direction: crate::problem::Direction, kind: &str) -> String {
    use crate::problem::Direction;
    let dir = match direction {
        Direction::Forward => "Fwd",
        Direction::BackwardData => "BwdData",
        Direction::BackwardWeights => "BwdWeights",
    };
    format!("miopenConvolution{dir}Algo{kind}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_item_forms_parse_to_the_current_one() {
        // Lines of ../shared/miopen/finddb (gfx90878 and gfx906_60).
        let r = parse_line("1-1-1-1-1x4x4-512-1-4-4-128-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-B=ConvDirectNaiveConvBwd:0.86304,0,miopenConvolutionBwdDataAlgoDirect;GemmBwdRest:3.11328,32768,miopenConvolutionBwdDataAlgoGEMM")
            .unwrap()
            .unwrap();
        assert_eq!(r.entries.len(), 2);
        assert_eq!(r.entries[1].solver, "GemmBwdRest");
        assert_eq!(r.entries[1].workspace, 32768);
        let r = parse_line(
            "x=miopenConvolutionFwdAlgoGEMM:GemmFwd1x1_0_1,0.05,12,miopenConvolutionFwdAlgoGEMM,<unused>;bad;ConvX:1,2",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            r.entries.len(),
            1,
            "an item without ':' and one with two values are dropped"
        );
        assert_eq!(r.entries[0].solver, "GemmFwd1x1_0_1");
        assert_eq!(r.entries[0].algorithm, "miopenConvolutionFwdAlgoGEMM");
        assert!((r.entries[0].time_ms - 0.05).abs() < 1e-12);
        assert!(parse_line("no equals sign").is_err());
    }

    #[test]
    fn times_print_as_a_cxx_ostream_prints_a_float() {
        // printf("%g") of the same float values (C's default precision 6, as ostream's).
        assert_eq!(format_time(0.86304), "0.86304");
        assert_eq!(format_time(3.11328), "3.11328");
        assert_eq!(format_time(0.007851), "0.007851");
        assert_eq!(format_time(1.0), "1");
        assert_eq!(format_time(123456.7), "123457");
        assert_eq!(format_time(1234567.0), "1.23457e+06");
        assert_eq!(format_time(0.00001234), "1.234e-05");
        assert_eq!(format_time(0.0001), "0.0001");
        assert_eq!(format_time(2.5e-7), "2.5e-07");
    }
}
