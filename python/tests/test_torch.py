"""tuneinfer.problems_from_torch and tuneinfer.userdb(model=...) on small live PyTorch models.

The expected lines are derived by hand from the convolution arithmetic and from what ATen hands
MIOpen (aten/src/ATen/native/Convolution.cpp: Conv1d as 2-D with H = 1, `view1d_as_2d`;
aten/src/ATen/native/miopen/Conv_miopen.cpp: a transposed convolution is the backward data of
the matching convolution), in MIOpen's log form. Where torch's ONNX exporter runs, the lines are
also compared with problems_from_onnx on the exported model.

torch is optional: without it these tests are skipped, saying so (a CPU build is enough:
pip install torch --index-url https://download.pytorch.org/whl/cpu); the first test checks that
the package still imports and says what to install.
"""

import sys

import pytest

import tuneinfer


def test_without_torch_the_package_imports_and_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    with pytest.raises(ImportError) as e:
        tuneinfer.problems_from_torch(object(), None)
    assert "pip install torch" in str(e.value)


try:
    import torch

    nn = torch.nn
except ImportError:
    torch = nn = None

needs_torch = pytest.mark.skipif(
    torch is None, reason="torch is not installed: pip install torch (a CPU build is enough); live-model tests skipped"
)

# Conv 3->8 3x3 stride 2 pad 1 on 32x32: (32 + 2 - 3) // 2 + 1 = 16; then 1x1 8->16.
F1 = "conv -n {n} -c 3 -H 32 -W 32 -k 8 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m conv -g 1 -F {d} -t 1"
F2 = "conv -n {n} -c 8 -H 16 -W 16 -k 16 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F {d} -t 1"


def small():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 1))


@needs_torch
def test_forward_and_training_lines_derived_by_hand():
    x = torch.randn(4, 3, 32, 32)
    assert tuneinfer.problems_from_torch(small(), x) == [F1.format(n=4, d=1), F2.format(n=4, d=1)]
    # Training: no backward data for the first convolution (its input needs no gradient).
    assert tuneinfer.problems_from_torch(small(), x, training=True) == [
        F1.format(n=4, d=1),
        F2.format(n=4, d=1),
        F2.format(n=4, d=2),
        F1.format(n=4, d=4),
        F2.format(n=4, d=4),
    ]
    # A frozen first convolution: no backward weights for it, and nothing before the second
    # needs a gradient, so no backward data for the second either.
    model = small()
    model[0].weight.requires_grad_(False)
    model[0].bias.requires_grad_(False)
    assert tuneinfer.problems_from_torch(model, x, training=True) == [
        F1.format(n=4, d=1),
        F2.format(n=4, d=1),
        F2.format(n=4, d=4),
    ]


@needs_torch
def test_batch_scaling_follows_what_each_convolution_sees():
    class Sources(nn.Module):
        """A decoder on batch x sources (as ConvTasNet's): x.view(2B, 4, 8, 8)."""

        def __init__(self):
            super().__init__()
            self.enc = nn.Conv2d(3, 8, 1)
            self.dec = nn.Conv2d(4, 4, 3, padding=1)

        def forward(self, x):
            y = self.enc(x)
            return self.dec(y.reshape(y.shape[0] * 2, 4, 8, 8))

    x = torch.randn(2, 3, 8, 8)
    lines = tuneinfer.problems_from_torch(Sources(), x, batch=32)
    assert lines == [
        "conv -n 32 -c 3 -H 8 -W 8 -k 8 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1",
        "conv -n 64 -c 4 -H 8 -W 8 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1",
    ]


@needs_torch
def test_conv1d_is_two_d_with_h_1_and_transposed_is_backward_data():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv1d(80, 256, 3, stride=2, padding=1),  # (3000 + 2 - 3) // 2 + 1 = 1500
        nn.ConvTranspose1d(256, 64, 4, stride=2, padding=1),  # 2 * 1499 + 4 - 2 = 3000
    )
    lines = tuneinfer.problems_from_torch(model, torch.randn(2, 80, 3000), training=True)
    conv = "conv -n 2 -c 80 -H 1 -W 3000 -k 256 -y 1 -x 3 -p 0 -q 1 -u 1 -v 2 -l 1 -j 1 -m conv -g 1 -F {} -t 1"
    # The transposed one: the convolution from its 64 x 3000 output to its 256 x 1500 input.
    trans = "conv -n 2 -c 64 -H 1 -W 3000 -k 256 -y 1 -x 4 -p 0 -q 1 -u 1 -v 2 -l 1 -j 1 -m conv -g 1 -F {} -t 1"
    assert lines == [conv.format(1), trans.format(2), trans.format(1), conv.format(4), trans.format(4)]


@needs_torch
def test_same_padding_3d_groups_and_padding_modes():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(4, 8, 4, padding="same"),  # total 3: input 16 + 1, pad 1
        nn.Conv2d(8, 8, 3, padding=1, groups=8, padding_mode="reflect"),  # "same" gave 16: 16 + 2, pad 0
    )
    assert tuneinfer.problems_from_torch(model, torch.randn(1, 4, 16, 16)) == [
        "conv -n 1 -c 4 -H 17 -W 17 -k 8 -y 4 -x 4 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1",
        "conv -n 1 -c 8 -H 18 -W 18 -k 8 -y 3 -x 3 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 8 -F 1 -t 1",
    ]
    three = nn.Conv3d(3, 16, (3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3))
    assert tuneinfer.problems_from_torch(three, torch.randn(1, 3, 8, 32, 32)) == [
        "conv -n 1 -c 3 --in_d 8 -H 32 -W 32 -k 16 --fil_d 3 -y 7 -x 7 --pad_d 1 -p 3 -q 3 --conv_stride_d 1 "
        "-u 2 -v 2 --dilation_d 1 -l 1 -j 1 --spatial_dim 3 -m conv -g 1 -F 1 -t 1"
    ]


@needs_torch
def test_bf16_from_autocast_and_the_dtype_and_nhwc_from_channels_last():
    x = torch.randn(4, 3, 32, 32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        lines = tuneinfer.problems_from_torch(small(), x)
    assert lines == [F1.format(n=4, d=1).replace("conv ", "convbfp16 ", 1), F2.format(n=4, d=1).replace("conv ", "convbfp16 ", 1)]
    lines = tuneinfer.problems_from_torch(small().to(torch.bfloat16), x.to(torch.bfloat16))
    assert lines[0].startswith("convbfp16 -n 4 -c 3")
    nhwc = "-j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m"
    model = small().to(memory_format=torch.channels_last)
    lines = tuneinfer.problems_from_torch(model, x.to(memory_format=torch.channels_last))
    assert lines[0] == F1.format(n=4, d=1).replace("-j 1 -m", nhwc)
    # layout="NCHW": as ATen without PYTORCH_MIOPEN_SUGGEST_NHWC.
    lines = tuneinfer.problems_from_torch(model, x.to(memory_format=torch.channels_last), layout="NCHW")
    assert lines[0] == F1.format(n=4, d=1)
    # A permute back from NHWC leaves channels-last strides (as ConvNeXt's blocks do): NHWC.
    conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
    lines = tuneinfer.problems_from_torch(conv, x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2))
    assert lines == [F1.format(n=4, d=1).replace("-j 1 -m", nhwc)]
    with pytest.raises(tuneinfer.TuneinferError) as e:
        tuneinfer.problems_from_torch(small().double(), x.double())
    assert e.value.code == 5 and "float64" in str(e.value)


@needs_torch
def test_the_onnx_export_gives_the_same_lines(tmp_path):
    pytest.importorskip("onnx", reason="onnx is not installed (pip install onnx)")
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.Conv2d(16, 16, 3, padding=2, dilation=2, groups=4),
        nn.Conv2d(16, 32, 1),
    ).eval()
    x = torch.randn(1, 3, 64, 64)
    compared = 0
    for dynamo in (False, True):
        path = tmp_path / f"m{int(dynamo)}.onnx"
        try:
            if dynamo:  # torch.export: its batch a symbol, its stated dims SymPy text
                torch.onnx.export(model, (x,), str(path), dynamo=True, dynamic_shapes=({0: torch.export.Dim("batch")},))
            else:  # TorchScript
                torch.onnx.export(
                    model, (x,), str(path), dynamo=False, dynamic_axes={"x": {0: "batch"}}, input_names=["x"]
                )
        except Exception:  # noqa: BLE001 - the exporter's own dependencies (onnxscript for torch.export)
            continue
        compared += 1
        for training in (False, True):
            assert tuneinfer.problems_from_onnx(str(path), batch=32, training=training) == tuneinfer.problems_from_torch(
                model, x, training=training, batch=32
            ), (dynamo, training)
    if not compared:
        pytest.skip("neither ONNX exporter runs here")


@needs_torch
def test_userdb_from_a_live_model(tmp_path):
    out = tmp_path / "udb"
    tuneinfer.userdb(
        arch="gfx906_60",
        model=small(),
        example_inputs=torch.randn(4, 3, 32, 32),
        out=out,
        system_db="none",
        miopen_version="HIP.3_2_0_test",
        device="cpu",
    )
    text = (out / "gfx906_60.HIP.3_2_0_test.udb.txt").read_text()
    # The 1x1 convolution in MIOpen's 24-field key: C 8, 16x16, K 16, N 4, forward.
    assert "\n2x8x16x16x1x1x1x1x16x4x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP32xF=" in "\n" + text
    with pytest.raises(tuneinfer.TuneinferError) as e:
        tuneinfer.userdb(arch="gfx906_60", model=small(), example_inputs=torch.randn(1, 3, 8, 8), onnx="m.onnx")
    assert e.value.code == 2
