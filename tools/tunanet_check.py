#!/usr/bin/env python3
"""An independent numpy run of MIOpen's TunaNet, for the goldens of tests/tunanet.rs.

    tools/tunanet_check.py [--models DIR]

DIR (default ../shared/miopen/models) holds MIOpen's `{arch}.tn.model` and
`{arch}_metadata.tn.model` (ROCm/MIOpen 2d1fd997a, src/kernels/). Nothing here uses tuneinfer's
code: the frugally-deep JSON is decoded with json + base64 + numpy, the graph (Dense, ReLU, Add)
is evaluated in float64, and the features are built from MIOpen's `ai_heuristics.cpp` rules
(2d1fd997a: Gfx908Model::ToFeatures :270-306, Gfx90aModel :371-399, Gfx942Model :464-493),
written again here from the C++ source.

It first checks the numpy forward pass against the test vectors embedded in the gfx90a and
gfx942 files (Keras's own outputs), then prints, for each problem of PROBLEMS, the normalised
features and the solver order with scores. tests/tunanet.rs holds these numbers as goldens
(produced with this script, numpy 2.4, on the models of 2d1fd997a). Exit status 1 when an
embedded test is not reproduced within 1e-4.
"""

import argparse
import base64
import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent

# (arch, name, problem). A problem is the forward convolution plus direction, precision, layout:
# n, c, k, h, w (x's size), fy, fx, pad (h, w), stride (h, w), dilation (h, w), groups, dir, prec.
# The first six are MIOpen's own unit test cases (test/gtest/tuna_net.cpp, G N C K img filter pad
# stride dilation), the rest cover backward directions, groups and gfx942.
PROBLEMS = [
    ("gfx908", "gtest_fp32", dict(n=5, c=256, k=64, h=267, w=300, fy=1, fx=1, pad=(0, 0), stride=(1, 1), dil=(1, 1), g=1, dir="F", prec="FP32")),
    ("gfx908", "gtest_fp16", dict(n=16, c=256, k=512, h=20, w=84, fy=5, fx=5, pad=(1, 1), stride=(1, 1), dil=(1, 1), g=1, dir="F", prec="FP16")),
    ("gfx908", "gtest_bf16", dict(n=32, c=1024, k=512, h=15, w=15, fy=1, fx=1, pad=(0, 0), stride=(1, 1), dil=(1, 1), g=1, dir="F", prec="BF16")),
    ("gfx90a", "gtest_fp32", dict(n=5, c=3, k=64, h=1301, w=1333, fy=7, fx=7, pad=(3, 3), stride=(2, 2), dil=(1, 1), g=1, dir="F", prec="FP32")),
    ("gfx90a", "gtest_fp16", dict(n=24, c=1024, k=2048, h=14, w=14, fy=1, fx=1, pad=(0, 0), stride=(2, 2), dil=(1, 1), g=1, dir="F", prec="FP16")),
    ("gfx90a", "gtest_bf16", dict(n=2, c=480, k=192, h=28, w=28, fy=1, fx=1, pad=(0, 0), stride=(1, 1), dil=(1, 1), g=1, dir="F", prec="BF16")),
    ("gfx908", "resnet_bwd", dict(n=64, c=128, k=128, h=28, w=28, fy=3, fx=3, pad=(1, 1), stride=(1, 1), dil=(1, 1), g=1, dir="B", prec="FP32")),
    ("gfx90a", "group_wrw", dict(n=32, c=256, k=256, h=14, w=14, fy=3, fx=3, pad=(1, 1), stride=(1, 1), dil=(1, 1), g=32, dir="W", prec="FP16")),
    ("gfx942", "resnet_fwd", dict(n=256, c=64, k=64, h=56, w=56, fy=3, fx=3, pad=(1, 1), stride=(1, 1), dil=(1, 1), g=1, dir="F", prec="FP16")),
    ("gfx942", "strided_bwd", dict(n=8, c=512, k=1024, h=28, w=28, fy=1, fx=1, pad=(0, 0), stride=(2, 2), dil=(1, 1), g=1, dir="B", prec="BF16")),
]


def floats(v):
    """A frugally-deep float array: base64 chunks of little-endian float32, or numbers."""
    out = []
    for item in v:
        if isinstance(item, str):
            out.append(np.frombuffer(base64.b64decode(item), dtype="<f4"))
        else:
            out.append(np.array([item], dtype="<f4"))
    return np.concatenate(out).astype(np.float64)


class Net:
    def __init__(self, path):
        m = json.loads(pathlib.Path(path).read_text())
        self.layers = m["architecture"]["config"]["layers"]
        self.params = m["trainable_params"]
        self.tests = m.get("tests") or []
        self.output = m["architecture"]["config"]["output_layers"][0][0]

    def forward(self, x):
        vals = {}
        for l in self.layers:
            name, cls = l["name"], l["class_name"]
            ins = [vals[i[0]] for i in (l["inbound_nodes"][0] if l["inbound_nodes"] else [])]
            if cls == "InputLayer":
                vals[name] = np.asarray(x, dtype=np.float64)
            elif cls == "Dense":
                p = self.params[name]
                b = floats(p["bias"])
                k = floats(p["weights"]).reshape(-1, len(b))
                vals[name] = ins[0] @ k + b
            elif cls == "ReLU":
                vals[name] = np.maximum(ins[0], 0.0)
            elif cls == "Add":
                vals[name] = sum(ins)
            else:
                raise SystemExit(f"{path}: layer class {cls} not handled")
        return vals[self.output]


def raw_features(arch, meta, p):
    """MIOpen's ToFeatures, forward convention (x's channels/size, then y's)."""
    def out(size, pad, f, s, d):
        return (size + 2 * pad - d * (f - 1) - 1) // s + 1

    ho = out(p["h"], p["pad"][0], p["fy"], p["stride"][0], p["dil"][0])
    wo = out(p["w"], p["pad"][1], p["fx"], p["stride"][1], p["dil"][1])
    enc = meta["encodings"]
    prec = enc["Precision"][p["prec"]]
    direc = enc["Direction"][p["dir"]]
    if arch == "gfx908":
        # C, InDepth, H, W, FilterDepth, Fy, Fx, K, OutDepth, Ho, Wo, N, 1 (PadD), padH, padW,
        # 1 (StrideD), sH, sW, dH, dW, layout, precision, direction, groups
        return [p["c"], 1, p["h"], p["w"], 1, p["fy"], p["fx"], p["k"], 1, ho, wo, p["n"], 1,
                p["pad"][0], p["pad"][1], 1, p["stride"][0], p["stride"][1], p["dil"][0], p["dil"][1],
                enc["Layout"]["NCHW"], prec, direc, p["g"]]
    return [p["c"], p["h"], p["w"], p["k"], ho, wo, p["fy"], p["fx"], p["pad"][0], p["pad"][1],
            p["stride"][0], p["stride"][1], p["dil"][0], p["dil"][1], p["n"], prec, direc, p["g"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=str(ROOT.parent / "shared/miopen/models"))
    args = ap.parse_args()
    d = pathlib.Path(args.models)
    nets, metas = {}, {}
    bad = 0
    for arch in ("gfx908", "gfx90a", "gfx942"):
        nets[arch] = Net(d / f"{arch}.tn.model")
        metas[arch] = json.loads((d / f"{arch}_metadata.tn.model").read_text())
        for t in nets[arch].tests:
            x = floats(t["inputs"][0]["values"])
            want = floats(t["outputs"][0]["values"])
            got = nets[arch].forward(x)
            worst = float(np.max(np.abs(got - want)))
            ok = worst <= 1e-4 * max(1.0, float(np.max(np.abs(want))))
            bad += not ok
            print(f"{arch}: embedded test reproduced, largest difference {worst:.3g}" + ("" if ok else "  FAILED"))
        if not nets[arch].tests:
            print(f"{arch}: no embedded test")
    for arch, name, p in PROBLEMS:
        meta = metas[arch]
        feats = meta["conv_params_used_as_features"]
        stats = meta["stats"]["test" if arch == "gfx942" else "overall"]["features"]
        raw = np.array(raw_features(arch, meta, p), dtype=np.float32)
        mean = np.array([stats["mean"][f] for f in feats], dtype=np.float32)
        std = np.array([stats["std"][f] for f in feats], dtype=np.float32)
        x = (raw - mean) / std  # float32, as MIOpen computes it
        y = nets[arch].forward(x.astype(np.float64))
        off = meta["num_outputs"] - meta["num_solvers"]
        scores = y[off:]
        solver_of = {v: k for k, v in meta["encodings"]["solver"].items()}
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        print(f"\n{arch} {name}: raw {raw.tolist()}")
        print("  normalised " + ", ".join(f"{v:.6f}" for v in x))
        print("  order " + ", ".join(f'("{solver_of[i]}", {scores[i]:.5f})' for i in order))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
