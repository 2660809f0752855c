"""tuneinfer.problems_from_onnx and tuneinfer.userdb against the CLI, on networks built with
ONNX's own Python helpers (`pip install onnx`; skipped without it).

The expected lines are derived by hand (ONNX's conv arithmetic, MIOpen's log form), and the
function's answers are the CLI's `tuneinfer problems --onnx` output, line for line.
"""

import os
import pathlib
import subprocess
import warnings

import pytest

import tuneinfer

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cli_binary():
    if os.environ.get("TUNEINFER_BIN"):
        return os.environ["TUNEINFER_BIN"]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    binary = target / "release" / "tuneinfer"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--release", "--bin", "tuneinfer"], cwd=ROOT, check=True)
    return str(binary)


def model(path, batch="N", pads=(1, 1, 1, 1)):
    """x (batch, 3, 32, 32) -> Conv 8x3x3x3 stride 2 -> Relu -> Conv 16x8x1x1."""
    w1 = helper.make_tensor("w1", TensorProto.FLOAT, [8, 3, 3, 3], [0.0] * 216)
    w2 = helper.make_tensor("w2", TensorProto.FLOAT, [16, 8, 1, 1], [0.0] * 128)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="c1", strides=[2, 2], pads=list(pads)),
        helper.make_node("Relu", ["c1"], ["r1"], name="r1"),
        helper.make_node("Conv", ["r1", "w2"], ["y"], name="c2"),
    ]
    graph = helper.make_graph(
        nodes,
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [w1, w2],
    )
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


# (32 + 2 - 3) / 2 + 1 = 16
F1 = "conv -n 4 -c 3 -H 32 -W 32 -k 8 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m conv -g 1 -F 1 -t 1"
F2 = "conv -n 4 -c 8 -H 16 -W 16 -k 16 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1"


def test_problems_from_onnx_gives_the_lines_derived_by_hand(tmp_path):
    path = model(tmp_path / "m.onnx")
    assert tuneinfer.problems_from_onnx(path, batch=4) == [F1, F2]
    training = tuneinfer.problems_from_onnx(path, batch=4, training=True)
    # No backward data for the first convolution: its input is the network's.
    assert training == [F1, F2, F2.replace("-F 1", "-F 2"), F1.replace("-F 1", "-F 4"), F2.replace("-F 1", "-F 4")]
    half = tuneinfer.problems_from_onnx(path, batch=4, precision="fp16", layout="NHWC")
    assert half[0] == F1.replace("conv ", "convfp16 ", 1).replace(
        "-j 1 -m", "-j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m"
    )


def test_the_cli_prints_the_same(tmp_path):
    path = model(tmp_path / "m.onnx")
    for kwargs, words in [
        ({"batch": 4}, ["--batch", "4"]),
        ({"batch": 2, "training": True, "precision": "bf16"}, ["--batch", "2", "--training", "--precision", "bf16"]),
    ]:
        out = subprocess.run(
            [cli_binary(), "problems", "--onnx", path] + words, capture_output=True, text=True, check=True
        )
        assert tuneinfer.problems_from_onnx(path, **kwargs) == out.stdout.splitlines()


def test_errors_carry_the_cli_exit_codes(tmp_path):
    path = model(tmp_path / "m.onnx")
    with pytest.raises(tuneinfer.TuneinferError) as e:
        tuneinfer.problems_from_onnx(path)  # symbolic batch
    assert e.value.code == 2 and "batch" in str(e.value)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(tuneinfer.TuneinferError) as e:
        tuneinfer.problems_from_onnx(str(bad), batch=1)
    assert e.value.code == 4
    with pytest.raises(tuneinfer.TuneinferError) as e:
        tuneinfer.problems_from_onnx(str(tmp_path / "missing.onnx"), batch=1)
    assert e.value.code == 3
    with pytest.raises(tuneinfer.TuneinferError) as e:
        tuneinfer.problems_from_onnx(path, batch=1, precision="fp64")
    assert e.value.code == 2


def test_asymmetric_padding_is_a_warning(tmp_path):
    # Pads begin 0 / end 1: the input is padded to 33 first, the convolution pads 0.
    path = model(tmp_path / "m.onnx", batch=4, pads=(0, 0, 1, 1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lines = tuneinfer.problems_from_onnx(path)
    assert lines[0] == F1.replace("-H 32 -W 32", "-H 33 -W 33").replace("-p 1 -q 1", "-p 0 -q 0")
    assert any("asymmetric" in str(w.message) for w in caught)


def test_userdb_writes_the_networks_entries(tmp_path):
    path = model(tmp_path / "m.onnx", batch=4)
    out = tmp_path / "udb"
    tuneinfer.userdb(
        "gfx906_60", onnx=path, out=out, system_db="none", miopen_version="HIP.3_2_0_test", device="cpu"
    )
    db = out / "gfx906_60.HIP.3_2_0_test.udb.txt"
    text = db.read_text()
    # The 1x1 convolution's key in MIOpen's 24-field form, field for field as docs/cli.md's
    # example 2x2048x7x7x1x1x1x1x1024x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xW (C 2048, 7x7, a 1x1
    # filter, K 1024, N 128, stride 2) is laid out: C 8, 16x16, K 16, N 4, stride 1, forward.
    assert "\n2x8x16x16x1x1x1x1x16x4x0x0x0x1x1x0x1x1x0x0x1xNCHWxFP32xF=" in "\n" + text
    with pytest.raises(tuneinfer.TuneinferError) as e:
        tuneinfer.userdb("gfx906_60", onnx=str(tmp_path / "missing.onnx"), out=out, system_db="none")
    assert e.value.code == 3
