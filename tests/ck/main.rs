//! composable_kernel solvers: catalogues, rules of both MIOpen versions, constraints, models.
//! One test binary per area (issue 52 item 6): each file of tests/ck/ is a module.

#[path = "../common/mod.rs"]
mod common;

mod ck_2d;
mod ck_351;
mod ck_constraint;
mod ck_errors;
mod ck_miopen;
mod ck_models;
mod ck_property;
mod ck_rules;
mod ck_tunable;
