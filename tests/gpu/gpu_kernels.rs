//! Every WGSL kernel against its CPU twin on random, odd-sized, non-zero inputs, with sentinel
//! words around each output. NaN never passes (every comparison is `err <= tol`, false for NaN).
//! Without any Vulkan adapter the tests print "skipped: no GPU adapter" — except in CI
//! (`TUNEINFER_CI=1`, where `.ci/run` installs lavapipe), where that is a failure.
#![cfg(feature = "gpu")]

#[allow(unused_imports)]
use crate::common;

use tuneinfer::cpu;
use tuneinfer::gpu::kernels::host::{self, AttentionInputs, DenseInputs, LstmStepInputs};
use tuneinfer::gpu::registry::{half_variant, kernel_source, validate_wgsl, SHADERS};
use tuneinfer::gpu::GpuContext;
use tuneinfer::testutil::Lcg;

/// Odd sizes; each test adds the gfx908 model's real sizes.
const ODD: &[usize] = &[1, 3, 17, 63, 65, 129];

/// Max |gpu - cpu| relative to (1 + |cpu|); infinite when any value is NaN or sizes differ.
fn worst(gpu: &[f32], cpu: &[f32]) -> f64 {
    if gpu.len() != cpu.len() {
        return f64::INFINITY;
    }
    gpu.iter().zip(cpu).fold(0f64, |w, (&g, &c)| {
        let e = ((g as f64 - c as f64).abs()) / (1.0 + (c as f64).abs());
        if e.is_nan() || g.is_nan() || c.is_nan() {
            f64::INFINITY
        } else {
            w.max(e)
        }
    })
}

#[test]
fn vulkan_adapter_found_in_ci() {
    let ci = std::env::var("TUNEINFER_CI").ok().as_deref() == Some("1");
    match GpuContext::shared() {
        Ok(ctx) => println!("adapter: {}", ctx.adapter().one_line()),
        Err(e) if ci => panic!("TUNEINFER_CI=1 (lavapipe installed by .ci/run) but no Vulkan adapter: {e}"),
        Err(e) => println!("skipped: no GPU adapter ({e})"),
    }
}

#[test]
fn every_shader_parses_and_validates_with_naga() {
    // No device needed: catches WGSL errors on any machine.
    for s in SHADERS {
        assert!(s.text.contains("CPU twin"), "{}: header must name its CPU twin", s.name);
        // Libraries that read the `rules` binding of the kernel they are put in front of (the
        // catalogue's, and those reading per-problem tables by offset) are validated there.
        if s.text.contains("fn solver_prefix_valid") && s.text.contains("rules[") {
            continue;
        }
        if s.needs_rules {
            for lib in SHADERS.iter().filter(|l| l.text.contains("fn solver_prefix_valid")) {
                let text = kernel_source(s.name, Some(lib.name)).expect("source");
                if let Err(e) = validate_wgsl(s.name, &text) {
                    panic!("with {}: {e}", lib.name);
                }
            }
        }
        let text = kernel_source(s.name, s.needs_rules.then_some("conv_asm_1x1u_rules")).expect("source");
        if let Err(e) = validate_wgsl(s.name, &text) {
            panic!("{e}");
        }
        if text.contains("alias Weight = f32;") {
            let half = half_variant(s.name, &text).expect("f16 variant");
            if let Err(e) = validate_wgsl(s.name, &half) {
                panic!("f16 variant: {e}");
            }
        }
        assert!(s.text.contains("CPU twin"), "{}: header must name its CPU twin", s.name);
    }
}

#[test]
fn a_broken_shader_is_a_clear_error() {
    let e = validate_wgsl("broken", "fn main( {").expect_err("must fail");
    assert!(e.to_string().contains("broken"), "{e}");
}

#[test]
fn dense_matches_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(21);
    let mut shapes: Vec<(usize, usize, usize)> = Vec::new();
    for &m in ODD {
        shapes.push((m, ODD[(m * 7) % ODD.len()], ODD[(m * 3 + 1) % ODD.len()]));
    }
    // The gfx908 model's output layer and encoder shapes.
    shapes.extend([(4, 128, 38), (64, 8, 32), (7, 64, 256)]);
    for (m, k, n) in shapes {
        let a = rng.vec(m * k, 1.0);
        let b = rng.vec(k * n, 1.0);
        let bias = rng.vec(n, 1.0);
        let mut want = vec![0.0; m * n];
        cpu::dense(&a, &b, Some(&bias), &mut want, m, k, n);
        let with_bias = DenseInputs {
            a: &a,
            b: &b,
            bias: Some(&bias),
            rows: m,
            k,
            n,
        };
        let got = host::dense(&ctx, &with_bias, None).expect("dense");
        assert!(got.sentinels_intact, "dense ({m},{k},{n}) wrote outside its output");
        let w = worst(&got.values, &want);
        assert!(w <= 1e-5, "dense ({m},{k},{n}): worst {w}");
        // Accumulate mode (twin cpu::matmul_acc), no bias.
        let init = rng.vec(m * n, 1.0);
        let mut want = init.clone();
        cpu::matmul_acc(&a, &b, &mut want, m, k, n);
        let no_bias = DenseInputs {
            bias: None,
            ..with_bias
        };
        let got = host::dense(&ctx, &no_bias, Some(&init)).expect("matmul");
        assert!(got.sentinels_intact);
        let w = worst(&got.values, &want);
        assert!(w <= 1e-5, "matmul_acc ({m},{k},{n}): worst {w}");
    }
}

#[test]
fn embedding_gather_matches_cpu_and_marks_bad_ids() {
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(22);
    for &(vocab, dim) in &[(1, 1), (3, 17), (38, 63), (65, 129), (38, 8)] {
        let table = rng.vec(vocab * dim, 2.0);
        let ids: Vec<u32> = (0..ODD[dim % ODD.len()])
            .map(|_| rng.below(vocab as u64) as u32)
            .collect();
        let mut want = vec![0.0; ids.len() * dim];
        cpu::embedding_gather(&table, &ids, &mut want, dim);
        let got = host::embedding_gather(&ctx, &table, &ids, vocab, dim).expect("gather");
        assert!(got.sentinels_intact);
        assert_eq!(worst(&got.values, &want), 0.0, "gather ({vocab},{dim})");
    }
    // An id outside the table gives NaN, never a value.
    let got = host::embedding_gather(&ctx, &[1.0, 2.0], &[5], 1, 2).expect("gather");
    assert!(got.values.iter().all(|v| v.is_nan()));
}

#[test]
fn lstm_step_matches_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(23);
    let mut shapes: Vec<(usize, usize, usize)> =
        ODD.iter().map(|&r| (r, ODD[(r + 2) % ODD.len()], ODD[r % 4])).collect();
    // gfx908 ConvAsm1x1U: encoder dense 32 -> LSTM 128 -> LSTM 128; decoder embedding 8 -> LSTM 128.
    shapes.extend([(4, 32, 128), (3, 128, 128), (5, 8, 128), (65, 129, 17)]);
    for (rows, in_dim, units) in shapes {
        let operands = RandomLstm::new(&mut rng, rows, in_dim, units, rows);
        let step = operands.inputs();
        // The CPU twin, as seq2seq::Decoder::step runs it.
        let (h, c) = cpu_lstm_step(&step);
        let got = host::lstm_step(&ctx, &step).expect("lstm");
        assert!(
            got.sentinels_intact,
            "lstm ({rows},{in_dim},{units}) wrote outside its state"
        );
        let (gh, gc) = got.values.split_at(rows * units);
        let (wh, wc) = (worst(gh, &h), worst(gc, &c));
        assert!(
            wh <= 2e-6 && wc <= 2e-6,
            "lstm ({rows},{in_dim},{units}): h {wh}, c {wc}"
        );
    }
}

#[test]
fn dense_paths_agree_bit_for_bit_and_match_cpu() {
    use tuneinfer::gpu::kernels::TilePath;
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(32);
    // (rows, k, n): partial row tiles (128 rows), partial column tiles (64 columns), k chunks
    // (8) ending early; the gfx908 output layer (128 -> 38) and encoder dense (8 -> 32).
    let shapes = [
        (1, 1, 1),
        (3, 17, 63),
        (129, 3, 65),
        (300, 128, 38),
        (257, 8, 32),
        (130, 129, 129),
    ];
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
    for (m, k, n) in shapes {
        let a = rng.vec(m * k, 1.0);
        let b = rng.vec(k * n, 1.0);
        let bias = rng.vec(n, 1.0);
        let init = rng.vec(m * n, 1.0);
        let mut want = vec![0.0; m * n];
        cpu::dense(&a, &b, Some(&bias), &mut want, m, k, n);
        let mut want_acc = init.clone();
        cpu::matmul_acc(&a, &b, &mut want_acc, m, k, n);
        let shape = format!("({m},{k},{n})");
        for half in [false, ctx.adapter().shader_f16] {
            let run = |path, accumulate: bool| {
                let (bias, init) = if accumulate {
                    (None, Some(&init[..]))
                } else {
                    (Some(&bias[..]), None)
                };
                let d = DenseInputs {
                    a: &a,
                    b: &b,
                    bias,
                    rows: m,
                    k,
                    n,
                };
                let got = host::dense_on(&ctx, &d, init, half, path).expect("dense");
                assert!(got.sentinels_intact, "{path:?} {shape} wrote outside its output");
                got.values
            };
            for accumulate in [false, true] {
                let (small, tiled) = (run(TilePath::Small, accumulate), run(TilePath::Tiled, accumulate));
                assert_eq!(
                    bits(&small),
                    bits(&tiled),
                    "paths differ on {shape} (accumulate {accumulate})"
                );
                if !half {
                    let w = worst(&tiled, if accumulate { &want_acc } else { &want });
                    assert!(w <= 1e-5, "dense {shape} (accumulate {accumulate}): worst {w}");
                }
            }
        }
    }
}

/// Random LSTM step operands of one shape, drawn from `rng` in a fixed order (input, kernel,
/// recurrent, bias, then the `state_rows` rows of h and c the step starts from).
struct RandomLstm {
    x: Vec<f32>,
    kernel: Vec<f32>,
    recurrent: Vec<f32>,
    bias: Vec<f32>,
    h0: Vec<f32>,
    c0: Vec<f32>,
    rows: usize,
    in_dim: usize,
    units: usize,
}

impl RandomLstm {
    fn new(rng: &mut Lcg, rows: usize, in_dim: usize, units: usize, state_rows: usize) -> RandomLstm {
        let g = 4 * units;
        RandomLstm {
            x: rng.vec(rows * in_dim, 1.0),
            kernel: rng.vec(in_dim * g, 0.3),
            recurrent: rng.vec(units * g, 0.3),
            bias: rng.vec(g, 0.5),
            h0: rng.vec(state_rows * units, 1.0),
            c0: rng.vec(state_rows * units, 2.0),
            rows,
            in_dim,
            units,
        }
    }

    fn inputs(&self) -> LstmStepInputs<'_> {
        LstmStepInputs {
            x: &self.x,
            kernel: &self.kernel,
            recurrent: &self.recurrent,
            bias: &self.bias,
            h: &self.h0,
            c: &self.c0,
            rows: self.rows,
            in_dim: self.in_dim,
            units: self.units,
        }
    }
}

/// One `lstm_step.wgsl` dispatch's CPU twin, `cpu::lstm_step`, on the same operands. Returns
/// the new (h, c).
fn cpu_lstm_step(step: &LstmStepInputs) -> (Vec<f32>, Vec<f32>) {
    let LstmStepInputs {
        x,
        kernel,
        recurrent,
        bias,
        h: h0,
        c: c0,
        rows,
        in_dim,
        units,
    } = *step;
    let (mut h, mut c) = (h0.to_vec(), c0.to_vec());
    let w = cpu::LstmParams {
        kernel,
        recurrent,
        bias,
        in_dim,
        units,
    };
    cpu::lstm_step(x, w, &mut h, &mut c, rows);
    (h, c)
}

#[test]
fn lstm_step_paths_agree_bit_for_bit_and_match_cpu() {
    use tuneinfer::gpu::kernels::TilePath;
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(31);
    // (rows, in_dim, units): partial row tiles (128 rows), partial unit tiles (32 units), k
    // chunks (8) ending early, and single rows / units.
    let shapes = [
        (1, 1, 1),
        (3, 17, 63),
        (129, 3, 33),
        (130, 8, 128),
        (300, 129, 17),
        (257, 32, 65),
    ];
    for (rows, in_dim, units) in shapes {
        let operands = RandomLstm::new(&mut rng, rows, in_dim, units, rows);
        let step = operands.inputs();
        let (h, c) = cpu_lstm_step(&step);
        let run = |path| host::lstm_step_on(&ctx, &step, false, path).expect("lstm");
        let (small, tiled) = (run(TilePath::Small), run(TilePath::Tiled));
        let shape = format!("({rows},{in_dim},{units})");
        assert!(small.sentinels_intact, "small {shape} wrote outside its state");
        assert!(tiled.sentinels_intact, "tiled {shape} wrote outside its state");
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
        assert_eq!(bits(&small.values), bits(&tiled.values), "paths differ on {shape}");
        let (gh, gc) = tiled.values.split_at(rows * units);
        let (wh, wc) = (worst(gh, &h), worst(gc, &c));
        assert!(wh <= 2e-6 && wc <= 2e-6, "lstm {shape}: h {wh}, c {wc}");
        if ctx.adapter().shader_f16 {
            let run16 = |path| host::lstm_step_on(&ctx, &step, true, path).expect("lstm f16");
            let (small, tiled) = (run16(TilePath::Small), run16(TilePath::Tiled));
            assert!(small.sentinels_intact && tiled.sentinels_intact, "f16 {shape}");
            assert_eq!(bits(&small.values), bits(&tiled.values), "f16 paths differ on {shape}");
        }
    }
}

#[test]
fn lstm_step_with_embedded_input_matches_gather_then_lstm() {
    use tuneinfer::gpu::kernels::TilePath;
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(33);
    // (rows, vocab, embedding dim, units); the gfx908 decoder's first layer is (.., 38, 8, 128).
    for (rows, vocab, dim, units) in [(1, 1, 1, 1), (3, 38, 8, 128), (130, 17, 3, 33), (257, 65, 17, 63)] {
        let g = 4 * units;
        let table = rng.vec(vocab * dim, 1.0);
        let ids: Vec<u32> = (0..rows).map(|_| rng.below(vocab as u64) as u32).collect();
        let kernel = rng.vec(dim * g, 0.3);
        let recurrent = rng.vec(units * g, 0.3);
        let bias = rng.vec(g, 0.5);
        let h0 = rng.vec(rows * units, 1.0);
        let c0 = rng.vec(rows * units, 2.0);
        let mut x = vec![0.0; rows * dim];
        cpu::embedding_gather(&table, &ids, &mut x, dim);
        let shape = format!("({rows},{vocab},{dim},{units})");
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
        let step = LstmStepInputs {
            x: &x,
            kernel: &kernel,
            recurrent: &recurrent,
            bias: &bias,
            h: &h0,
            c: &c0,
            rows,
            in_dim: dim,
            units,
        };
        let (cpu_h, cpu_c) = cpu_lstm_step(&step);
        // The reference: the plain GPU step on gathered inputs; the candidate reads the table.
        let plain =
            |x: &[f32]| host::lstm_step_on(&ctx, &LstmStepInputs { x, ..step }, false, TilePath::Small).expect("lstm");
        let embedded = |ids: &[u32], path| {
            host::lstm_step_embedded_on(&ctx, &LstmStepInputs { x: &table, ..step }, Some(ids), false, path)
                .expect("embedded lstm")
        };
        let want = plain(&x);
        for path in [TilePath::Small, TilePath::Tiled] {
            let got = embedded(&ids, path);
            assert!(got.sentinels_intact, "{path:?} {shape}");
            assert_eq!(bits(&got.values), bits(&want.values), "{path:?} {shape}");
            let (gh, gc) = got.values.split_at(rows * units);
            let (wh, wc) = (worst(gh, &cpu_h), worst(gc, &cpu_c));
            assert!(wh <= 2e-6 && wc <= 2e-6, "{path:?} {shape} vs CPU: h {wh}, c {wc}");
        }
        // An id outside the table: that row's input is NaN, as after embedding_gather.wgsl
        // (which writes NaN for it); the state is what lstm_step makes of a NaN input: NaN in
        // that row's h and c (as on the CPU), the other rows untouched.
        let mut bad = ids.clone();
        bad[rows - 1] = vocab as u32;
        let mut x_bad = x.clone();
        x_bad[(rows - 1) * dim..].iter_mut().for_each(|v| *v = f32::NAN);
        let want = plain(&x_bad);
        for path in [TilePath::Small, TilePath::Tiled] {
            let got = embedded(&bad, path);
            let canonical = |v: &[f32]| -> Vec<u32> {
                v.iter()
                    .map(|x| if x.is_nan() { f32::NAN.to_bits() } else { x.to_bits() })
                    .collect()
            };
            assert_eq!(
                canonical(&got.values),
                canonical(&want.values),
                "bad id, {path:?} {shape}"
            );
            for part in got.values.chunks(rows * units) {
                let last = &part[(rows - 1) * units..];
                assert!(last.iter().all(|v| v.is_nan()), "bad id row not NaN, {path:?} {shape}");
                assert!(
                    part[..(rows - 1) * units].iter().all(|v| !v.is_nan()),
                    "{path:?} {shape}"
                );
            }
        }
    }
}

#[test]
fn lstm_step_with_gathered_state_matches_reorder_then_lstm() {
    use tuneinfer::gpu::kernels::TilePath;
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(34);
    // (previous rows, rows, in_dim, units): a beam's first step reads fewer rows than it writes.
    for (prev_rows, rows, in_dim, units) in [(1, 1, 1, 1), (1, 4, 8, 128), (3, 130, 17, 33), (257, 257, 128, 65)] {
        let operands = RandomLstm::new(&mut rng, rows, in_dim, units, prev_rows);
        let (h0, c0) = (&operands.h0, &operands.c0);
        let parents: Vec<u32> = (0..rows).map(|_| rng.below(prev_rows as u64) as u32).collect();
        // The reorder first (twin States::gather_from), then the plain step.
        let pick = |v: &[f32]| -> Vec<f32> {
            parents
                .iter()
                .flat_map(|&p| v[p as usize * units..(p as usize + 1) * units].to_vec())
                .collect()
        };
        let (h1, c1) = (pick(h0), pick(c0));
        // `step` starts from the `prev_rows` rows of h0, c0; `reordered` from its rows picked.
        let step = operands.inputs();
        let reordered = LstmStepInputs { h: &h1, c: &c1, ..step };
        let (cpu_h, cpu_c) = cpu_lstm_step(&reordered);
        let want = host::lstm_step_on(&ctx, &reordered, false, TilePath::Small).expect("lstm");
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
        for path in [TilePath::Small, TilePath::Tiled] {
            let got = host::lstm_step_gathered_on(&ctx, &step, &parents, path).expect("gathered lstm");
            assert!(got.sentinels_intact, "{path:?} ({prev_rows},{rows},{in_dim},{units})");
            let (gh, gc) = got.values.split_at(rows * units);
            let (wh, wc) = (worst(gh, &cpu_h), worst(gc, &cpu_c));
            assert!(
                wh <= 2e-6 && wc <= 2e-6,
                "{path:?} ({prev_rows},{rows},{in_dim},{units}) vs CPU: h {wh}, c {wc}"
            );
            assert_eq!(
                bits(&got.values),
                bits(&want.values),
                "{path:?} ({prev_rows},{rows},{in_dim},{units})"
            );
        }
    }
}

#[test]
fn log_softmax_matches_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(24);
    for &(rows, width) in &[(1, 1), (3, 17), (17, 63), (63, 65), (65, 129), (129, 38), (4, 38)] {
        let mut x = rng.vec(rows * width, 20.0);
        x[0] += 500.0;
        let mut want = vec![0.0; rows * width];
        cpu::log_softmax_rows(&x, &mut want, rows, width);
        let got = host::log_softmax(&ctx, &x, rows, width).expect("log_softmax");
        assert!(got.sentinels_intact);
        let w = worst(&got.values, &want);
        assert!(w <= 1e-5, "log_softmax ({rows},{width}): worst {w}");
    }
}

#[test]
fn reorder_rows_matches_states_gather() {
    use tuneinfer::seq2seq::States;
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(25);
    for &(src_rows, dst_rows, units) in &[(1, 1, 1), (3, 17, 3), (17, 63, 17), (65, 129, 128), (4, 16, 128)] {
        let mut src = States::zeros(&[units], src_rows);
        src.h[0] = rng.vec(src_rows * units, 1.0);
        src.c[0] = rng.vec(src_rows * units, 1.0);
        let rows: Vec<u32> = (0..dst_rows).map(|_| rng.below(src_rows as u64) as u32).collect();
        let picks: Vec<usize> = rows.iter().map(|&r| r as usize).collect();
        let mut want = src.empty_like();
        want.gather_from(&src, &picks);
        let packed: Vec<f32> = src.h[0].iter().chain(&src.c[0]).copied().collect();
        let got = host::reorder_rows(&ctx, &packed, &rows, src_rows, units).expect("reorder");
        assert!(got.sentinels_intact);
        let (gh, gc) = got.values.split_at(dst_rows * units);
        assert_eq!(worst(gh, &want.h[0]), 0.0);
        assert_eq!(worst(gc, &want.c[0]), 0.0);
    }
}

/// The attention model's decoder-side twin of attention.wgsl, as
/// `seq2seq::AttentionModel`'s step runs it: `cpu::attention`, then `o = tanh([h, ctx]·Wc + bc)`.
fn attention_on_cpu(
    h: &[f32],
    enc: &[f32],
    kernel: &[f32],
    bias: &[f32],
    rows: usize,
    steps: usize,
    units: usize,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut w = vec![0.0; rows * steps];
    let mut ctx = vec![0.0; rows * units];
    cpu::attention(h, enc, &mut w, &mut ctx, rows, steps, units);
    let mut q = vec![0.0; rows * 2 * units];
    for r in 0..rows {
        q[r * 2 * units..r * 2 * units + units].copy_from_slice(&h[r * units..(r + 1) * units]);
        q[r * 2 * units + units..(r + 1) * 2 * units].copy_from_slice(&ctx[r * units..(r + 1) * units]);
    }
    let mut o = vec![0.0; rows * units];
    cpu::dense(&q, kernel, Some(bias), &mut o, rows, 2 * units, units);
    o.iter_mut().for_each(|x| *x = cpu::activations::tanh(*x));
    (w, ctx, o)
}

#[test]
fn attention_matches_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(27);
    // (rows, steps, units): odd sizes (steps at most the kernel's 64), then the shipped
    // gfx906/gfx900 models' 12 steps x 128 units (one problem, a beam of 4 over 65 problems).
    let mut shapes: Vec<(usize, usize, usize)> = ODD
        .iter()
        .map(|&r| (r, [1, 3, 17, 63][r % 4], ODD[(r * 5 + 2) % ODD.len()]))
        .collect();
    shapes.extend([(1, 12, 128), (260, 12, 128), (3, 64, 65), (129, 1, 1)]);
    for (rows, steps, units) in shapes {
        let h = rng.vec(rows * units, 1.0);
        let enc = rng.vec(rows * steps * units, 1.0);
        let kernel = rng.vec(2 * units * units, 0.3);
        let bias = rng.vec(units, 0.5);
        let (ww, wc, wo) = attention_on_cpu(&h, &enc, &kernel, &bias, rows, steps, units);
        let inputs = AttentionInputs {
            h: &h,
            enc: &enc,
            kernel: &kernel,
            bias: &bias,
            rows,
            steps,
            units,
        };
        let (gw, gc, go) = host::attention(&ctx, &inputs, false).expect("attention");
        assert!(
            gw.sentinels_intact && gc.sentinels_intact && go.sentinels_intact,
            "attention ({rows},{steps},{units}) wrote outside its outputs"
        );
        let (ew, ec, eo) = (worst(&gw.values, &ww), worst(&gc.values, &wc), worst(&go.values, &wo));
        // The CPU's dot products are plain multiply-adds; a GPU compiler may fuse them, so the
        // last bits may differ (the combine layer uses fma on both sides).
        assert!(
            ew <= 1e-5 && ec <= 1e-5 && eo <= 1e-5,
            "attention ({rows},{steps},{units}): weights {ew}, context {ec}, o {eo}"
        );
    }
}

#[test]
fn attention_rejects_too_many_steps_and_propagates_nan() {
    let Some(ctx) = common::gpu() else { return };
    let too_long = AttentionInputs {
        h: &[1.0],
        enc: &[1.0; 65],
        kernel: &[1.0; 2],
        bias: &[0.0],
        rows: 1,
        steps: 65,
        units: 1,
    };
    let e = host::attention(&ctx, &too_long, false).expect_err("65 steps");
    assert!(e.to_string().contains("65 encoder steps"), "{e}");
    // A NaN in row 0's h: row 0 is NaN everywhere (as on the CPU), row 1 is untouched.
    let mut rng = Lcg::new(28);
    let (rows, steps, units) = (2, 3, 5);
    let mut h = rng.vec(rows * units, 1.0);
    h[2] = f32::NAN;
    let enc = rng.vec(rows * steps * units, 1.0);
    let kernel = rng.vec(2 * units * units, 0.3);
    let bias = rng.vec(units, 0.5);
    let (ww, _, _) = attention_on_cpu(&h, &enc, &kernel, &bias, rows, steps, units);
    assert!(ww[..steps].iter().all(|v| v.is_nan()));
    let inputs = AttentionInputs {
        h: &h,
        enc: &enc,
        kernel: &kernel,
        bias: &bias,
        rows,
        steps,
        units,
    };
    let (gw, gc, go) = host::attention(&ctx, &inputs, false).expect("attention");
    assert!(gw.values[..steps].iter().all(|v| v.is_nan()), "{:?}", gw.values);
    assert!(gc.values[..units].iter().all(|v| v.is_nan()), "{:?}", gc.values);
    assert!(go.values[..units].iter().all(|v| v.is_nan()), "{:?}", go.values);
    assert!(gw.values[steps..]
        .iter()
        .chain(&gc.values[units..])
        .chain(&go.values[units..])
        .all(|v| !v.is_nan()));
}

#[test]
fn ensemble_mean_matches_the_cpu_average() {
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(29);
    for &n in ODD.iter().chain(&[37 * 4 * 65]) {
        // Three members, added in order as seq2seq::AttentionModel's step does.
        let members: Vec<Vec<f32>> = (0..3).map(|_| rng.vec(n, 8.0)).collect();
        let share = 1.0f32 / 3.0;
        let mut want = vec![0.0f32; n];
        let mut got = vec![0.0f32; n];
        for m in &members {
            cpu::ensemble_add(&mut want, m, share);
            let out = host::ensemble_mean(&ctx, m, &got, share).expect("ensemble_mean");
            assert!(out.sentinels_intact, "ensemble_mean ({n}) wrote outside its output");
            got = out.values;
        }
        let w = worst(&got, &want);
        assert!(w <= 1e-6, "ensemble_mean ({n}): worst {w}");
    }
}

/// Rounds weights through f16, as the f16 kernels store them.
fn f16_rounded(v: &[f32]) -> Vec<f32> {
    v.iter().map(|&x| half::f16::from_f32(x).to_f32()).collect()
}

#[test]
fn f16_weight_kernels_match_cpu_on_f16_rounded_weights() {
    let Some(ctx) = common::gpu() else { return };
    if !ctx.adapter().shader_f16 {
        println!("skipped: adapter has no shader f16");
        return;
    }
    let mut rng = Lcg::new(26);
    for &(rows, in_dim, units) in &[(1, 1, 1), (3, 17, 63), (65, 8, 128), (4, 128, 128)] {
        let operands = RandomLstm::new(&mut rng, rows, in_dim, units, rows);
        let RandomLstm {
            x,
            kernel,
            recurrent,
            bias,
            h0,
            c0,
            ..
        } = &operands;
        let (k16, r16, b16) = (f16_rounded(kernel), f16_rounded(recurrent), f16_rounded(bias));
        let (mut h, mut c) = (h0.clone(), c0.clone());
        let w = cpu::LstmParams {
            kernel: &k16,
            recurrent: &r16,
            bias: &b16,
            in_dim,
            units,
        };
        cpu::lstm_step(x, w, &mut h, &mut c, rows);
        let step = operands.inputs();
        let got = host::lstm_step_with(&ctx, &step, true).expect("lstm f16");
        assert!(got.sentinels_intact);
        let (gh, gc) = got.values.split_at(rows * units);
        let (wh, wc) = (worst(gh, &h), worst(gc, &c));
        assert!(
            wh <= 2e-6 && wc <= 2e-6,
            "lstm f16 ({rows},{in_dim},{units}): h {wh}, c {wc}"
        );
        let out_w = rng.vec(units * 38, 0.3);
        let out_b = rng.vec(38, 0.3);
        let mut want = vec![0.0; rows * 38];
        cpu::dense(
            h0,
            &f16_rounded(&out_w),
            Some(&f16_rounded(&out_b)),
            &mut want,
            rows,
            units,
            38,
        );
        let output = DenseInputs {
            a: h0,
            b: &out_w,
            bias: Some(&out_b),
            rows,
            k: units,
            n: 38,
        };
        let got = host::dense_with(&ctx, &output, None, true).expect("dense f16");
        assert!(got.sentinels_intact);
        let w = worst(&got.values, &want);
        assert!(w <= 1e-5, "dense f16 ({rows},{units}): {w}");
        let steps = [1, 3, 12, 12][rows % 4];
        let enc = rng.vec(rows * steps * units, 1.0);
        let (ck, cb) = (rng.vec(2 * units * units, 0.3), rng.vec(units, 0.5));
        let (_, _, wo) = attention_on_cpu(h0, &enc, &f16_rounded(&ck), &f16_rounded(&cb), rows, steps, units);
        let inputs = AttentionInputs {
            h: h0,
            enc: &enc,
            kernel: &ck,
            bias: &cb,
            rows,
            steps,
            units,
        };
        let (_, _, go) = host::attention(&ctx, &inputs, true).expect("attention f16");
        assert!(go.sentinels_intact);
        let w = worst(&go.values, &wo);
        assert!(w <= 1e-5, "attention f16 ({rows},{steps},{units}): {w}");
    }
}

#[test]
fn dense_log_softmax_matches_cpu_and_the_two_kernels() {
    let Some(ctx) = common::gpu() else { return };
    let mut rng = Lcg::new(35);
    // (rows, k, n): odd sizes (n above and below the workgroup of 64), the gfx908 output layer.
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
    for (rows, k, n) in [(1, 1, 1), (3, 17, 63), (17, 65, 129), (4, 128, 38), (65, 3, 38)] {
        let a = rng.vec(rows * k, 1.0);
        let mut b = rng.vec(k * n, 1.0);
        let bias = rng.vec(n, 1.0);
        if rows == 3 {
            // A NaN weight: every row's scores and log-probabilities in that column are NaN.
            b[5] = f32::NAN;
        }
        let mut want_scores = vec![0.0; rows * n];
        cpu::dense(&a, &b, Some(&bias), &mut want_scores, rows, k, n);
        let mut want_logp = vec![0.0; rows * n];
        cpu::log_softmax_rows(&want_scores, &mut want_logp, rows, n);
        let d = DenseInputs {
            a: &a,
            b: &b,
            bias: Some(&bias),
            rows,
            k,
            n,
        };
        let (scores, logp) = host::dense_log_softmax(&ctx, &d, false).expect("dense_log_softmax");
        let shape = format!("({rows},{k},{n})");
        assert!(scores.sentinels_intact && logp.sentinels_intact, "{shape}");
        let two = host::dense(&ctx, &d, None).expect("dense");
        assert_eq!(bits(&scores.values), bits(&two.values), "scores {shape}");
        let two_logp = host::log_softmax(&ctx, &two.values, rows, n).expect("log_softmax");
        assert_eq!(bits(&logp.values), bits(&two_logp.values), "logp {shape}");
        if rows == 3 {
            assert!(logp.values.iter().all(|v| v.is_nan()), "{shape}");
            continue;
        }
        let (ws, wl) = (worst(&scores.values, &want_scores), worst(&logp.values, &want_logp));
        assert!(ws <= 1e-5 && wl <= 1e-5, "{shape}: scores {ws}, logp {wl}");
    }
}

#[test]
fn log_softmax_propagates_nan_like_the_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let x = [1.0, f32::NAN, 2.0, 0.5, 0.25, 3.0];
    let got = host::log_softmax(&ctx, &x, 2, 3).expect("log_softmax");
    assert!(got.values[..3].iter().all(|v| v.is_nan()), "{:?}", got.values);
    assert!(got.values[3..].iter().all(|v| !v.is_nan()), "{:?}", got.values);
}

#[test]
fn nan_never_passes_the_comparison() {
    assert_eq!(worst(&[f32::NAN], &[1.0]), f64::INFINITY);
    assert_eq!(worst(&[1.0], &[f32::NAN]), f64::INFINITY);
}
