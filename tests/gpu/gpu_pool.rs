//! The GPU predictor's work buffers are pooled by capacity: after a first batch, a batch of the
//! same or a smaller size creates no device buffer at all, counted by
//! `GpuContext::buffers_created`, and still gives exactly the CPU path's configs. A batch of
//! several chunks keeps two in flight (double-buffered): its answers are the CPU's too.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use std::sync::Arc;

use tuneinfer::gpu::GpuPredictor;
use tuneinfer::solvers::conv_asm_1x1u::NAME;
use tuneinfer::{DecodeMode, Predictor};

#[test]
fn same_or_smaller_batches_create_no_buffers() {
    // A context of its own: no other test's buffers in the count.
    let Some(ctx) = common::fresh_gpu() else { return };
    let ctx = Arc::new(ctx);
    let dirs = vec![common::models_dir()];
    let cpu = Predictor::load("gfx908", NAME, &dirs).expect("cpu model");
    let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx.clone())
        .expect("gpu model")
        .with_chunk_limit(16);
    let problems = common::perfdb_problems("ConvAsm1x1U", 20);
    assert!(problems.len() >= 40, "only {} problems", problems.len());
    let first = &problems[..16];
    let smaller = &problems[16..27];
    let chunks = &problems[..40];
    for mode in [DecodeMode::Miopen, DecodeMode::Beam { width: 4, top: 4 }] {
        let check = |what: &str, batch: &[tuneinfer::problem::ConvProblem]| {
            let got = gpu.predict_batch(batch, mode);
            let want = cpu.predict_batch(batch, mode);
            assert_eq!(
                common::config_lines(&got),
                common::config_lines(&want),
                "{mode:?}, {what}: GPU configs differ from the CPU's"
            );
        };
        // Several chunks: two in flight, each with its own work buffers.
        check("40 problems in chunks of 16, 16 and 8", chunks);
        let after_first = ctx.buffers_created();
        check("the same batch again", chunks);
        assert_eq!(ctx.buffers_created(), after_first, "{mode:?}: a repeat created buffers");
        check("one chunk", first);
        assert_eq!(
            ctx.buffers_created(),
            after_first,
            "{mode:?}: one chunk created buffers"
        );
        check("the same chunk again", first);
        assert_eq!(
            ctx.buffers_created(),
            after_first,
            "{mode:?}: a repeated chunk created buffers"
        );
        check("a smaller batch of other problems", smaller);
        assert_eq!(
            ctx.buffers_created(),
            after_first,
            "{mode:?}: a smaller batch created buffers"
        );
        check("the chunks after them", chunks);
        assert_eq!(
            ctx.buffers_created(),
            after_first,
            "{mode:?}: the batch after them created buffers"
        );
    }
}

#[test]
fn a_larger_batch_allocates_then_the_smaller_ones_reuse_it() {
    let Some(ctx) = common::fresh_gpu() else { return };
    let ctx = Arc::new(ctx);
    let dirs = vec![common::models_dir()];
    let gpu = GpuPredictor::load("gfx908", NAME, &dirs, ctx.clone()).expect("gpu model");
    let problems = common::perfdb_problems("ConvAsm1x1U", 10);
    let mode = DecodeMode::Beam { width: 4, top: 4 };
    let small = gpu.predict_batch(&problems[..5], mode);
    let after_small = ctx.buffers_created();
    let large = gpu.predict_batch(&problems[..20], mode);
    let after_large = ctx.buffers_created();
    // The larger batch needs larger work buffers (the counter is not stuck).
    assert!(after_large > after_small, "a larger batch created no buffer");
    let small_again = gpu.predict_batch(&problems[..5], mode);
    assert_eq!(ctx.buffers_created(), after_large, "the smaller batch created buffers");
    assert_eq!(common::config_lines(&small_again), common::config_lines(&small));
    assert_eq!(
        common::config_lines(&large)[..5],
        common::config_lines(&small)[..],
        "the first five problems' answers depend on the batch"
    );
}
