#!/usr/bin/env python3
"""Analysis of MIOpen's find-dbs (../shared/miopen/finddb): the geometry split (tuneinfer's
split_by_geometry: sha256(seed LE u64 || forward FP32 key) < 0.2, seed 1), the dynamic-only
choice, nearest neighbour and k-NN rankings on the held-out fifth.  Exploration only: the
figures in docs/finddb.md come from `tuneinfer find-eval` (Rust)."""
import bz2, glob, hashlib, math, os, struct, sys, collections

FDB = os.path.join(os.path.dirname(__file__), '..', '..', 'shared', 'miopen', 'finddb')
if not os.path.isdir(FDB):
    FDB = '/work/shared/miopen/finddb'

ALGO_PREFIX = 'miopenConvolution'

def parse_entries(v):
    out = []
    for e in v.split(';'):
        i, _, vals = e.partition(':')
        if i.startswith(ALGO_PREFIX):
            p = vals.split(',')
            if len(p) < 3: continue
            solver, t, ws = p[0], p[1], p[2]
            algo = i
        else:
            p = vals.split(',')
            if len(p) < 3: continue
            solver, t, ws, algo = i, p[0], p[1], p[2]
        try:
            out.append((solver, max(float(t), 1e-6), int(ws), algo))
        except ValueError:
            pass
    return out

def parse_key(k):
    f = k.split('-')
    g = 1
    if '_g' in f[-1]:
        d, gs = f[-1].split('_g'); f[-1] = d; g = int(gs)
    three = len(f) > 4 and 'x' not in f[3] and 'x' in f[4]
    if three:
        c_in, d_in, h_in, w_in, fil, c_out, d_out, h_out, w_out, n, pad, st, dil, bias = f[:14]
        lay = f[14:-2]
    else:
        c_in, h_in, w_in, fil, c_out, h_out, w_out, n, pad, st, dil, bias = f[:12]
        d_in = d_out = None
        lay = f[12:-2]
    ty, dr = f[-2], f[-1]
    if len(set(lay)) != 1: return None
    lay = lay[0]
    fil = [int(x) for x in fil.split('x')]; pad = [int(x) for x in pad.split('x')]
    st = [int(x) for x in st.split('x')]; dil = [int(x) for x in dil.split('x')]
    fwd = dr == 'F'
    c, kk = (int(c_in), int(c_out)) if fwd else (int(c_out), int(c_in))
    xin = (d_in, h_in, w_in) if fwd else (d_out, h_out, w_out)
    yout = (d_out, h_out, w_out) if fwd else (d_in, h_in, w_in)
    return dict(three=three, c=c, k=kk, n=int(n), xin=xin, yout=yout, fil=fil, pad=pad, st=st,
                dil=dil, bias=bias, lay=lay, ty=ty, dir=dr, g=g)

def geometry_key(p):
    # to_perfdb_key with direction F, FP32
    if p['three']:
        lay = 'NCDHW' if p['lay'] == 'NCDHW' else 'NDHWC-NDHWC-NDHWC'
        x = p['xin']; y = p['yout']
        s = '%d-%s-%s-%s-%s-%d-%s-%s-%s-%d-%s-%s-%s-%s-%s-FP32-F' % (
            p['c'], x[0], x[1], x[2], 'x'.join(map(str, p['fil'])), p['k'], y[0], y[1], y[2], p['n'],
            'x'.join(map(str, p['pad'])), 'x'.join(map(str, p['st'])), 'x'.join(map(str, p['dil'])), p['bias'], lay)
    else:
        x = p['xin']; y = p['yout']
        s = '%d-%s-%s-%s-%d-%s-%s-%d-%s-%s-%s-%s-%s-FP32-F' % (
            p['c'], x[1], x[2], 'x'.join(map(str, p['fil'])), p['k'], y[1], y[2], p['n'],
            'x'.join(map(str, p['pad'])), 'x'.join(map(str, p['st'])), 'x'.join(map(str, p['dil'])), p['bias'], p['lay'])
    if p['g'] != 1: s += '_g%d' % p['g']
    return s

def draw(seed, gk):
    h = hashlib.sha256(struct.pack('<Q', seed) + gk.encode()).digest()
    return (struct.unpack('<Q', h[:8])[0] >> 11) / float(1 << 53)

DYN_PREFIX = ('ConvAsmImplicitGemmV4R1Dynamic', 'ConvAsmImplicitGemmGTCDynamic', 'ConvBinWinograd3x3U',
              'ConvBinWinogradRxS', 'ConvWinograd3x3MultipassWrW', 'ConvDirectNaiveConv', 'Gemm',
              'ConvHipImplicitGemmFwdXdlops', 'ConvHipImplicitGemmBwdXdlops', 'ConvHipImplicitGemmGroup',
              'ConvHipImplicitGemm3DGroup', 'ConvHipImplicitGemmF16F8F16', 'ConvWinoFuryRxS', 'ConvWinoRageRxS',
              'ConvMPBidirectWinograd<', 'ConvBinWinoRxS')
def is_dynamic(s):
    return s.startswith(DYN_PREFIX)

def runs(s, p, arch):
    ty, dr = p['ty'], p['dir']
    if s in ('ConvCkIgemmFwdV6r1DlopsNchw', 'ConvHipImplicitGemmBwdDataV4R1', 'ConvHipImplicitGemmBwdDataV1R1Xdlops'):
        return False
    if s == 'ConvHipImplicitGemmBwdDataV4R1Xdlops' and (ty == 'FP32' or (ty == 'BF16' and arch.startswith('gfx90a'))):
        return False
    if s == 'ConvHipImplicitGemmBwdDataV1R1' and ty == 'BF16': return False
    if s in ('ConvOclDirectFwd1x1', 'ConvOclBwdWrW1x1') and arch.startswith(('gfx10', 'gfx11')): return False
    if s == 'ConvAsmBwdWrW3x3' and arch.startswith('gfx90a') and ty == 'FP32': return False
    if arch.startswith('gfx90a') and ty == 'FP16' and ((s == 'ConvAsm1x1U' and dr == 'B') or (s == 'ConvAsmBwdWrW1x1' and dr == 'W')):
        return False
    return True

def feats(p):
    x = p['xin']; y = p['yout']
    v = [p['c'], p['k'], p['n'], int(x[1]), int(x[2]), int(y[1]), int(y[2]), p['fil'][-2], p['fil'][-1],
         p['st'][-2], p['st'][-1], p['pad'][-2] + 1, p['pad'][-1] + 1, p['dil'][-2], p['dil'][-1], p['g']]
    if p['three']:
        v += [int(x[0]), int(y[0]), p['fil'][0], p['st'][0], p['pad'][0] + 1]
    else:
        v += [1, 1, 1, 1, 1]
    return [math.log2(a) for a in v]

def load(name):
    recs = {}
    for line in bz2.open(os.path.join(FDB, name), 'rt'):
        k, _, v = line.strip().partition('=')
        p = parse_key(k)
        if p is None: continue
        ents = parse_entries(v)
        if not ents: continue
        recs[k] = (p, ents)
    return recs

def main():
    files = sys.argv[1:] or ['gfx90878.3.5.1.HIP.fdb.txt.bz2', 'gfx90a68.3.5.1.HIP.fdb.txt.bz2', 'gfx906_60.3.5.1.HIP.fdb.txt.bz2',
                             'gfx1030_36.3.5.1.HIP.fdb.txt.bz2', 'gfx942130.2024-11.HIP.fdb.txt.bz2']
    import numpy as np
    for name in files:
        arch = name.split('.')[0]
        recs = load(name)
        train, test = {}, {}
        for k, (p, e) in recs.items():
            (test if draw(1, geometry_key(p)) < 0.2 else train)[k] = (p, e)
        # class index
        cls = collections.defaultdict(list)
        for k, (p, e) in train.items():
            cls[(p['dir'], p['ty'], p['lay'], p['three'])].append((feats(p), e, p))
        arrs = {c: np.array([f for f, _, _ in v]) for c, v in cls.items()}
        stats = collections.defaultdict(lambda: [0, 0, 0.0, 0, 0])  # top1, n, sumlog, listed, dyn-fastest
        for k, (p, e) in test.items():
            run = [x for x in e if runs(x[0], p, arch)]
            if not run: continue
            best = min(run, key=lambda x: x[1])
            tm = {x[0]: x[1] for x in run}
            def score(meth, pick):
                s = stats[meth]; s[1] += 1
                if pick is None or pick not in tm: return
                s[3] += 1; s[2] += math.log(tm[pick] / best[1])
                if pick == best[0]: s[0] += 1
            dyn = [x for x in run if is_dynamic(x[0])]
            score('dynamic', min(dyn, key=lambda x: x[1])[0] if dyn else None)
            c = (p['dir'], p['ty'], p['lay'], p['three'])
            if c not in arrs:
                score('nn', None); score('knn', None); continue
            f = np.array(feats(p))
            d = ((arrs[c] - f) ** 2).sum(1)
            order = np.argsort(d)
            nb = cls[c][order[0]]
            nrun = [x for x in nb[1] if runs(x[0], p, arch)]
            score('nn', min(nrun, key=lambda x: x[1])[0] if nrun else None)
            # knn: weighted vote of relative log-time per solver
            K = 8
            acc = collections.defaultdict(float); wsum = collections.defaultdict(float); cnt = collections.Counter()
            for j in order[:K]:
                w = 1.0 / (1e-3 + d[j])
                fe, ents, pp = cls[c][j]
                rr = [x for x in ents if runs(x[0], p, arch)]
                if not rr: continue
                b = min(x[1] for x in rr)
                for x in rr:
                    acc[x[0]] += w * math.log(x[1] / b); wsum[x[0]] += w; cnt[x[0]] += 1
            tw = sum(1.0 / (1e-3 + d[j]) for j in order[:K])
            # penalty for absent: treat absence as log ratio = 1.0 (censored)
            cand = {s: (acc[s] + (tw - wsum[s]) * 1.0) / tw for s in acc}
            score('knn', min(cand, key=cand.get) if cand else None)
        print(arch, len(train), len(test))
        for m, (t1, n, sl, li, _) in stats.items():
            print('  %-8s top1 %.1f%%  geomean %.4f  unlisted %.1f%%' % (m, 100 * t1 / n, math.exp(sl / max(li, 1)), 100 * (n - li) / n))

if __name__ == '__main__':
    main()
