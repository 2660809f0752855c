//! Solvers: one file per MIOpen kernel family. Each turns a problem into model features,
//! states its parameter rules (as a [`crate::search::Constraint`]) and its static default.

pub mod conv_asm_1x1u;
