#!/usr/bin/env python3
"""The Python package's per-call overhead for single predictions against the Rust API.

    pip install . && tools/ffi_overhead.py [--calls N]

For the two models of `cargo bench --bench ffi` (CPU, one problem, the model's default
decoding) it alternates `Predictor.predict(KEY)`, timed in Python, with the same
`ConvProblem::parse` + `Engine::predict_one` timed inside Rust (`Predictor._rust_predict_ns`),
and prints both medians and minimums, their differences (the boundary: argument conversion,
releasing and taking the GIL, building the Prediction objects) and ratios; on a loaded
machine the minimum is the least disturbed. Alternating gives both the
same background load on a shared machine. Also times a call that fails at once (an invalid
problem: conversion, parsing, raising).
"""

import argparse
import os
import pathlib
import statistics
import time

import tuneinfer

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = pathlib.Path(os.environ.get("TUNEINFER_MIOPEN_DATA", ROOT / ".." / "shared" / "miopen"))
KEY = "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F"


def median_us(f, calls):
    for _ in range(max(calls // 10, 5)):  # warm-up
        f()
    times = []
    for _ in range(calls):
        t = time.perf_counter_ns()
        f()
        times.append(time.perf_counter_ns() - t)
    return statistics.median(times) / 1000.0


def fails(p):
    try:
        p.predict("not-a-problem")
    except tuneinfer.TuneinferError:
        pass


def paired(p, calls):
    """Medians (us) of alternating Python `predict` calls and Rust-timed ones."""
    py, rust = [], []
    for i in range(calls + calls // 10):
        # Which goes first alternates too: the second of a pair can find the caches (or the
        # scheduler) in another state.
        if i % 2:
            r = p._rust_predict_ns(KEY)
        t = time.perf_counter_ns()
        p.predict(KEY)
        dt = time.perf_counter_ns() - t
        if not i % 2:
            r = p._rust_predict_ns(KEY)
        if i >= calls // 10:  # the first tenth warms up
            py.append(dt)
            rust.append(r)
    return (statistics.median(py) / 1000.0, min(py) / 1000.0), (statistics.median(rust) / 1000.0, min(rust) / 1000.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=4000)
    args = ap.parse_args()
    cases = [("gfx908_miopen", dict(arch="gfx908", models=str(DATA / "models"))), ("gfx906_ours_auto", dict(arch="gfx906"))]
    for name, load in cases:
        p = tuneinfer.Predictor(device="cpu", **load)
        calls = args.calls if name == "gfx908_miopen" else max(args.calls // 10, 50)
        py, rust = paired(p, calls)
        print(f"python_paired/{name} ({calls} alternating calls each): "
              f"median python {py[0]:.1f} us, rust {rust[0]:.1f} us, difference {py[0] - rust[0]:.1f} us, python/rust {py[0] / rust[0]:.4f}; "
              f"minimum python {py[1]:.1f} us, rust {rust[1]:.1f} us, difference {py[1] - rust[1]:.1f} us, python/rust {py[1] / rust[1]:.4f}")
    p = tuneinfer.Predictor(device="cpu", arch="gfx908", models=str(DATA / "models"))
    print(f"python_invalid_problem: median {median_us(lambda: fails(p), args.calls):.2f} us over {args.calls} calls")


if __name__ == "__main__":
    main()
