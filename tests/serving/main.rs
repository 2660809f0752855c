//! What is answered and written: models found, figures, --method, userdb (names, merges, versions, system db), shipped models and data.
//! One test binary per area (issue 52 item 6): each file of tests/serving/ is a module.

#[path = "../common/mod.rs"]
mod common;

mod bad_models;
mod finddb;
mod methods;
mod models_search;
mod neighbour_cells;
mod serve_every_gpu;
mod served_figures;
mod shipped_data;
mod shipped_models;
mod userdb;
mod userdb_best_agree;
mod userdb_names;
mod userdb_sqlite_wal;
mod userdb_system;
mod userdb_verdict;
mod userdb_versions;
mod verify_models;
