"""PyTorch models straight from Python: the convolution problems MIOpen receives when PyTorch runs
a model, found with forward hooks on every Conv1d/2d/3d and ConvTranspose1d/2d/3d during one
forward pass (no export). torch is optional: it is imported only when these functions are called.

What PyTorch hands MIOpen (ATen, aten/src/ATen/native/Convolution.cpp and
aten/src/ATen/native/miopen/Conv_miopen.cpp), and so what is written here:
- a Conv1d runs as a 2-D convolution with H = 1: `_convolution` calls `params.view1d_as_2d()`
  (a 1 in front of stride and dilation, a 0 in front of padding) and `view4d` on input and
  weight;
- a ConvTranspose runs as the backward data of the matching convolution
  (`miopen_convolution_transpose` calls `miopen_convolution_backward_input`): the convolution
  from the transposed one's output (x) to its input (dy), `-m conv -F 2`; in training its input's
  gradient is that convolution's forward and its weights' gradient its backward weights;
- in training, backward data only where the convolution's input needs a gradient, backward
  weights only where its weight does (ATen's `output_mask`);
- `padding="same"` with an odd total pads the input by one at the end first
  (`_convolution_mode`), and a padding_mode other than "zeros" pads the input explicitly and the
  convolution pads nothing (`_ConvNd._conv_forward`);
- the data type is the convolution's output's: FP16/BF16 under autocast or for a half model;
- NHWC (NDHWC) where the input or the weight is channels_last (channels_last_3d), as ATen's
  `miopen_conv_suggest_memory_format` decides from `suggest_memory_format()` (ATen hands MIOpen
  NHWC only with PYTORCH_MIOPEN_SUGGEST_NHWC=1 in the versions that read that variable).
"""

from ._native import TuneinferError

INSTALL = (
    "tuneinfer.problems_from_torch needs PyTorch, which is not installed: pip install torch "
    "(a CPU build is enough: pip install torch --index-url https://download.pytorch.org/whl/cpu)"
)

_COMMAND = {"float32": "conv", "float16": "convfp16", "bfloat16": "convbfp16"}


def _torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError(INSTALL) from e
    return torch


def _error(message, code):
    error = TuneinferError(message)
    error.code = code
    error.index = None
    return error


def _strides_like_channels_last(sizes, strides):
    """c10's is_channels_last_strides_2d/3d (c10/core/MemoryFormat.h) in Python: the strides
    order C fastest, then W, H (D), N; ambiguous size-1 cases count as NCHW."""
    rank = len(sizes)
    if rank not in (4, 5) or strides[1] == 0:
        return False
    order = [1, 3, 2, 0] if rank == 4 else [1, 4, 3, 2, 0]
    least = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < least:
            return False
        if d == 0 and least == strides[1]:
            return False
        least = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


class _Call:
    """One convolution call as a hook saw it."""

    def __init__(self, name, module, x, out, torch):
        self.name = name
        self.transposed = isinstance(module, torch.nn.modules.conv._ConvTransposeNd)
        self.x = tuple(x.shape)
        self.out = tuple(out.shape)
        self.weight = tuple(module.weight.shape)
        self.dtype = str(out.dtype).replace("torch.", "")
        self.x_grad = bool(x.requires_grad)
        self.w_grad = bool(module.weight.requires_grad)
        self.nhwc = _strides_like_channels_last(x.shape, x.stride()) or _strides_like_channels_last(
            module.weight.shape, module.weight.stride()
        )
        self.groups = module.groups
        self.kernel = tuple(module.kernel_size)
        self.stride = tuple(module.stride)
        self.dilation = tuple(module.dilation)
        self.padding = module.padding
        self.padding_mode = module.padding_mode
        self.n = self.x[0]

    def axes(self):
        """(input, filter, pad, stride, dilation) per spatial axis of the convolution MIOpen runs,
        and its N, C, K."""
        spatial = len(self.kernel)
        if self.transposed:
            # The matching convolution: from the transposed one's output to its input.
            sizes = list(self.out[2:])
            pads = list(self.padding)
            n, c, k = self.out[0], self.out[1], self.weight[0]
        else:
            sizes = list(self.x[2:])
            n, c, k = self.x[0], self.x[1], self.weight[0]
            if isinstance(self.padding, str):
                pads = []
                for i in range(spatial):
                    total = 0 if self.padding == "valid" else self.dilation[i] * (self.kernel[i] - 1)
                    left = total // 2
                    if self.padding_mode != "zeros":
                        sizes[i] += total
                        left = 0
                    else:
                        sizes[i] += total - 2 * left
                    pads.append(left)
            elif self.padding_mode != "zeros":
                sizes = [s + 2 * p for s, p in zip(sizes, self.padding)]
                pads = [0] * spatial
            else:
                pads = list(self.padding)
        axes = [(sizes[i], self.kernel[i], pads[i], self.stride[i], self.dilation[i]) for i in range(spatial)]
        if spatial == 1:
            axes.insert(0, (1, 1, 0, 1, 1))  # view1d_as_2d
        return n, c, k, axes

    def line(self, n, direction):
        """The MIOpenDriver line, in MIOpen's log order (`ConvArgsForMIOpenDriver`)."""
        try:
            command = _COMMAND[self.dtype]
        except KeyError:
            raise _error(
                f"module '{self.name}': a {self.dtype} convolution (MIOpen's: float32, float16, bfloat16)", 5
            ) from None
        _, c, k, axes = self.axes()
        three = len(axes) == 3
        d, h, w = (axes[0], axes[1], axes[2]) if three else (None, axes[0], axes[1])
        s = f"{command} -n {n} -c {c}"
        s += f" --in_d {d[0]}" if three else ""
        s += f" -H {h[0]} -W {w[0]} -k {k}"
        s += f" --fil_d {d[1]}" if three else ""
        s += f" -y {h[1]} -x {w[1]}"
        s += f" --pad_d {d[2]}" if three else ""
        s += f" -p {h[2]} -q {w[2]}"
        s += f" --conv_stride_d {d[3]}" if three else ""
        s += f" -u {h[3]} -v {w[3]}"
        s += f" --dilation_d {d[4]}" if three else ""
        s += f" -l {h[4]} -j {w[4]}"
        s += " --spatial_dim 3" if three else ""
        if self.nhwc:
            layout = "NDHWC" if three else "NHWC"
            s += f" --in_layout {layout} --fil_layout {layout} --out_layout {layout}"
        return s + f" -m conv -g {self.groups} -F {direction} -t 1"

    def directions(self, training):
        """(pass, MIOpen direction) pairs: pass 0 forward, 1 backward data, 2 backward weights."""
        if self.transposed:
            d = [(0, 2)]
            if training and self.x_grad:
                d.append((1, 1))
            if training and self.w_grad:
                d.append((2, 4))
            return d
        d = [(0, 1)]
        if training and self.x_grad:
            d.append((1, 2))
        if training and self.w_grad:
            d.append((2, 4))
        return d


def _record(torch, model, example_inputs, training):
    kinds = (torch.nn.modules.conv._ConvNd,)
    names = {m: n for n, m in model.named_modules()}
    calls = []

    def hook(module, inputs, output):
        x = inputs[0] if inputs else None
        if not isinstance(x, torch.Tensor) or not isinstance(output, torch.Tensor):
            raise _error(f"module '{names.get(module, '?')}': called without a tensor input", 5)
        calls.append(_Call(names.get(module, "?"), module, x, output, torch))

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, kinds)]
    if not handles:
        raise _error("the model has no Conv1d/2d/3d or ConvTranspose1d/2d/3d module", 5)
    try:
        with torch.enable_grad() if training else torch.no_grad():
            if isinstance(example_inputs, dict):
                model(**example_inputs)
            elif isinstance(example_inputs, (tuple, list)):
                model(*example_inputs)
            else:
                model(example_inputs)
    finally:
        for h in handles:
            h.remove()
    return calls


def _first_batch(torch, value):
    if isinstance(value, torch.Tensor):
        return value.shape[0] if value.dim() >= 1 else None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else []
    for v in items:
        b = _first_batch(torch, v)
        if b is not None:
            return b
    return None


def _doubled(torch, value):
    if isinstance(value, torch.Tensor):
        return torch.cat([value, value], 0) if value.dim() >= 1 else value
    if isinstance(value, dict):
        return {k: _doubled(torch, v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_doubled(torch, v) for v in value)
    return value


def problems_from_torch(model, example_inputs, training=False, batch=None, layout=None):
    """The distinct convolution problems (MIOpenDriver lines, as problems_from_onnx gives them)
    that MIOpen receives when PyTorch runs `model` on `example_inputs` (a tensor, a tuple or list
    of positional arguments, or a dict of keyword arguments): one forward pass with hooks on every
    Conv and ConvTranspose module, in the model's current mode (call model.train() first for
    branches that only run in training). `training=True`: the forward pass runs with gradients,
    and the backward problems PyTorch runs are added. `batch`: the problems at that batch size;
    each convolution's N is scaled from the examples' (the first tensor's first dimension, two
    passes: at that batch and twice it), so a convolution that sees 2 x the batch gets
    2 x `batch`; one whose N does not follow the batch keeps it; any other is refused.

    Lines come forward problems first (in call order), then backward data, then backward
    weights. `layout`: None, each convolution's as its tensors' memory format says (NHWC where
    the input or the weight is channels-last, as ATen hands MIOpen with
    PYTORCH_MIOPEN_SUGGEST_NHWC=1); "NCHW", every one NCHW (ATen without it).
    Raises ImportError (saying what to install) without torch; TuneinferError (`.code`
    5) for a convolution MIOpen does not run (float64) or a batch that cannot be scaled."""
    if layout not in (None, "NCHW"):
        raise _error(f"layout {layout!r}: None (the tensors' memory format) or 'NCHW'", 2)
    torch = _torch()
    calls = _record(torch, model, example_inputs, training)
    if layout == "NCHW":
        for c in calls:
            c.nhwc = False
    ns = [c.n for c in calls]
    if batch is not None:
        batch = int(batch)
        if batch < 1:
            raise _error(f"batch {batch}: must be positive", 2)
        b0 = _first_batch(torch, example_inputs)
        if b0 is None or b0 < 1:
            raise _error("batch: the example inputs have no tensor with a batch dimension", 2)
        if batch != b0:
            again = _record(torch, model, _doubled(torch, example_inputs), training)
            if [c.name for c in again] != [c.name for c in calls]:
                raise _error(
                    "batch: the model runs other convolutions at twice the examples' batch "
                    "(data-dependent control flow); give example inputs of the batch wanted instead",
                    5,
                )
            ns = []
            for c, c2 in zip(calls, again):
                if c2.n == c.n:
                    ns.append(c.n)  # not the batch
                elif c2.n == 2 * c.n and c.n % b0 == 0:
                    ns.append(c.n // b0 * batch)
                else:
                    raise _error(
                        f"module '{c.name}': N {c.n} at batch {b0} and {c2.n} at batch {2 * b0} "
                        f"does not scale with the batch; give example inputs of the batch wanted instead",
                        5,
                    )
    seen = set()
    blocks = ([], [], [])
    for c, n in zip(calls, ns):
        for block, direction in c.directions(training):
            line = c.line(n, direction)
            if line not in seen:
                seen.add(line)
                blocks[block].append(line)
    return blocks[0] + blocks[1] + blocks[2]
