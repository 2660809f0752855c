#!/usr/bin/env python3
"""Writes the ONNX networks of docs/onnx.md's worked example, built with ONNX's own Python
helpers (`pip install onnx`; no PyTorch needed), the way torch.onnx.export writes them:

  resnet50.onnx  ResNet-50 v1.5 (torchvision's resnet50): Conv (no bias) + BatchNormalization +
                 Relu, MaxPool, Add, GlobalAveragePool, Flatten, Gemm; batch symbolic; weights
                 in an external file, resnet50.onnx.data
  r3d18.onnx     an 18-layer 3-D ResNet for video (torchvision's r3d_18): 3x7x7 stem with stride
                 1x2x2, BasicBlocks of 3x3x3 convolutions, 1x1x1 strided projections; 16 frames
                 of 112x112; batch symbolic
  unet_fp16.onnx a small FP16 U-Net: strided convolutions down, ConvTranspose up, Concat skips

Usage: tools/onnx_examples.py DIR   (then `rm DIR/resnet50.onnx.data`: tuneinfer needs no weights)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Net:
    def __init__(self, elem=TensorProto.FLOAT):
        self.nodes, self.inits, self.n, self.elem = [], [], 0, elem

    def weight(self, name, shape):
        dtype = np.float16 if self.elem == TensorProto.FLOAT16 else np.float32
        self.inits.append(numpy_helper.from_array(np.zeros(shape, dtype=dtype), name))
        return name

    def op(self, op, inputs, **attrs):
        self.n += 1
        out = f"{op.lower()}_{self.n}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, pad=None, transposed=False, **extra):
        dims = len(k)
        pad = [kk // 2 for kk in k] if pad is None else pad
        w = self.weight(f"w{self.n + 1}", [cin, cout, *k] if transposed else [cout, cin, *k])
        stride = stride if isinstance(stride, list) else [stride] * dims
        return self.op("ConvTranspose" if transposed else "Conv", [x, w], kernel_shape=k, strides=stride,
                       pads=pad + pad, **extra)

    def bn(self, x, c, relu=True):
        names = [self.weight(f"bn{self.n + 1}_{p}", [c]) for p in ("scale", "bias", "mean", "var")]
        y = self.op("BatchNormalization", [x, *names])
        return self.op("Relu", [y]) if relu else y

    def save(self, path, x_shape, y, y_shape, external=False):
        x = helper.make_tensor_value_info("input", self.elem, x_shape)
        out = helper.make_tensor_value_info(y, self.elem, y_shape)
        graph = helper.make_graph(self.nodes, os.path.basename(path), [x], [out], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx_examples")
        onnx.checker.check_model(model)
        if external:
            onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                            location=os.path.basename(path) + ".data", size_threshold=1024)
        else:
            onnx.save_model(model, path)


def resnet50(path):
    n = Net()
    x = n.bn(n.conv("input", 3, 64, [7, 7], 2), 64)
    x = n.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (blocks, width) in enumerate([(3, 64), (4, 128), (6, 256), (3, 512)]):
        for b in range(blocks):
            stride = 2 if b == 0 and stage > 0 else 1
            y = n.bn(n.conv(x, cin, width, [1, 1]), width)
            y = n.bn(n.conv(y, width, width, [3, 3], stride), width)  # v1.5: the stride on the 3x3
            y = n.bn(n.conv(y, width, width * 4, [1, 1]), width * 4, relu=False)
            short = n.bn(n.conv(x, cin, width * 4, [1, 1], stride), width * 4, relu=False) if b == 0 else x
            x = n.op("Relu", [n.op("Add", [y, short])])
            cin = width * 4
    x = n.op("Flatten", [n.op("GlobalAveragePool", [x])], axis=1)
    x = n.op("Gemm", [x, n.weight("fc_w", [1000, 2048]), n.weight("fc_b", [1000])], transB=1)
    n.save(path, ["batch", 3, 224, 224], x, ["batch", 1000], external=True)


def r3d18(path):
    n = Net()
    x = n.bn(n.conv("input", 3, 64, [3, 7, 7], [1, 2, 2], pad=[1, 3, 3]), 64)
    cin = 64
    for stage, width in enumerate([64, 128, 256, 512]):
        for b in range(2):
            stride = 2 if b == 0 and stage > 0 else 1
            y = n.bn(n.conv(x, cin, width, [3, 3, 3], stride), width)
            y = n.bn(n.conv(y, width, width, [3, 3, 3]), width, relu=False)
            short = n.bn(n.conv(x, cin, width, [1, 1, 1], stride, pad=[0, 0, 0]), width, relu=False) \
                if stride != 1 or cin != width else x
            x = n.op("Relu", [n.op("Add", [y, short])])
            cin = width
    x = n.op("Flatten", [n.op("GlobalAveragePool", [x])], axis=1)
    x = n.op("Gemm", [x, n.weight("fc_w", [400, 512]), n.weight("fc_b", [400])], transB=1)
    n.save(path, ["batch", 3, 16, 112, 112], x, ["batch", 400])


def unet_fp16(path):
    n = Net(TensorProto.FLOAT16)
    skips, x, c = [], "input", 3
    for width in (32, 64, 128):
        x = n.op("Relu", [n.conv(x, c, width, [3, 3])])
        skips.append((x, width))
        x = n.op("Relu", [n.conv(x, width, width, [3, 3], 2)])
        c = width
    for skip, width in reversed(skips):
        x = n.conv(x, c, width, [2, 2], 2, pad=[0, 0], transposed=True)
        x = n.op("Concat", [x, skip], axis=1)
        x = n.op("Relu", [n.conv(x, 2 * width, width, [3, 3])])
        c = width
    x = n.conv(x, c, 1, [1, 1])
    n.save(path, ["batch", 3, 256, 256], x, ["batch", 1, 256, 256])


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    resnet50(os.path.join(out, "resnet50.onnx"))
    r3d18(os.path.join(out, "r3d18.onnx"))
    unet_fp16(os.path.join(out, "unet_fp16.onnx"))
