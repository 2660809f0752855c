#!/usr/bin/env python3
"""The README's table of supported GPUs x solvers, generated from the models themselves.

Every tuneinfer model in weights/ (`{arch}_{solver}.json` beside its `.safetensors`) is one row,
with the held-out validation figures its trainer stored in the JSON's "validation" field (null
for a model trained with nothing held out); MIOpen's own KernelTuningNet models, which MIOpen
installs and tuneinfer runs (not part of this repository), follow as fixed rows.

    tools/support_table.py            # print the table (markdown)
    tools/support_table.py --write    # replace the table between the README's markers
    tools/support_table.py --check    # exit 1 when the README's table differs from weights/

The table sits in README.md between `<!-- support-table:begin -->` and
`<!-- support-table:end -->`.
"""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BEGIN = "<!-- support-table:begin (tools/support_table.py --write) -->"
END = "<!-- support-table:end -->"

# GPUs of a MIOpen database name (`{arch}_{CUs}`, above 64 CUs `{arch}{CUs in hex}`): a model of
# ours serves the CU count of the database it was trained on, and every GPU of its arch with no
# model of its own (the closest CU count, or the GPU's own count where the GPU is an input:
# `tuneinfer info --arch GPU`); MIOpen's serve every CU count.
GPUS = {
    "gfx900_56": "Vega 56",
    "gfx906_60": "MI50, Radeon VII",
    "gfx906_64": "MI60",
    "gfx908": "MI100",
    "gfx90878": "MI100",
    "gfx90a68": "MI210; MI250X `gfx90a6e` too",
    "gfx90a": "MI210, MI250X",
    "gfx942": "MI300X, MI300A",
    "gfx942130": "MI300X; MI300A `gfx942e4`, MI308X `gfx94250` too",
    "gfx1030_36": "Radeon RX 6000, every RDNA2 CU count",
}

# The database name of an arch's usual GPU (the CU count `--arch ARCH` alone stands for).
USUAL = {"gfx908": "gfx90878", "gfx90a": "gfx90a68", "gfx942": "gfx942130"}

# MIOpen's KTN models (installed by MIOpen in share/miopen/db; here ../shared/miopen/models):
# (arch, solver). tuneinfer reproduces their embedded test vectors and MIOpen's documented
# answers; MIOpen publishes no held-out figures for them.
MIOPEN_MODELS = [
    ("gfx908", "ConvAsm1x1U"),
    ("gfx90a", "ConvHipImplicitGemmGroup{Fwd,Bwd,Wrw}Xdlops"),
    ("gfx942", "ConvHipImplicitGemmGroup{Fwd,Bwd,Wrw}Xdlops"),
]


def miopen_model_serves(plain, solver):
    """Whether MIOpen's own model of the plain arch serves the solver first (its names may be
    written with braces: ConvHipImplicitGemmGroup{Fwd,Bwd,Wrw}Xdlops)."""
    for a, s in MIOPEN_MODELS:
        if a != plain:
            continue
        if "{" in s:
            head, rest = s.split("{", 1)
            options, tail = rest.split("}", 1)
            if any(solver == head + o + tail for o in options.split(",")):
                return True
        elif s == solver:
            return True
    return False


def base_arch(arch):
    """gfx906_64 -> gfx906; gfx942130 -> gfx942; gfx90a68 -> gfx90a."""
    name = arch.split("_")[0]
    for known in ("gfx1030", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942"):
        if name.startswith(known):
            return known
    return name


def method(validation, prefix):
    for m in validation.get("methods", []):
        if m.get("kind") is None and m.get("method", "").startswith(prefix):
            return m
    return None


def pct(m, field):
    return "-" if m is None or m.get(field) is None else f"{m[field]:.1f}"


def figures(v):
    """The figure columns of a validation table (None: trained with nothing held out)."""
    if v is None:
        return ["none held out (the recipe's: [docs/training.md](docs/training.md))", "-", "-", "-", "-"]
    greedy = method(v, "model, greedy")
    beam = method(v, "model, beam")
    nn = method(v, "nearest neighbour")
    default = method(v, "MIOpen static default")
    mix = method(v, "default where valid")
    problems = (beam or greedy or {}).get("problems", v.get("problems"))
    shown_default = pct(default, "exact_pct")
    if mix and beam and default and mix["exact_pct"] > max(beam["exact_pct"], default["exact_pct"]):
        # userdb's mixed policy (docs/userdb.md): the default where valid, else the model.
        shown_default += f"; where valid, else the model: {mix['exact_pct']:.1f} (what `userdb` writes)"
    return [
        f"{problems:,}" if isinstance(problems, int) else "-",
        f"{pct(greedy, 'exact_pct')} / {pct(beam, 'exact_pct')}",
        pct(beam, "top16_pct"),
        pct(nn, "exact_pct"),
        shown_default,
    ]


def rows():
    out = []
    for path in sorted((ROOT / "weights").glob("*.json")):
        meta = json.loads(path.read_text())
        if "arch" not in meta or "solver" not in meta:
            continue
        arch, solver = meta["arch"], meta["solver"]
        training = meta.get("training") or {}
        if path.name.endswith(".neighbour.json"):
            # A cell served without a network (docs/methods.md): the nearest tuned neighbour of
            # MIOpen's system perf db, or MIOpen's default, whichever its figures chose.
            db = (training.get("perf_db") or "").split(".")[0]
            gpu = GPUS.get(db) or GPUS.get(arch, "")
            v = meta.get("metrics") or {}
            nn = method(v, "nearest neighbour")
            default = method(v, "MIOpen static default")
            # A record beside a model of the same GPU serves where MIOpen's KTN of the arch is
            # found first (stage 2 of models::resolve): the problems the KTN refuses.
            shadowed = (ROOT / "weights" / path.name.replace(".neighbour.json", ".safetensors")).exists()
            served = (f"beside MIOpen's {base_arch(arch)} KTN where that serves (MIOpen's models installed, e.g. MI300A): "
                      f"the nearest tuned neighbour for the problems the KTN refuses (figures from `{training.get('perf_db')}`)"
                      if shadowed else
                      f"no network: the nearest tuned neighbour of MIOpen's system perf db (figures from `{training.get('perf_db')}`)")
            out.append(
                (base_arch(arch), arch, solver)
                + (f"`{arch}` ({gpu})" if gpu else f"`{arch}`", f"`{solver}`", served)
                + (f"{(nn or {}).get('problems', 0):,}", "-", pct(nn, "top16_pct"), pct(nn, "exact_pct"), pct(default, "exact_pct"))
            )
            continue
        dbs = [training.get("perf_db")] + list(training.get("older_perf_dbs") or [])
        trained = " + ".join(f"`{d}`" for d in dbs if d)
        others = [o.get("gpu") for o in training.get("other_gpu_perf_dbs") or [] if o.get("used")]
        if others:
            # Trained across GPUs (`train --other-gpu-perf-db`): the GPU is an input.
            trained += ", with " + ", ".join(f"`{g}`" for g in others) + "'s rows (the GPU an input)"
        db = (training.get("perf_db") or "").split(".")[0]
        gpu = GPUS.get(db) or GPUS.get(arch, "")
        shown = f"`{arch}`, `{db}`" if db and db != arch else f"`{arch}`"
        # The plain arch is its usual GPU (`--arch gfx942` is `gfx942130`) unless MIOpen's own
        # model of the arch serves the solver first (gfx908's ConvAsm1x1U).
        plain = base_arch(arch)
        if db == arch and USUAL.get(plain) == db and not miopen_model_serves(plain, solver):
            shown = f"`{plain}`, `{db}`"
        members = meta.get("members")
        model = f"tuneinfer's, {members} member{'s' if members != 1 else ''}, {trained}"
        by_gpu = meta.get("validation_by_gpu") or {}
        if by_gpu:
            model = f"tuneinfer's across GPUs, {members} member{'s' if members != 1 else ''}, {trained}"
        out.append(
            (base_arch(arch), arch, solver)
            + (f"{shown} ({gpu})" if gpu else shown, f"`{solver}`", model)
            + tuple(figures(meta.get("validation")))
        )
        # The GPUs of its pool it was validated on, which it serves too (models::resolve stage 3).
        for member, v in sorted(by_gpu.items()):
            if (ROOT / "weights" / (member + path.name[len(arch):])).exists():
                continue  # the GPU's own model serves it (stage 1 of models::resolve)
            plain = base_arch(member)
            shown = f"`{plain}`, `{member}`" if USUAL.get(plain) == member else f"`{member}`"
            mgpu = GPUS.get(member, "")
            out.append(
                (plain, member, solver)
                + (f"{shown} ({mgpu})" if mgpu else shown, f"`{solver}`",
                   f"{path.stem}, across GPUs (its figures on `{member}`'s held-out problems)")
                + tuple(figures(v))
            )
    for arch, solver in MIOPEN_MODELS:
        gpu = GPUS.get(arch, "")
        out.append(
            (arch, arch, solver)
            + (f"`{arch}` ({gpu})", f"`{solver}`", "MIOpen's KTN, installed with MIOpen")
            + ("none published (MIOpen's test vectors reproduced)", "-", "-", "-", "-")
        )
    order = {a: i for i, a in enumerate(["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030"])}
    out.sort(key=lambda r: (order.get(r[0], 99), r[1], r[2]))
    return [r[3:] for r in out]


def table():
    head = (
        "| GPU (`--arch`) | solver | model, trained on | held-out problems | exact % greedy / beam 16 "
        "| top-16 % | nearest neighbour exact % | MIOpen default exact % |"
    )
    lines = [head, "|" + "---|" * 8]
    lines += ["| " + " | ".join(r) + " |" for r in rows()]
    return "\n".join(lines)


def replaced(text):
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit(f"README.md has no {BEGIN} ... {END} markers")
    return text[: start + len(BEGIN)] + "\n" + table() + "\n" + text[end:]


def main():
    arg = sys.argv[1] if len(sys.argv) > 1 else ""
    if arg == "--write":
        README.write_text(replaced(README.read_text()))
    elif arg == "--check":
        text = README.read_text()
        if replaced(text) != text:
            print("README.md's support table differs from weights/: run tools/support_table.py --write")
            sys.exit(1)
        print("README.md's support table matches weights/")
    elif arg in ("", "--print"):
        print(table())
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
