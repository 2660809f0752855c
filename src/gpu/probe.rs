//! The round-trip floors of `tuneinfer bench --profile`: median wall times of the smallest GPU
//! round trips (an empty submission, error scopes, one dispatch, one read-back).

use std::time::{Duration, Instant};

use super::buffers;
use super::context::GpuContext;
use super::kernels;
use crate::error::{Error, Result};

/// Median wall times of the smallest GPU round trips, in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundTrips {
    pub samples: usize,
    pub rows: Vec<RoundTrip>,
}

/// One kind of round trip: median seconds of the whole trip, of its `submit` call and of its
/// wait for the GPU (where it has them); the rest is recording, mapping and copying.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundTrip {
    pub what: &'static str,
    pub total: f64,
    pub submit: Option<f64>,
    pub wait: Option<f64>,
}

/// Times of one trial: the whole, the submit call, the wait.
#[derive(Default)]
struct Trial {
    total: Duration,
    submit: Option<Duration>,
    wait: Option<Duration>,
}

/// The round trips [`round_trips`] times, in order.
const TRIPS: [&str; 8] = [
    "empty command buffer: submit + wait",
    "  the same without error scopes",
    "  error scopes alone (push 2, pop 2)",
    "  wait alone (nothing submitted)",
    "4-byte write_buffer + empty submit + wait",
    "1 dispatch of 1 thread: record + submit + wait",
    "10 dispatches of 1 thread, one submit + wait",
    "4-byte copy: submit + wait for the map + read",
];

/// Measures `samples` times each (after one untimed try) the trips of [`TRIPS`]: submissions
/// go through the engine's error scopes ([`GpuContext::checked`]) except where said; dispatches
/// are recorded as an uncached decode records them (a fresh bind group and parameter buffer
/// each).
pub fn round_trips(ctx: &GpuContext, samples: usize) -> Result<RoundTrips> {
    let samples = samples.max(1);
    let x = buffers::upload_f32(ctx, "round trip x", &[1.0])?;
    let out = buffers::upload_f32(ctx, "round trip out", &[0.0])?;
    let staging = buffers::read_back_buffer(ctx, "round trip read-back", 4)?;
    let new_encoder = || {
        ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("round trip"),
        })
    };
    // Submits (inside the engine's error scopes unless `raw`), then waits for it.
    let submit_wait = |t: &mut Trial, encoder: wgpu::CommandEncoder, raw: bool| -> Result<()> {
        let start = Instant::now();
        let index = if raw {
            ctx.queue.submit([encoder.finish()])
        } else {
            ctx.checked("round trip", || ctx.queue.submit([encoder.finish()]))?
        };
        t.submit = Some(start.elapsed());
        let start = Instant::now();
        ctx.wait("round trip", Some(index))?;
        t.wait = Some(start.elapsed());
        Ok(())
    };
    let dispatches = |t: &mut Trial, n: usize| -> Result<()> {
        let mut rec = kernels::Recorder::new(ctx, "round trip");
        for _ in 0..n {
            kernels::ensemble_mean(ctx, &mut rec, (&x).into(), (&out).into(), 1, 1.0)?;
        }
        submit_wait(t, rec.finish(), false)
    };
    let read_back = |t: &mut Trial| -> Result<()> {
        let mut encoder = new_encoder();
        encoder.copy_buffer_to_buffer(&out, 0, &staging, 0, 4);
        let start = Instant::now();
        let index = ctx.checked("round trip", || ctx.queue.submit([encoder.finish()]))?;
        t.submit = Some(start.elapsed());
        let start = Instant::now();
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, ..4, move |r| {
            let _ = tx.send(r);
        });
        ctx.wait("round trip", Some(index))?;
        let mapped = loop {
            match rx.try_recv() {
                Ok(r) => break r,
                Err(std::sync::mpsc::TryRecvError::Empty) => ctx.wait("round trip", None)?,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    return Err(Error::Gpu("round trip: the read-back was never mapped".into()))
                }
            }
        };
        t.wait = Some(start.elapsed());
        mapped.map_err(|e| Error::Gpu(format!("round trip: mapping failed: {e}")))?;
        let word = staging
            .get_mapped_range(..4)
            .map_err(|e| Error::Gpu(format!("round trip: {e}")))?
            .to_vec();
        staging.unmap();
        std::hint::black_box(word);
        Ok(())
    };
    let trial = |kind: usize| -> Result<Trial> {
        let mut t = Trial::default();
        let start = Instant::now();
        match kind {
            0 => submit_wait(&mut t, new_encoder(), false)?,
            1 => submit_wait(&mut t, new_encoder(), true)?,
            2 => ctx.checked("round trip", || ())?,
            3 => ctx.wait("round trip", None)?,
            4 => {
                ctx.queue.write_buffer(&out, 0, &[0u8; 4]);
                submit_wait(&mut t, new_encoder(), false)?;
            }
            5 => dispatches(&mut t, 1)?,
            6 => dispatches(&mut t, 10)?,
            _ => read_back(&mut t)?,
        }
        t.total = start.elapsed();
        Ok(t)
    };
    let mut rows = Vec::new();
    for (kind, what) in TRIPS.into_iter().enumerate() {
        trial(kind)?;
        let (mut total, mut submit, mut wait) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..samples {
            let t = trial(kind)?;
            total.push(t.total.as_secs_f64());
            submit.extend(t.submit.map(|s| s.as_secs_f64()));
            wait.extend(t.wait.map(|s| s.as_secs_f64()));
        }
        rows.push(RoundTrip {
            what,
            total: median(&mut total),
            submit: (!submit.is_empty()).then(|| median(&mut submit)),
            wait: (!wait.is_empty()).then(|| median(&mut wait)),
        });
    }
    Ok(RoundTrips { samples, rows })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}
