//! Training and evaluation data: MIOpen perf databases.

pub mod perfdb;
