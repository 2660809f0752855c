//! Training and evaluation data: MIOpen perf databases (sqlite and text) and the datasets built
//! from them.

pub mod dataset;
pub mod perfdb;
pub mod textdb;
