//! Training and inference throughput of the attention model on the CPU: one mini-batch
//! forward + backward (the unit `tuneinfer train` repeats) and one batched decoder step.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tuneinfer::seq2seq::attention::{AttentionConfig, AttentionModel, AttentionParams, FeatureTransform, NUM_FEATURES};
use tuneinfer::seq2seq::weights::ktn_metadata;
use tuneinfer::seq2seq::{DecoderScratch, Seq2SeqModel, StepDecoder};
use tuneinfer::testutil::Lcg;
use tuneinfer::train::model::forward_backward_sharded;

fn config(hidden: usize) -> AttentionConfig {
    AttentionConfig {
        steps: NUM_FEATURES,
        hidden,
        embed: 32,
        vocab: 37,
        seq_len: 8,
        encoder: Default::default(),
    }
}

fn cpu_train_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_train_step");
    let batch = 32;
    for hidden in [64, 128] {
        let cfg = config(hidden);
        let params = AttentionParams::init(cfg, 1);
        let mut rng = Lcg::new(2);
        let inputs = rng.vec(batch * cfg.steps * cfg.enc_input(), 1.0);
        let targets: Vec<u32> = (0..batch * cfg.seq_len).map(|_| 1 + rng.below(36) as u32).collect();
        group.throughput(Throughput::Elements(batch as u64));
        for threads in [1, 2] {
            group.bench_with_input(
                BenchmarkId::new(format!("h{hidden}_b{batch}"), format!("{threads}t")),
                &threads,
                |b, &threads| {
                    b.iter(|| {
                        let mut grads = AttentionParams::zeros(cfg);
                        forward_backward_sharded(&params, &inputs, &targets, batch, threads, None, &mut grads)
                    })
                },
            );
        }
    }
    group.finish();
}

fn cpu_attention_decode_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_attention_decode_step");
    let cfg = config(128);
    let tokens: Vec<String> = (0..cfg.vocab)
        .map(|i| if i == 0 { "-1".into() } else { i.to_string() })
        .collect();
    let transform = FeatureTransform {
        mean: vec![0.0; NUM_FEATURES],
        std: vec![1.0; NUM_FEATURES],
        gpu: None,
    };
    let model = AttentionModel::new(
        AttentionParams::init(cfg, 3),
        transform,
        ktn_metadata(&tokens, 8),
        "bench".into(),
    )
    .expect("bench model");
    for batch in [1, 16, 256] {
        let mut rng = Lcg::new(4);
        let inputs = rng.vec(batch * cfg.steps * cfg.enc_input(), 1.0);
        let init = model.encode(&inputs, batch).expect("encode");
        let feed: Vec<u32> = (0..batch).map(|i| (i % cfg.vocab) as u32).collect();
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_with_input(BenchmarkId::new("h128", batch), &batch, |b, _| {
            let mut scratch = DecoderScratch::default();
            let mut scores = Vec::new();
            b.iter(|| {
                let mut states = init.clone();
                model.step(&feed, &mut states, &mut scores, &mut scratch);
                scores[0]
            })
        });
    }
    group.finish();
}

criterion_group!(benches, cpu_train_step, cpu_attention_decode_step);
criterion_main!(benches);
