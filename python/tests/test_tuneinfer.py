"""The Python package against the CLI: the same answers, byte for byte as the CLI prints them,
on the README's examples and on 1,000 perf-db problems; failures with the CLI's messages.

    pip install . && pytest python/tests      # the CLI: target/release/tuneinfer (cargo build --release)

The CLI binary is $TUNEINFER_BIN, else target/release/tuneinfer under $CARGO_TARGET_DIR or the
repository (built with `cargo build --release --bin tuneinfer` when missing).
"""

import os
import pathlib
import re
import shlex
import subprocess
import threading

import pytest

import tuneinfer

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("TUNEINFER_MIOPEN_DATA", ROOT / ".." / "shared" / "miopen")).resolve()
MODELS = str(DATA / "models")
KEY = "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F"


def cli_binary():
    if os.environ.get("TUNEINFER_BIN"):
        return os.environ["TUNEINFER_BIN"]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    binary = target / "release" / "tuneinfer"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--release", "--bin", "tuneinfer"], cwd=ROOT, check=True)
    return str(binary)


BIN = cli_binary()


def cli(args):
    env = dict(os.environ)
    env.pop("TUNEINFER_MODELS", None)
    return subprocess.run([BIN] + list(args), cwd=ROOT, env=env, capture_output=True, text=True)


def parse_options(words):
    """CLI words -> (Predictor kwargs, predict kwargs, the rest)."""
    load_names = {"arch": "arch", "solver": "solver", "models": "models", "device": "device",
                  "precision": "precision", "catalogue": "catalogue", "cu": "compute_units",
                  "threads": "threads"}
    load, decode, rest, i = {}, {}, [], 0
    while i < len(words):
        w = words[i]
        if w.startswith("--") and i + 1 < len(words):
            name, value = w[2:], words[i + 1]
            if name in load_names:
                load[load_names[name]] = int(value) if name in ("cu", "threads") else value
            elif name in ("beam", "top"):
                decode[name] = int(value)
            elif name == "decode":
                decode["decode"] = value
            elif name in ("input",):
                rest += [w, value]
            else:
                raise AssertionError(f"option {w} not handled by this test")
            i += 2
        else:
            rest = words[i:]
            break
    return load, decode, rest


def score_text(p):
    return "" if p.score is None else f"{p.score:.6f}"


def predict_lines(predictions, ranked):
    """What `tuneinfer predict` prints on stdout."""
    if not ranked:
        return predictions[0].config + "\n"
    return "".join(f"{p.rank}\t{p.config}\t{score_text(p)}\n" for p in predictions)


def batch_tsv(texts, results, solver):
    """What `tuneinfer batch` writes, and its failure lines, from predict_batch(errors='return')."""
    tsv = "problem\tsolver\trank\tconfig\tscore\tsource\n"
    failures = []
    for (line_no, text), r in zip(texts, results):
        if isinstance(r, tuneinfer.TuneinferError):
            failures.append((line_no, str(r)))
            continue
        for p in r:
            tsv += f"{text.replace(chr(9), ' ')}\t{solver}\t{p.rank}\t{p.config}\t{score_text(p)}\t{p.source}\n"
    return tsv, failures


def problem_lines(path):
    lines = pathlib.Path(path).read_text().splitlines()
    return [(i + 1, l.strip()) for i, l in enumerate(lines) if l.strip() and not l.strip().startswith("#")]


def readme_examples(tmp):
    """The README's `$ tuneinfer predict|batch` commands (files of `$ cat FILE` written to tmp)."""
    commands, files, inside, cat = [], {}, False, None
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))  # the examples moved to docs/
    for line in "\n".join(p.read_text() for p in pages).splitlines():
        if line.startswith("```"):
            inside, cat = line.strip() == "```console", None
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            words = shlex.split(line[2:])
            cat = words[1] if words[:1] == ["cat"] else None
            if cat:
                files[cat] = []
            # A Predictor is one solver's: `--solver all` is the CLI's; so are the system perf
            # db and the choice among predictors (`--method`): a Predictor answers with its model.
            cli_only = "all" in words or "--system-db" in words or "--method" in words
            if words[:1] == ["tuneinfer"] and words[1:2] in (["predict"], ["batch"]) and not cli_only:
                commands.append(words[1:])
        elif cat:
            files[cat].append(line)
    for name, lines in files.items():
        (tmp / name).write_text("\n".join(lines) + "\n")
    fixed = []
    for words in commands:
        fixed.append([str(tmp / w) if w in files else w.replace("../shared/miopen", str(DATA)) for w in words])
    return fixed


_predictors = {}


def predictor(**load):
    key = tuple(sorted(load.items()))
    if key not in _predictors:
        _predictors[key] = tuneinfer.Predictor(**load)
    return _predictors[key]


def test_readme_examples_give_the_clis_answers(tmp_path):
    examples = readme_examples(tmp_path)
    assert len(examples) >= 10, examples
    for words in examples:
        expected = cli(words)
        load, decode, rest = parse_options(words[1:])
        try:
            p = predictor(**load)
        except tuneinfer.TuneinferError as e:
            assert (e.code, f"error: {e}") == (expected.returncode, expected.stderr.splitlines()[-1]), words
            continue
        if words[0] == "predict":
            try:
                got = predict_lines(p.predict(" ".join(rest), **decode), "beam" in decode)
            except tuneinfer.TuneinferError as e:
                assert expected.returncode == e.code, words
                assert expected.stderr.splitlines()[-1] == f"error: {e}", words
                continue
            assert expected.returncode == 0, (words, expected.stderr)
            assert got == expected.stdout, words
        else:
            source = rest[rest.index("--input") + 1]
            texts = problem_lines(source)
            tsv, failures = batch_tsv(texts, p.predict_batch([t for _, t in texts], errors="return", **decode), p.solver)
            assert tsv == expected.stdout, words
            wanted = [l for l in expected.stderr.splitlines() if re.match(re.escape(source) + r":\d+: ", l)]
            assert [f"{source}:{n}: {m}" for n, m in failures] == wanted, words
            assert expected.returncode == (1 if failures else 0)


def perfdb_keys(count=1000):
    """The first `count` distinct problems of MIOpen's 2019 gfx906_60 text database tuned for
    ConvAsm1x1U (stride-2 and other problems the model does not apply to included)."""
    keys, seen = [], set()
    with open(DATA / "perfdb" / "history" / "gfx906_60.2019.cd.pdb.txt") as f:
        for line in f:
            key, _, values = line.strip().partition("=")
            if "ConvAsm1x1U:" in values and key not in seen:
                seen.add(key)
                keys.append(key)
                if len(keys) == count:
                    break
    assert len(keys) == count
    return keys


@pytest.mark.parametrize(
    "load,decode",
    [
        ({"device": "cpu"}, {}),  # tuneinfer's gfx906 model, --decode auto (beam 6, top 1)
        ({"device": "cpu", "arch": "gfx908", "models": MODELS}, {"beam": 4, "top": 2}),
        ({"device": "cpu", "arch": "gfx908", "models": MODELS}, {"decode": "miopen"}),
    ],
)
def test_1000_perfdb_problems_give_the_clis_answers(tmp_path, load, decode):
    keys = perfdb_keys()
    source = tmp_path / "problems.txt"
    source.write_text("\n".join(keys) + "\n")
    args = ["batch", "--input", str(source)]
    for k, v in load.items():
        args += ["--" + {"compute_units": "cu"}.get(k, k), str(v)]
    for k, v in decode.items():
        args += ["--" + k, str(v)]
    expected = cli(args)
    p = predictor(**load)
    texts = list(enumerate(keys, start=1))
    tsv, failures = batch_tsv(texts, p.predict_batch(keys, errors="return", **decode), p.solver)
    assert tsv == expected.stdout
    wanted = [l for l in expected.stderr.splitlines() if re.match(re.escape(str(source)) + r":\d+: ", l)]
    # The CLI shows the first 20 bad lines, then counts them all.
    assert [f"{source}:{n}: {m}" for n, m in failures][:20] == wanted
    if failures:
        assert f"{source}: {len(failures)} bad line(s) skipped (first at line {failures[0][0]}" in expected.stderr
    assert len(failures) < len(keys) // 2  # mostly problems the model applies to
    # One call per problem gives the batch's answers.
    rows = {}
    for line in expected.stdout.splitlines()[1:]:
        problem, _solver, rank, config, score, src = line.split("\t")
        rows.setdefault(problem, []).append(f"{rank}\t{config}\t{score}\t{src}")
    for key in keys[:200]:
        try:
            got = [f"{q.rank}\t{q.config}\t{score_text(q)}\t{q.source}" for q in p.predict(key, **decode)]
        except tuneinfer.TuneinferError:
            got = None
        assert got == rows.get(key), key


def test_errors_carry_the_library_message_and_the_cli_code():
    p = predictor(device="cpu", arch="gfx908", models=MODELS)
    for bad in [KEY[:-1] + "X", "conv -n 0", "1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-F"]:
        expected = cli(["predict", "--device", "cpu", "--arch", "gfx908", "--models", MODELS, bad])
        with pytest.raises(tuneinfer.TuneinferError) as info:
            p.predict(bad)
        assert f"error: {info.value}" == expected.stderr.splitlines()[-1]
        assert info.value.code == expected.returncode == 5
        assert info.value.index is None
    with pytest.raises(tuneinfer.Error) as info:
        p.predict_batch([KEY, "nonsense"])
    assert info.value.index == 1 and info.value.code == 5
    for kwargs, args in [({"beam": 0}, ["--beam", "0"]), ({"top": 2}, ["--top", "2"]),
                         ({"beam": 2, "top": 3}, ["--beam", "2", "--top", "3"]),
                         ({"decode": "fast"}, ["--decode", "fast"])]:
        with pytest.raises(tuneinfer.TuneinferError) as info:
            p.predict(KEY, **kwargs)
        assert info.value.code == cli(["predict"] + args + [KEY]).returncode == 2
    for load, args in [({"solver": "NoSuchSolver"}, ["--solver", "NoSuchSolver"]),
                       ({"arch": "gfx908", "models": "/nonexistent"}, ["--arch", "gfx908", "--models", "/nonexistent"]),
                       ({"device": "tpu"}, ["--device", "tpu"])]:
        with pytest.raises(tuneinfer.TuneinferError) as info:
            tuneinfer.Predictor(**{"device": "cpu", **load})
        expected = cli(["predict"] + ([] if "device" in load else ["--device", "cpu"]) + args + [KEY])
        assert (info.value.code, f"error: {info.value}") == (expected.returncode, expected.stderr.splitlines()[-1])
    with pytest.raises(TypeError):
        p.predict_batch(KEY)  # a string is not a list of problems


def test_the_gil_is_released_while_predicting():
    p = predictor(device="cpu")  # tuneinfer's model: ~4 ms a problem
    keys = perfdb_keys(200)
    done = []
    worker = threading.Thread(target=lambda: done.append(p.predict_batch(keys, errors="return")))
    spins = 0
    worker.start()
    while worker.is_alive():
        spins += 1
    worker.join()
    assert len(done[0]) == len(keys)
    # Holding the GIL for the whole batch would leave this thread a handful of iterations.
    assert spins > 10_000, spins


def test_predictions_are_plain_objects():
    p = predictor(device="cpu", arch="gfx908", models=MODELS)
    best = p.predict(KEY, beam=4, top=2)
    assert [type(x) for x in best] == [tuneinfer.Prediction] * 2
    d = best[0].as_dict()
    assert d == {"rank": 1, "config": best[0].config, "score": best[0].score, "source": "model"}
    assert isinstance(d["score"], float) and best[0] == p.predict(KEY, beam=4, top=2)[0]
    assert p.solver == "ConvAsm1x1U" and p.device == "cpu"
    header = (ROOT / "include" / "tuneinfer.h").read_text()
    abi = int(re.search(r"#define TUNEINFER_ABI_VERSION (\d+)", header).group(1))
    assert tuneinfer.ABI_VERSION == abi and tuneinfer.__version__


def test_python_answers_through_the_clis_answering_path():
    # Issue 43: MI100's GTC forward figures choose MIOpen's default for this kind of problem
    # (--method best, the default): Python gives the CLI's first answer, not the model's own.
    solver = "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC"
    key = "64-56-56-1x1-256-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F"
    for method in ["best", "model"]:
        p = tuneinfer.Predictor("gfx90878", solver, device="cpu", method=method, system_db="none")
        got = p.predict(key)[0]
        out = subprocess.run(
            [BIN, "predict", "--arch", "gfx90878", "--solver", solver, "--device", "cpu",
             "--system-db", "none", "--method", method, key],
            capture_output=True, text=True, check=True)
        assert got.config == out.stdout.strip()
        assert got.source == ("default" if method == "best" else "model")
    with pytest.raises(tuneinfer.TuneinferError) as e:
        tuneinfer.Predictor("gfx90878", solver, device="cpu", method="oracle")
    assert "--method" in str(e.value)
