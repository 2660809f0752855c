#!/usr/bin/env python3
"""The Python package's per-call time for single predictions, beside the Rust API's.

    pip install . && tools/ffi_overhead.py [--calls N]

Times `Predictor.predict(KEY)` (CPU, one problem, the model's default decoding) for the two
models of `cargo bench --bench ffi` and prints the medians; the per-call overhead is this
median minus that bench's `ffi_single/rust_*` median (the same problem, model and decoding).
Also times a call that fails at once (an invalid problem: parsing plus raising), which is the
boundary alone.
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    cases = [("gfx908_miopen", dict(arch="gfx908", models=str(DATA / "models"))), ("gfx906_ours_auto", dict(arch="gfx906"))]
    for name, load in cases:
        p = tuneinfer.Predictor(device="cpu", **load)
        calls = args.calls if name == "gfx908_miopen" else max(args.calls // 10, 50)
        print(f"python_{name}: median {median_us(lambda: p.predict(KEY), calls):.1f} us over {calls} calls")
    p = tuneinfer.Predictor(device="cpu", arch="gfx908", models=str(DATA / "models"))
    print(f"python_invalid_problem: median {median_us(lambda: fails(p), args.calls):.2f} us over {args.calls} calls")


if __name__ == "__main__":
    main()
