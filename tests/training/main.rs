//! train and eval end to end on small models.
//! One test binary per area (issue 52 item 6): each file of tests/training/ is a module.

#[path = "../common/mod.rs"]
mod common;

mod hybrid_train;
mod train_eval;
