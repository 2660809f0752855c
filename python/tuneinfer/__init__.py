"""tuneinfer: predicts MIOpen convolution kernel tuning parameters (the CLI's answers).

    import tuneinfer
    p = tuneinfer.Predictor("gfx906", "ConvAsm1x1U")          # the CLI's default model
    p.predict("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F")
    # [Prediction(rank=1, config='2,8,4,16,1,4,2,2', score=..., source='model')]
    p.predict("convfp16 -n 256 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 -F 1", beam=4, top=2)
    p.predict_batch([key1, key2], errors="return")              # failures as exceptions in place

    lines = tuneinfer.problems_from_onnx("resnet50.onnx", batch=32, training=True)
    p.predict_batch(lines, errors="return")                     # an ONNX network's problems
    tuneinfer.userdb("gfx942130", onnx="resnet50.onnx", batch=32, training=True)

    lines = tuneinfer.problems_from_torch(model, torch.randn(2, 3, 224, 224), batch=32)
    tuneinfer.userdb(arch="gfx942130", model=model, example_inputs=x, batch=32, training=True)

Failures raise TuneinferError (also tuneinfer.Error) with the library's message; `.code` is the
CLI's exit code for it. The GIL is released while a model loads and while it predicts.
"""

from ._native import ABI_VERSION, Prediction, Predictor, TuneinferError, __version__, problems_from_onnx, run_cli
from ._torch import problems_from_torch

Error = TuneinferError

__all__ = [
    "ABI_VERSION",
    "Error",
    "Prediction",
    "Predictor",
    "TuneinferError",
    "__version__",
    "problems_from_onnx",
    "problems_from_torch",
    "userdb",
]


def userdb(
    arch,
    onnx=None,
    input=None,
    batch=None,
    training=False,
    precision=None,
    layout=None,
    model=None,
    example_inputs=None,
    **options,
):
    """Writes MIOpen's user perf database as `tuneinfer userdb` does (the same code, its summary
    on stderr): the problems of the ONNX network `onnx` (with `batch`, `training`, `precision`
    "fp32"|"fp16"|"bf16", `layout` "NCHW"|"NHWC", as problems_from_onnx), of the live PyTorch
    `model` run on `example_inputs` (with `batch` and `training`, as problems_from_torch: the
    data type and layout come from the model), or of the log or problem list `input`. Other
    options are the CLI's, underscores for dashes: out="udb", system_db="none",
    miopen_version="HIP.3_2_0_", dry_run=True, device="cpu" ...
    Raises TuneinferError (`.code`: the CLI's exit code) when it fails."""
    if model is not None:
        if onnx is not None or input is not None or precision is not None or layout is not None:
            error = TuneinferError(
                "userdb: model= takes its problems from the live model: give no onnx=, input=, precision= or "
                "layout= with it (the data type and layout are the model's: autocast or .half(), channels_last)"
            )
            error.code = 2
            error.index = None
            raise error
        import os
        import tempfile

        lines = problems_from_torch(model, example_inputs, training=training, batch=batch)
        handle, path = tempfile.mkstemp(prefix="tuneinfer-torch-", suffix=".txt")
        try:
            with os.fdopen(handle, "w") as f:
                f.write("\n".join(lines) + "\n")
            return userdb(arch, input=path, **options)
        finally:
            os.unlink(path)
    args = ["userdb", "--arch", str(arch)]
    if onnx is not None:
        args += ["--onnx", str(onnx)]
    if input is not None:
        args += ["--input", str(input)]
    if batch is not None:
        args += ["--batch", str(batch)]
    if training:
        args.append("--training")
    if precision is not None:
        args += ["--onnx-precision", str(precision)]
    if layout is not None:
        args += ["--layout", str(layout)]
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is not False and value is not None:
            args += [flag, str(value)]
    code = run_cli(args)
    if code != 0:
        error = TuneinferError(f"tuneinfer {' '.join(args)}: exit code {code} (the message is on stderr)")
        error.code = code
        error.index = None
        raise error
