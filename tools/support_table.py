#!/usr/bin/env python3
"""The tables of supported GPUs x solvers, generated from the models themselves.

Every tuneinfer model in weights/ (`{arch}_{solver}.json` beside its `.safetensors`) is one row of
docs/support.md's table, with the held-out validation figures its trainer stored in the JSON's
"validation" field (null for a model trained with nothing held out); MIOpen's own KernelTuningNet
models, which MIOpen installs and tuneinfer runs (not part of this repository), follow as fixed
rows. The README's summary has one row per GPU, counted and summarised from the same rows.

    tools/support_table.py            # print the per-solver table (markdown)
    tools/support_table.py --summary  # print the README's one-row-per-GPU summary
    tools/support_table.py --write    # replace both between their pages' markers
    tools/support_table.py --check    # exit 1 when either page differs from weights/

The per-solver table sits in docs/support.md between `<!-- support-table:begin ... -->` and
`<!-- support-table:end -->`; the summary in README.md between
`<!-- support-summary:begin ... -->` and `<!-- support-summary:end -->`.
"""

import json
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SUPPORT = ROOT / "docs" / "support.md"
BEGIN = "<!-- support-table:begin (tools/support_table.py --write) -->"
END = "<!-- support-table:end -->"
SUMMARY_BEGIN = "<!-- support-summary:begin (tools/support_table.py --write) -->"
SUMMARY_END = "<!-- support-summary:end -->"

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


def expand(solver):
    """ConvHipImplicitGemmGroup{Fwd,Bwd,Wrw}Xdlops -> its three names; a plain name -> itself."""
    if "{" not in solver:
        return [solver]
    head, rest = solver.split("{", 1)
    options, tail = rest.split("}", 1)
    return [head + o + tail for o in options.split(",")]


def miopen_model_serves(plain, solver):
    """Whether MIOpen's own model of the plain arch serves the solver first (its names may be
    written with braces: ConvHipImplicitGemmGroup{Fwd,Bwd,Wrw}Xdlops)."""
    return any(a == plain and solver in expand(s) for a, s in MIOPEN_MODELS)


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
        # The link is relative to docs/support.md, the page the table is on.
        return ["none held out (the recipe's: [docs/training.md](training.md))", "-", "-", "-", "-"]
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


def records():
    """One dict per row of the per-solver table: `cells` (the row as printed), `gpu` (the
    database name of the GPU it serves: `gfx906_60`, `gfx90a68`), `kind` (`network`,
    `neighbour`, `beside KTN`, `KTN`), `pool` (a network's: `own`, `with other GPUs' rows`,
    `across GPUs`), `source` (the database name of the GPU whose model it is), `solver`,
    (`beside network`: a record beside tuneinfer's own network), `validation` (its held-out figures, None without), `plain` (the row serves `--arch PLAIN`)."""
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
            beside_net = (ROOT / "weights" / path.name.replace(".neighbour.json", ".safetensors")).exists()
            shadowed = beside_net and miopen_model_serves(base_arch(arch), solver)
            # A record beside tuneinfer's own network of the GPU (issue 45: the 3-D problems of
            # the non-xdlops HIP solvers, which their 2-D networks refuse).
            own_net = beside_net and not shadowed
            served = (f"beside MIOpen's {base_arch(arch)} KTN where that serves (MIOpen's models installed, e.g. MI300A): "
                      f"the nearest tuned neighbour for the problems the KTN refuses (figures from `{training.get('perf_db')}`)"
                      if shadowed else
                      f"beside tuneinfer's network: the problems the network refuses (3-D), the nearest tuned neighbour "
                      f"or MIOpen's default by the 3-D figures (from `{training.get('perf_db')}`)"
                      if own_net else
                      f"no network: the nearest tuned neighbour of MIOpen's system perf db (figures from `{training.get('perf_db')}`)")
            out.append(dict(
                key=(base_arch(arch), arch, solver),
                cells=(f"`{arch}` ({gpu})" if gpu else f"`{arch}`", f"`{solver}`", served)
                + (f"{(nn or {}).get('problems', 0):,}", "-", pct(nn, "top16_pct"), pct(nn, "exact_pct"), pct(default, "exact_pct")),
                gpu=db or arch, kind="beside KTN" if shadowed else "beside network" if own_net else "neighbour",
                pool=None, source=db or arch,
                solver=solver, validation=None, plain=None,
            ))
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
        plain = arch if db and db != arch and base_arch(arch) == arch else None
        # The plain arch is its usual GPU (`--arch gfx942` is `gfx942130`) unless MIOpen's own
        # model of the arch serves the solver first (gfx908's ConvAsm1x1U).
        base = base_arch(arch)
        if db == arch and USUAL.get(base) == db and not miopen_model_serves(base, solver):
            shown = f"`{base}`, `{db}`"
            plain = base
        members = meta.get("members")
        model = f"tuneinfer's, {members} member{'s' if members != 1 else ''}, {trained}"
        by_gpu = meta.get("validation_by_gpu") or {}
        if by_gpu:
            model = f"tuneinfer's across GPUs, {members} member{'s' if members != 1 else ''}, {trained}"
        out.append(dict(
            key=(base_arch(arch), arch, solver),
            cells=(f"{shown} ({gpu})" if gpu else shown, f"`{solver}`", model) + tuple(figures(meta.get("validation"))),
            gpu=db or arch, kind="network",
            pool="across GPUs" if by_gpu else "with other GPUs' rows" if others else "own",
            source=db or arch, solver=solver, validation=meta.get("validation"), plain=plain,
        ))
        # The GPUs of its pool it was validated on, which it serves too (models::resolve stage 3).
        for member, v in sorted(by_gpu.items()):
            if (ROOT / "weights" / (member + path.name[len(arch):])).exists():
                continue  # the GPU's own model serves it (stage 1 of models::resolve)
            mplain = base_arch(member)
            shown = f"`{mplain}`, `{member}`" if USUAL.get(mplain) == member else f"`{member}`"
            mgpu = GPUS.get(member, "")
            out.append(dict(
                key=(mplain, member, solver),
                cells=(f"{shown} ({mgpu})" if mgpu else shown, f"`{solver}`",
                       f"{path.stem}, across GPUs (its figures on `{member}`'s held-out problems)")
                + tuple(figures(v)),
                gpu=member, kind="network", pool="across GPUs", source=db or arch, solver=solver,
                validation=v, plain=mplain if USUAL.get(mplain) == member else None,
            ))
    for arch, solver in MIOPEN_MODELS:
        gpu = GPUS.get(arch, "")
        out.append(dict(
            key=(arch, arch, solver),
            cells=(f"`{arch}` ({gpu})", f"`{solver}`", "MIOpen's KTN, installed with MIOpen")
            + ("none published (MIOpen's test vectors reproduced)", "-", "-", "-", "-"),
            gpu=USUAL.get(arch, arch), kind="KTN", pool=None, source=arch, solver=solver,
            validation=None, plain=arch,
        ))
    order = {a: i for i, a in enumerate(["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030"])}
    out.sort(key=lambda r: (order.get(r["key"][0], 99), r["key"][1], r["key"][2]))
    return out


def table(recs):
    head = (
        "| GPU (`--arch`) | solver | model, trained on | held-out problems | exact % greedy / beam 16 "
        "| top-16 % | nearest neighbour exact % | MIOpen default exact % |"
    )
    lines = [head, "|" + "---|" * 8]
    lines += ["| " + " | ".join(r["cells"]) + " |" for r in recs]
    return "\n".join(lines)


def compute_units(db):
    """A database name's CU count: `gfx906_60` -> 60; above 64 CUs in hex, `gfx942130` -> 304."""
    base = base_arch(db)
    rest = db[len(base):]
    if rest.startswith("_"):
        return int(rest[1:])
    return int(rest, 16) if rest else None


def signed(x):
    return f"{x:+.1f}"


def summary(recs):
    """The README's summary: one row per GPU (database name) of the per-solver table `recs`."""
    gpus = []
    for r in recs:
        if r["gpu"] not in gpus:
            gpus.append(r["gpu"])
    head = (
        "| GPU | `--arch` (CUs) | solvers with a tuneinfer network | nearest neighbour only (no network) "
        "| MIOpen's KTN | exact %, network (beam 16) vs nearest neighbour on the same held-out problems: medians "
        "| per-cell gain, points |"
    )
    lines = [head, "|" + "---|" * 7]
    for g in gpus:
        mine = [r for r in recs if r["gpu"] == g]
        nets = [r for r in mine if r["kind"] == "network"]
        plains = sorted({r["plain"] for r in mine if r["plain"]})
        cus = compute_units(g)
        names = ", ".join(f"`{n}`" for n in plains + [g])
        # The networks: how many were trained on other GPUs' rows too, and whose they are.
        across = [r for r in nets if r["pool"] == "across GPUs"]
        others = [r for r in nets if r["pool"] == "with other GPUs' rows"]
        notes = []
        if across:
            sources = sorted({r["source"] for r in across if r["source"] != g})
            notes.append(f"{len(across)} across GPUs" + ("".join(f", `{s}`'s" for s in sources)))
        if others:
            notes.append(f"{len(others)} with other GPUs' rows")
        network_cell = f"{len(nets)}" + (f" ({'; '.join(notes)})" if notes else "")
        neighbour = sum(r["kind"] == "neighbour" for r in mine)
        beside = sum(r["kind"] == "beside KTN" for r in mine)
        neighbour_cell = f"{neighbour}" + (f" (+{beside} beside the KTN, for the problems it refuses)" if beside else "")
        # MIOpen's KTN models, and whether the GPU's own network serves the solver before them.
        own = {r["solver"] for r in nets}
        ktn = []
        for r in mine:
            if r["kind"] != "KTN":
                continue
            shadowed = all(s in own for s in expand(r["solver"]))
            ktn.append(f"`{r['solver']}`" + (f" for `--arch {r['plain']}` (`{g}`: the network)" if shadowed else ""))
        ktn_cell = "; ".join(ktn) or "-"
        # Held-out figures of the networks, and the nearest neighbour's on the same problems, as
        # the per-solver table prints them (one decimal).
        pairs = []
        for r in nets:
            v = r["validation"]
            if v is None:
                continue
            beam, nn = method(v, "model, beam"), method(v, "nearest neighbour")
            if beam and nn and beam.get("exact_pct") is not None and nn.get("exact_pct") is not None:
                pairs.append((round(beam["exact_pct"], 1), round(nn["exact_pct"], 1)))
        if pairs:
            medians = (f"{statistics.median(b for b, _ in pairs):.1f} vs {statistics.median(n for _, n in pairs):.1f}"
                       f" ({len(pairs)} cell{'s' if len(pairs) != 1 else ''})")
            gains = [b - n for b, n in pairs]
            gain_cell = signed(gains[0]) if len(gains) == 1 else f"{signed(min(gains))} to {signed(max(gains))}"
        else:
            medians, gain_cell = "-", "-"
        lines.append("| " + " | ".join([
            GPUS.get(g, ""), f"{names} ({cus})" if cus else names, network_cell, neighbour_cell, ktn_cell,
            medians, gain_cell,
        ]) + " |")
    return "\n".join(lines)


def replaced(text, begin, end, body, name):
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        sys.exit(f"{name} has no {begin} ... {end} markers")
    return text[: start + len(begin)] + "\n" + body + "\n" + text[stop:]


# (page, its markers, what goes between them, what it is)
def pages():
    recs = records()  # every weights/*.json read once for both pages
    return [
        (README, SUMMARY_BEGIN, SUMMARY_END, summary(recs), "support summary (one row per GPU)"),
        (SUPPORT, BEGIN, END, table(recs), "support table (one row per model)"),
    ]


def main():
    arg = sys.argv[1] if len(sys.argv) > 1 else ""
    if arg == "--write":
        for page, begin, end, body, _ in pages():
            page.write_text(replaced(page.read_text(), begin, end, body, page.relative_to(ROOT)))
    elif arg == "--check":
        stale = 0
        for page, begin, end, body, what in pages():
            name = page.relative_to(ROOT)
            text = page.read_text()
            if replaced(text, begin, end, body, name) != text:
                print(f"{name}'s {what} differs from weights/: run tools/support_table.py --write")
                stale += 1
            else:
                print(f"{name}'s {what} matches weights/")
        sys.exit(1 if stale else 0)
    elif arg == "--summary":
        print(summary(records()))
    elif arg in ("", "--print"):
        print(table(records()))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
