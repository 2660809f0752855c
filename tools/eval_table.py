#!/usr/bin/env python3
"""Markdown tables from `tuneinfer eval --json` outputs: per (solver, arch, precision) the
model's exact match (first answer of its beam, what predict and userdb write) beside the nearest
neighbour and MIOpen's static default, MIOpen's KTN where eval ran it, and the second tuning run
(noise ceiling) where given.

    python3 tools/eval_table.py FILE.eval.json...
"""
import json
import re
import sys


def overall(methods, prefix):
    for m in methods:
        if m.get("kind") is None and m["method"].startswith(prefix):
            return m
    return None


def kinds(methods, prefix):
    out = {}
    for m in methods:
        if m.get("kind") and m["method"].startswith(prefix):
            out[m["kind"]] = m
    return out


def pct(m):
    return "-" if m is None else f"{m['exact_pct']:.1f}"


def main(paths):
    print("| solver | arch | kind | problems | model | nearest neighbour | static default | default where valid, else model | model - NN | model top-4 |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    extras = []
    for path in paths:
        t = json.load(open(path))
        ms = t["methods"]
        solver = t["solver"].replace("ConvAsmImplicitGemmGTCDynamic", "GTC ")
        beam = overall(ms, "model, beam")
        nn = overall(ms, "nearest neighbour")
        sd = overall(ms, "MIOpen static default")
        mix = overall(ms, "default where valid")
        rows = [("all", beam, nn, sd, mix)]
        mk, nk, sk = kinds(ms, "beam"), kinds(ms, "nearest neighbour"), kinds(ms, "static default")
        xk = kinds(ms, "default/model")
        if len(mk) > 1:
            rows += [(k, mk[k], nk.get(k), sk.get(k), xk.get(k)) for k in sorted(mk)]
        for kind, m, n, s, x in rows:
            gap = "-" if m is None or n is None else f"{m['exact_pct'] - n['exact_pct']:+.1f}"
            top4 = "-" if m is None else f"{m['top4_pct']:.1f}"
            print(f"| {solver} | {t['arch']} | {kind} | {m['problems'] if m else '-'} | {pct(m)} | {pct(n)} | {pct(s)} | {pct(x)} | {gap} | {top4} |")
        for m in ms:
            if m["method"].startswith("MIOpen KTN") and m.get("kind") is None:
                extras.append(f"- {t['arch']} {t['solver']}: {m['method']}: exact {m['exact_pct']:.1f}, "
                              f"top-4 {m['top4_pct']:.1f}, top-16 {m['top16_pct']:.1f} "
                              f"(model beam: exact {pct(beam)}, top-4 {beam['top4_pct']:.1f}, top-16 {beam['top16_pct']:.1f})")
        sr = t.get("second_run")
        if sr:
            extras.append(f"- {t['arch']} {t['solver']}: second tuning run ({sr['shared_problems']} shared validation problems): "
                          f"runs agree {sr['runs_agree_pct']:.1f}%; " + "; ".join(
                              f"{r['method']}: ={r['exact_vs_first_run_pct']:.1f} / ={r['exact_vs_second_run_pct']:.1f} / either {r['either_run_pct']:.1f}"
                              for r in sr["methods"]))
    if extras:
        print()
        for e in extras:
            print(e)


if __name__ == "__main__":
    main(sys.argv[1:])
