//! The solvers' rules, applicability, defaults and MIOpen's expectations, on hand-derived cases and the shared perf dbs.
//! One test binary per area (issue 52 item 6): each file of tests/solvers/ is a module.

#[path = "../common/mod.rs"]
mod common;

mod asm1x1u_lookahead;
mod asm1x1u_perfdb;
mod asm1x1u_stride2;
mod compare_as_miopen;
mod conv_asm_1x1u_rules;
mod conv_asm_3x3u;
mod conv_asm_bwd_wrw_1x1;
mod conv_asm_bwd_wrw_3x3;
mod conv_ocl_bwd_wrw2;
mod conv_ocl_direct_fwd;
mod conv_ocl_direct_fwd1x1;
mod corpus_cpu_dump;
mod defaults_pass_rules;
mod gtc_nhwc;
mod hip_igemm;
mod hip_igemm_3d;
mod hip_xdlops;
mod miopen_expectations;
mod mlir_igemm;
mod problem_3d;
mod problem_parse;
mod transposed;
mod winograd_rxs;
