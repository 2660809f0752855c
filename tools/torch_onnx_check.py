#!/usr/bin/env python3
"""Issue 53's corpus check: for real networks, `problems --onnx` on each exporter's file
(TorchScript's `torch.onnx.export(dynamo=False)` and `torch.export`'s `dynamo=True`) against
`tuneinfer.problems_from_torch` on the live model, inference and training, batch 32.

    python tools/torch_onnx_check.py [MODEL ...]    # default: every model below

Needs torch, torchvision (torchaudio for its two), onnx (onnxscript for torch.export) and the
tuneinfer package (or PYTHONPATH to a stand-in). Models are built with weights=None: no
download. A transposed convolution's ONNX line (`-m trans`, the transposed convolution MIOpen's
own API takes) is compared as the convolution MIOpen runs for it, which is what PyTorch asks
(its backward data), so both sides name the same problem. Prints one line per (model,
exporter, mode): `same`, or the lines only one side has.
"""

import re
import sys
import tempfile
import time

import torch

import tuneinfer


def models():
    import torchvision.models as tv
    import torchvision.models.segmentation as seg
    import torchvision.models.video as video

    out = {
        "resnet50": (lambda: tv.resnet50(weights=None), (1, 3, 224, 224)),
        "densenet121": (lambda: tv.densenet121(weights=None), (1, 3, 224, 224)),
        "efficientnet_b0": (lambda: tv.efficientnet_b0(weights=None), (1, 3, 224, 224)),
        "convnext_tiny": (lambda: tv.convnext_tiny(weights=None), (1, 3, 224, 224)),
        "deeplabv3_resnet50": (lambda: seg.deeplabv3_resnet50(weights=None, weights_backbone=None), (1, 3, 224, 224)),
        "r2plus1d_18": (lambda: video.r2plus1d_18(weights=None), (1, 3, 8, 112, 112)),
    }
    try:
        import torchaudio.models as ta

        out["wav2vec2_base"] = (lambda: ta.wav2vec2_base(), (1, 16000))
        out["conv_tasnet_base"] = (lambda: ta.conv_tasnet_base(), (1, 1, 16000))
    except Exception as e:  # noqa: BLE001
        print(f"torchaudio models skipped: {e}", file=sys.stderr)
    return out


def canonical(line):
    """A `-m trans` line as the convolution MIOpen runs for it (x and y swapped, forward and
    backward data swapped); other lines as they are."""
    if " -m trans " not in line:
        return line
    words = line.split()
    flags = dict(zip(words[1::2], words[2::2]))
    three = "--in_d" in flags
    axes = [("--in_d", "--fil_d", "--pad_d", "--conv_stride_d", "--dilation_d", "--trans_output_pad_d")] if three else []
    axes += [("-H", "-y", "-p", "-u", "-l", "-Y"), ("-W", "-x", "-q", "-v", "-j", "-X")]
    out = {}
    for i, f, p, s, d, o in axes:
        n = lambda k: int(flags.get(k, 0))  # noqa: E731
        out[i] = n(s) * (n(i) - 1) + n(d) * (n(f) - 1) + 1 - 2 * n(p) + n(o)
    direction = {"1": "2", "2": "1", "4": "4"}[flags["-F"]]
    text = line
    for i, v in out.items():
        text = re.sub(rf" {re.escape(i)} \d+", f" {i} {v}", text, count=1)
    text = re.sub(r" -c (\d+)(.*?) -k (\d+)", lambda m: f" -c {m.group(3)}{m.group(2)} -k {m.group(1)}", text, count=1)
    text = text.replace(" -m trans ", " -m conv ")
    text = re.sub(r" -F \d", f" -F {direction}", text)
    text = re.sub(r" (-Y|-X|--trans_output_pad_d) \d+", "", text)
    return text


def main(names):
    table = models()
    for name in names or list(table):
        build, shape = table[name]
        torch.manual_seed(0)
        model = build().eval()
        x = torch.randn(*shape)
        for training in (False, True):
            started = time.time()
            # NCHW: an ONNX file has no memory format (--layout sets one for all); the live
            # model's own (channels-last strides after a permute, as ConvNeXt's blocks have) is
            # counted apart.
            live = tuneinfer.problems_from_torch(model, x, training=training, batch=32, layout="NCHW")
            nhwc = sum(" NHWC " in s or " NDHWC " in s for s in tuneinfer.problems_from_torch(model, x, training=training, batch=32))
            mode = "training" if training else "inference"
            print(
                f"{name} live {mode}: {len(live)} problems, {nhwc} of them NHWC by the tensors' memory format "
                f"({time.time() - started:.0f} s)",
                flush=True,
            )
            for exporter, dynamo in (("torchscript", False), ("torch.export", True)):
                with tempfile.TemporaryDirectory() as tmp:
                    path = f"{tmp}/{name}.onnx"
                    try:
                        torch.onnx.export(
                            model,
                            (x,),
                            path,
                            dynamo=dynamo,
                            input_names=["x"],
                            dynamic_axes=None if dynamo else {"x": {0: "batch"}},
                            dynamic_shapes=({0: torch.export.Dim("batch")},) if dynamo else None,
                        )
                        lines = tuneinfer.problems_from_onnx(path, batch=32, training=training)
                    except Exception as e:  # noqa: BLE001
                        why = " ".join(str(e).split())[:300]
                        print(f"{name} {exporter} {mode}: not compared: {why}", flush=True)
                        continue
                a, b = {canonical(s) for s in lines}, set(live)
                if a == b:
                    print(f"{name} {exporter} {mode}: same ({len(a)} problems)", flush=True)
                else:
                    print(f"{name} {exporter} {mode}: DIFFER: only ONNX {sorted(a - b)[:5]} only live {sorted(b - a)[:5]}")


if __name__ == "__main__":
    main(sys.argv[1:])
