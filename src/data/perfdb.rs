//! MIOpen's sqlite perf databases (`config` + `perf_db` tables), opened read-only.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};
use crate::problem::{ConvProblem, PerfDbConfigRow};

/// One tuned row: the problem and the best parameters MIOpen's tuning found for a solver.
#[derive(Debug, Clone, PartialEq)]
pub struct TunedRow {
    /// `config.id` in the database.
    pub config_id: i64,
    pub problem: ConvProblem,
    /// The parameter string as stored (e.g. `4,8,4,16,1,4,1,8`).
    pub params: String,
}

/// The rows of one solver, plus the rows that could not be turned into problems.
#[derive(Debug, Clone, Default)]
pub struct SolverRows {
    pub rows: Vec<TunedRow>,
    /// (config id, why) for each row skipped as malformed or unsupported.
    pub rejected: Vec<(i64, String)>,
}

/// Opens a perf database read-only without ever writing a journal next to it.
pub fn open(path: &Path) -> Result<Connection> {
    let db_err = |detail: String| Error::Database {
        path: path.display().to_string(),
        detail,
    };
    if !path.is_file() {
        return Err(db_err("no such file".into()));
    }
    let uri = format!("file:{}?immutable=1", path.display());
    let conn = Connection::open_with_flags(&uri, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI)
        .map_err(|e| db_err(e.to_string()))?;
    for table in ["config", "perf_db"] {
        let found: std::result::Result<i64, _> = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1",
            [table],
            |r| r.get(0),
        );
        match found {
            Ok(1) => {}
            Ok(_) => return Err(db_err(format!("not a MIOpen perf database: no '{table}' table"))),
            Err(e) => return Err(db_err(format!("not a readable sqlite database: {e}"))),
        }
    }
    Ok(conn)
}

/// Every row of `solver`, joined with its problem.
pub fn solver_rows(path: &Path, solver: &str) -> Result<SolverRows> {
    let conn = open(path)?;
    let db_err = |e: rusqlite::Error| Error::Database {
        path: path.display().to_string(),
        detail: e.to_string(),
    };
    let mut stmt = conn
        .prepare(
            "SELECT c.id, c.layout, c.data_type, c.direction, c.spatial_dim, c.in_channels, c.in_h, c.in_w, c.in_d, \
             c.fil_h, c.fil_w, c.fil_d, c.out_channels, c.batchsize, c.pad_h, c.pad_w, c.pad_d, c.conv_stride_h, \
             c.conv_stride_w, c.conv_stride_d, c.dilation_h, c.dilation_w, c.dilation_d, c.bias, c.group_count, p.params \
             FROM perf_db p JOIN config c ON p.config = c.id WHERE p.solver = ?1 ORDER BY c.id",
        )
        .map_err(db_err)?;
    let mut out = SolverRows::default();
    let mut rows = stmt.query([solver]).map_err(db_err)?;
    while let Some(r) = rows.next().map_err(db_err)? {
        let id: i64 = r.get(0).map_err(db_err)?;
        let cols = (|| -> rusqlite::Result<(PerfDbConfigRow, String)> {
            Ok((
                PerfDbConfigRow {
                    layout: r.get(1)?,
                    data_type: r.get(2)?,
                    direction: r.get(3)?,
                    spatial_dim: r.get(4)?,
                    in_channels: r.get(5)?,
                    in_h: r.get(6)?,
                    in_w: r.get(7)?,
                    in_d: r.get(8)?,
                    fil_h: r.get(9)?,
                    fil_w: r.get(10)?,
                    fil_d: r.get(11)?,
                    out_channels: r.get(12)?,
                    batchsize: r.get(13)?,
                    pad_h: r.get(14)?,
                    pad_w: r.get(15)?,
                    pad_d: r.get(16)?,
                    conv_stride_h: r.get(17)?,
                    conv_stride_w: r.get(18)?,
                    conv_stride_d: r.get(19)?,
                    dilation_h: r.get(20)?,
                    dilation_w: r.get(21)?,
                    dilation_d: r.get(22)?,
                    bias: r.get(23)?,
                    group_count: r.get(24)?,
                },
                r.get(25)?,
            ))
        })();
        match cols {
            Err(e) => out.rejected.push((id, format!("unreadable columns: {e}"))),
            Ok((cols, params)) => match ConvProblem::from_perfdb_columns(&cols) {
                Ok(problem) => out.rows.push(TunedRow {
                    config_id: id,
                    problem,
                    params,
                }),
                Err(e) => out.rejected.push((id, e.to_string())),
            },
        }
    }
    Ok(out)
}
