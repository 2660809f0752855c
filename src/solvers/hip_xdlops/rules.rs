//! The configs, validity rules and `HeuristicInit` of MIOpen's HIP xdlops implicit-GEMM solvers,
//! transcribed from ROCm/MIOpen 2d1fd997a (`src/solver/conv/conv_hip_implicit_gemm_*_xdlops*.cpp`,
//! `src/include/miopen/solver/implicitgemm_util.hpp`; MIOpen 3.5.1 has the same rules, moved to
//! `implicitgemm_static_ck_util.hpp` / `static_ck_common.hpp`). File names below are relative to
//! `src/solver/conv/` and drop the `conv_hip_implicit_gemm_` prefix; `util` is
//! `implicitgemm_util.hpp`.
//!
//! Rules, numbered as `docs/solvers.md` lists them (each a `Rule` value, so a test can name the
//! one a config breaks):
//! - R1 `IsValidValue`: every field in its power-of-two range (and the flags 0/1).
//! - R2 `IsValidBlockwiseGemmXdlops` (util:263-323): FP32 with KPerBlock 1 and KPack 8 is refused
//!   (WORKAROUND_SWDEV_251757); FP16 KPack % 4, BF16 KPack % 2; (MPerWave, NPerWave) one of 11
//!   wave GEMMs with KPerBlock a multiple of its k; block size 64..256; MPerBlock % MPerWave,
//!   NPerBlock % NPerWave.
//! - R3 the GEMM sizes: K total % KPack, M % MPerBlock, N % NPerBlock, (K total / KPack) %
//!   KPerBlock (V4R5 also N % (NPerBlock / NPerWave); WrW: the split-K search of
//!   `CalculateGemmSizeAndGemmKBlock` first; BwdData: every one of its GEMMs).
//! - R4 the A block copy, R5 the B block copy (`CalculateGemm{A,B}BlockCopyPerformanceParameters`).
//! - R6 LDS: at most 65,536 bytes.
//!
//! `IsFastToBeUsedForTuning` (F1-F7, [`fast`]) is not a validity rule: MIOpen's search skips
//! configs that fail it and `HeuristicInit` prefers configs that pass it, but a perf-db entry
//! failing it is still run. The rules here are `IsReallyValid`, what MIOpen checks of a db entry
//! (`IsValidPerformanceConfig`).

use super::XKind;
use crate::problem::{ConvProblem, Precision};
use crate::solvers::tunable::completable_in;
use crate::solvers::IntRules;

/// A rule of [`Rule`]'s numbering (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// R1: a field outside `IsValidValue`'s range.
    Value,
    /// R2: `IsValidBlockwiseGemmXdlops`.
    BlockwiseGemm,
    /// R3: the GEMM sizes.
    GemmSize,
    /// R4: the A block copy.
    CopyA,
    /// R5: the B block copy.
    CopyB,
    /// R6: LDS over 64 KiB.
    Lds,
}

/// gcd with gcd(0, y) = y and gcd(x, 0) = x (util:587-618).
pub fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// lcm, 0 when either is 0 (util:620-632).
pub fn lcm(a: i64, b: i64) -> i64 {
    if a == 0 || b == 0 {
        0
    } else {
        a / gcd(a, b) * b
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// What the rules read of a problem, in MIOpen's `ProblemInterpreter` terms (forward convention:
/// C = x's channels, K = y's, Hi/Wi = x's size, Ho/Wo = y's), with the adjusted strides,
/// dilations and right pads (problem_description_interpreter.hpp:185-290).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prob {
    pub precision: Precision,
    pub g: i64,
    pub n: i64,
    pub k: i64,
    pub c: i64,
    pub hi: i64,
    pub wi: i64,
    pub ho: i64,
    pub wo: i64,
    pub y: i64,
    pub x: i64,
    /// Adjusted strides (1 where the output size is 1).
    pub sh: i64,
    pub sw: i64,
    /// Adjusted dilations (1 where the filter size is 1).
    pub dh: i64,
    pub dw: i64,
    pub lph: i64,
    pub lpw: i64,
    /// Adjusted right pads.
    pub rph: i64,
    pub rpw: i64,
    /// `GetMaxComputeUnits` (the WrW split and `IsFastToBeUsedForTuning` read it).
    pub num_cu: i64,
}

impl Prob {
    pub fn new(p: &ConvProblem, num_cu: u32) -> Prob {
        let s = |v: u64| v.min(crate::problem::MAX_FIELD_VALUE) as i64;
        let (hi, wi, ho, wo) = (s(p.in_h), s(p.in_w), s(p.out_h), s(p.out_w));
        let (y, x) = (s(p.filter_h), s(p.filter_w));
        let sh = if ho > 1 { s(p.stride_h) } else { 1 };
        let sw = if wo > 1 { s(p.stride_w) } else { 1 };
        let dh = if y > 1 { s(p.dilation_h) } else { 1 };
        let dw = if x > 1 { s(p.dilation_w) } else { 1 };
        let (lph, lpw) = (s(p.pad_h), s(p.pad_w));
        let rp = |i: i64, o: i64, f: i64, st: i64, d: i64, lp: i64| (1 + (f - 1) * d + (o - 1) * st - (lp + i)).max(0);
        Prob {
            precision: p.precision,
            g: s(p.groups).max(1),
            n: s(p.n),
            k: s(p.k),
            c: s(p.c),
            hi,
            wi,
            ho,
            wo,
            y,
            x,
            sh,
            sw,
            dh,
            dw,
            lph,
            lpw,
            rph: rp(hi, ho, y, sh, dh, lph),
            rpw: rp(wi, wo, x, sw, dw, lpw),
            num_cu: i64::from(num_cu),
        }
    }

    fn fp32(&self) -> bool {
        self.precision == Precision::Fp32
    }

    /// Bytes of an element (fp32 4, fp16/bf16 2).
    fn elem(&self) -> i64 {
        if self.fp32() {
            4
        } else {
            2
        }
    }

    /// `amd_lds_write_max_length`: 4 for float, 8 for half (util:524-540). (Buffer loads are 4
    /// for both: WORKAROUND_SWDEV_413051, util:470-486.)
    fn lds_write_max(&self) -> i64 {
        if self.fp32() {
            4
        } else {
            8
        }
    }

    /// The vector length the input tensor's layout allows along GemmN (Fwd) / GemmKPack (WrW)
    /// before the block bound: fwd_v4r4_xdlops.cpp:436-453 (the same in every Fwd/WrW file).
    fn input_read_bound(&self) -> i64 {
        let v = 4;
        if self.y == 1
            && self.x == 1
            && self.sh == 1
            && self.sw == 1
            && self.lph == 0
            && self.lpw == 0
            && self.rph == 0
            && self.rpw == 0
        {
            gcd(v, self.ho * self.wo)
        } else if self.sw == 1 && self.lpw == 0 && self.rpw == 0 {
            gcd(v, self.wo)
        } else if self.sw == 1 {
            gcd(v, gcd(self.wo, gcd(self.lpw, gcd(self.rpw, self.dw))))
        } else {
            1
        }
    }
}

/// One config, whatever the solver's field order ([`XKind::layout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cfg {
    pub mpb: i64,
    pub npb: i64,
    pub kpb: i64,
    pub mpw: i64,
    pub npw: i64,
    pub kpack: i64,
    pub a_more: bool,
    pub b_more: bool,
    /// `GemmBThreadDataPerRead_GemmN` (Fwd kinds; 1 elsewhere).
    pub b_read: i64,
    /// The Padded_Gemm factors (16, 64, 16 elsewhere).
    pub mf: i64,
    pub nf: i64,
    pub kf: i64,
}

/// Field names of each kind, in MIOpen's `Visit` order (`src/include/miopen/conv/solvers.hpp`).
pub const FWD_NAMES: [&str; 9] = [
    "GemmMPerBlock",
    "GemmNPerBlock",
    "GemmKPerBlock",
    "GemmMPerWave",
    "GemmNPerWave",
    "GemmKPack",
    "GemmAThreadCopyMoreGemmK",
    "GemmBThreadCopyMoreGemmKPack",
    "GemmBThreadDataPerRead_GemmN",
];
pub const FWD_PADDED_NAMES: [&str; 12] = [
    "GemmMPerBlock",
    "GemmNPerBlock",
    "GemmKPerBlock",
    "GemmMPerWave",
    "GemmNPerWave",
    "GemmKPack",
    "GemmMFactor",
    "GemmNFactor",
    "GemmKFactor",
    "GemmAThreadCopyMoreGemmK",
    "GemmBThreadCopyMoreGemmKPack",
    "GemmBThreadDataPerRead_GemmN",
];
pub const WRW_NAMES: [&str; 8] = [
    "GemmMPerBlock",
    "GemmNPerBlock",
    "GemmKPerBlock",
    "GemmMPerWave",
    "GemmNPerWave",
    "GemmKPack",
    "GemmAThreadCopyMoreGemmK",
    "GemmBThreadCopyMoreGemmK",
];
pub const WRW_PADDED_NAMES: [&str; 11] = [
    "GemmMPerBlock",
    "GemmNPerBlock",
    "GemmKPerBlock",
    "GemmMPerWave",
    "GemmNPerWave",
    "GemmKPack",
    "GemmMFactor",
    "GemmNFactor",
    "GemmKTotalFactor",
    "GemmAThreadCopyMoreGemmK",
    "GemmBThreadCopyMoreGemmK",
];
pub const BWD_NAMES: [&str; 8] = [
    "GemmNPerBlock",
    "GemmMPerBlock",
    "GemmKPerBlock",
    "GemmKPACKSize",
    "GemmMPerWave",
    "GemmNPerWave",
    "GemmAThreadCopyMoreGemmK",
    "GemmBThreadCopyMoreGemmKPack",
];

const P4_256: &[i64] = &[4, 8, 16, 32, 64, 128, 256];
const P16_256: &[i64] = &[16, 32, 64, 128, 256];
const P1_8: &[i64] = &[1, 2, 4, 8];
const P4_128: &[i64] = &[4, 8, 16, 32, 64, 128];
const P16_128: &[i64] = &[16, 32, 64, 128];
const FLAG: &[i64] = &[0, 1];

/// Which field of [`Cfg`] a position holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Mpb,
    Npb,
    Kpb,
    Mpw,
    Npw,
    Kpack,
    AMore,
    BMore,
    BRead,
    Mf,
    Nf,
    Kf,
}

impl XKind {
    /// The fields in config order.
    fn layout(self) -> &'static [Field] {
        use Field::*;
        match self {
            XKind::FwdV4R4 | XKind::FwdV4R5 => &[Mpb, Npb, Kpb, Mpw, Npw, Kpack, AMore, BMore, BRead],
            XKind::FwdV4R4Padded => &[Mpb, Npb, Kpb, Mpw, Npw, Kpack, Mf, Nf, Kf, AMore, BMore, BRead],
            XKind::WrwV4R4 => &[Mpb, Npb, Kpb, Mpw, Npw, Kpack, AMore, BMore],
            XKind::WrwV4R4Padded => &[Mpb, Npb, Kpb, Mpw, Npw, Kpack, Mf, Nf, Kf, AMore, BMore],
            XKind::BwdV4R1 => &[Npb, Mpb, Kpb, Kpack, Mpw, Npw, AMore, BMore],
        }
    }

    /// Parameter names in perf-db order.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            XKind::FwdV4R4 | XKind::FwdV4R5 => &FWD_NAMES,
            XKind::FwdV4R4Padded => &FWD_PADDED_NAMES,
            XKind::WrwV4R4 => &WRW_NAMES,
            XKind::WrwV4R4Padded => &WRW_PADDED_NAMES,
            XKind::BwdV4R1 => &BWD_NAMES,
        }
    }

    /// R1: each position's `IsValidValue` range. `GemmBThreadDataPerRead_GemmN`: V4R5 checks
    /// 1..8 (fwd_v4r5_xdlops.cpp `IsValidValue`); V4R4 and Padded_Gemm check nothing of it (it is
    /// read only with `..._ADD_VECTOR_LOAD_GEMMN_TUNE_PARAM` set), here the values their
    /// `HeuristicInit` and `SetNextValue` produce, 1..8. The Padded_Gemm factors are fixed
    /// (`SetNextValue` never moves them; wrw_v4r4_xdlops_padded_gemm.cpp:51 "fixed value at this
    /// moment"): 16, 64, 16.
    pub fn domain(self, position: usize) -> &'static [i64] {
        let bwd = self == XKind::BwdV4R1;
        match self.layout()[position] {
            Field::Mpb => P4_256,
            Field::Npb if bwd => P16_256,
            Field::Npb => P4_256,
            Field::Kpb | Field::Kpack | Field::BRead => P1_8,
            Field::Mpw => P4_128,
            Field::Npw if bwd => P16_128,
            Field::Npw => P4_128,
            Field::AMore | Field::BMore => FLAG,
            Field::Mf | Field::Kf => &[16],
            Field::Nf => &[64],
        }
    }

    /// Positions before which the flags (and `GemmBThreadDataPerRead_GemmN`) come: the block,
    /// wave and pack sizes, and the Padded_Gemm factors.
    fn core_len(self) -> usize {
        match self {
            XKind::FwdV4R4Padded | XKind::WrwV4R4Padded => 9,
            _ => 6,
        }
    }

    pub fn config(self, v: &[i64]) -> Cfg {
        let mut c = Cfg {
            mpb: 0,
            npb: 0,
            kpb: 0,
            mpw: 0,
            npw: 0,
            kpack: 0,
            a_more: false,
            b_more: false,
            b_read: 1,
            mf: 16,
            nf: 64,
            kf: 16,
        };
        for (f, &x) in self.layout().iter().zip(v) {
            match f {
                Field::Mpb => c.mpb = x,
                Field::Npb => c.npb = x,
                Field::Kpb => c.kpb = x,
                Field::Mpw => c.mpw = x,
                Field::Npw => c.npw = x,
                Field::Kpack => c.kpack = x,
                Field::AMore => c.a_more = x != 0,
                Field::BMore => c.b_more = x != 0,
                Field::BRead => c.b_read = x,
                Field::Mf => c.mf = x,
                Field::Nf => c.nf = x,
                Field::Kf => c.kf = x,
            }
        }
        c
    }

    pub fn values(self, c: &Cfg) -> Vec<i64> {
        self.layout()
            .iter()
            .map(|f| match f {
                Field::Mpb => c.mpb,
                Field::Npb => c.npb,
                Field::Kpb => c.kpb,
                Field::Mpw => c.mpw,
                Field::Npw => c.npw,
                Field::Kpack => c.kpack,
                Field::AMore => i64::from(c.a_more),
                Field::BMore => i64::from(c.b_more),
                Field::BRead => c.b_read,
                Field::Mf => c.mf,
                Field::Nf => c.nf,
                Field::Kf => c.kf,
            })
            .collect()
    }
}

/// The wave GEMMs `IsValidBlockwiseGemmXdlops` accepts: (MPerWave, NPerWave, k it needs
/// KPerBlock to be a multiple of) (util:283-301).
const WAVE_GEMMS: [(i64, i64, i64); 11] = [
    (128, 64, 1),
    (64, 128, 1),
    (64, 64, 1),
    (64, 32, 1),
    (64, 16, 1),
    (32, 64, 1),
    (32, 32, 2),
    (16, 64, 1),
    (16, 16, 4),
    (8, 64, 1),
    (4, 64, 1),
];

/// R2 (util:263-323).
fn blockwise_ok(p: &Prob, c: &Cfg) -> bool {
    if p.fp32() && c.kpb == 1 && c.kpack == 8 {
        return false;
    }
    if p.precision == Precision::Fp16 && c.kpack % 4 != 0 {
        return false;
    }
    if p.precision == Precision::Bf16 && c.kpack % 2 != 0 {
        return false;
    }
    if !WAVE_GEMMS
        .iter()
        .any(|&(m, n, k)| c.mpw == m && c.npw == n && c.kpb % k == 0)
    {
        return false;
    }
    let bs = block_size(c);
    (64..=256).contains(&bs) && c.mpb % c.mpw == 0 && c.npb % c.npw == 0
}

/// `CalculateBlockSize`: (NPerBlock * MPerBlock) / (MPerWave * NPerWave) * 64.
fn block_size(c: &Cfg) -> i64 {
    if c.mpw <= 0 || c.npw <= 0 {
        return 0;
    }
    (c.npb * c.mpb) / (c.mpw * c.npw) * 64
}

/// The GEMM sizes of a Fwd kind (M, N, K total): K/G, N*Ho*Wo, C/G*Y*X
/// (fwd_v4r4_xdlops.cpp:828-849); Padded_Gemm rounds each up to its factor
/// (fwd_v4r4_xdlops_padded_gemm.cpp:859-889), returning the K extra too.
fn fwd_gemm(p: &Prob, padded: Option<(i64, i64, i64)>) -> (i64, i64, i64, i64) {
    let (m, n, k) = (p.k / p.g, p.n * p.ho * p.wo, p.c / p.g * p.y * p.x);
    match padded {
        None => (m, n, k, 0),
        Some((mf, nf, kf)) => {
            let extra = |v: i64, f: i64| if v % f == 0 { 0 } else { f - v % f };
            (m + extra(m, mf), n + extra(n, nf), k + extra(k, kf), extra(k, kf))
        }
    }
}

/// The WrW kinds' `CalculateGemmSizeAndGemmKBlock` (wrw_v4r4_xdlops.cpp:300-372; Padded_Gemm:
/// wrw_v4r4_xdlops_padded_gemm.cpp, the same with M, N and the split's K total rounded up to the
/// factors): (M, N, K total per split, split count, M pad, N pad, K pad), or None where MIOpen
/// throws (M % MPerBlock, N % NPerBlock, and without padding N*Ho*Wo % (KPerBlock*KPack)).
pub fn wrw_gemm(p: &Prob, c: &Cfg, padded: bool) -> Option<(i64, i64, i64, i64, i64, i64, i64)> {
    let m0 = p.k / p.g;
    let n0 = p.c / p.g * p.y * p.x;
    let (m, n) = if padded {
        (ceil_div(m0, c.mf) * c.mf, ceil_div(n0, c.nf) * c.nf)
    } else {
        (m0, n0)
    };
    let kk = p.n * p.ho * p.wo;
    if c.mpb <= 0 || c.npb <= 0 || c.kpb * c.kpack <= 0 {
        return None;
    }
    if m % c.mpb != 0 || n % c.npb != 0 || (!padded && kk % (c.kpb * c.kpack) != 0) {
        return None;
    }
    let grid0 = p.g * (m / c.mpb) * (n / c.npb);
    if grid0 <= 0 {
        return None;
    }
    let max_grid = 20 * p.num_cu;
    let mut kb = (max_grid / grid0).max(1).min(p.n);
    let ktot_of = |kb: i64| {
        let no_pad = p.n / kb * p.ho * p.wo;
        if padded {
            ceil_div(no_pad, c.kf) * c.kf
        } else {
            kk / kb
        }
    };
    while kb > 1 {
        if p.n % kb == 0 {
            if padded {
                if ktot_of(kb) % (c.kpb * c.kpack) == 0 {
                    break;
                }
            } else if kk % (kb * c.kpack) == 0 && (kk / (kb * c.kpack)) % c.kpb == 0 {
                break;
            }
        }
        kb -= 1;
    }
    let kb = kb.max(1);
    let ktot = ktot_of(kb);
    let kpad = if padded { ktot - p.n / kb * p.ho * p.wo } else { 0 };
    Some((m, n, ktot, kb, m - m0, n - n0, kpad))
}

/// BwdData's GEMMs (bwd_v4r1_xdlops.cpp `CalculateNumberOfGemm`, `CalculateGemmSize`): Ytilda *
/// Xtilda of them, each (M, N, K total) = (C/G, N*Htilda_slice*Wtilda_slice, K/G*Ydot_slice*
/// Xdot_slice).
pub fn bwd_gemms(p: &Prob) -> Vec<(i64, i64, i64)> {
    let (sh, sw) = (p.sh.max(1), p.sw.max(1));
    let yt = sh / gcd(sh, p.dh);
    let xt = sw / gcd(sw, p.dw);
    let ydot = ceil_div(p.y, yt);
    let xdot = ceil_div(p.x, xt);
    let htilda = p.ho + ceil_div(p.dh * (p.y - 1), sh);
    let wtilda = p.wo + ceil_div(p.dw * (p.x - 1), sw);
    let hl = (p.lph - p.dh * (yt - 1)).max(0) / sh;
    let wl = (p.lpw - p.dw * (xt - 1)).max(0) / sw;
    let hr = htilda.min(ceil_div(p.lph + p.hi - 1, sh) + 1);
    let wr = wtilda.min(ceil_div(p.lpw + p.wi - 1, sw) + 1);
    (0..yt * xt)
        .map(|id| {
            let (iy, ix) = (id / xt, id % xt);
            let ys = if (iy + 1) * ydot <= p.y {
                ydot
            } else if ydot > 0 {
                p.y % ydot
            } else {
                0
            };
            let xs = if (ix + 1) * xdot <= p.x {
                xdot
            } else if xdot > 0 {
                p.x % xdot
            } else {
                0
            };
            (p.c / p.g, p.n * (hr - hl) * (wr - wl), p.k / p.g * ys * xs)
        })
        .collect()
}

/// R4/R5 of the Fwd V4R4-type and WrW copies (fwd_v4r4_xdlops.cpp:309-393 and :395-536,
/// wrw_v4r4_xdlops.cpp:376-470 and :472-580): a copy of a [K, X, KPack] block with a vector of
/// `vec` along the dimension `along` ("x" or "kpack"), the rest split by the flag; `exact`: the
/// V4R5 A copy (its block size must equal the cluster, no lcm: fwd_v4r5_xdlops.cpp:370-413).
struct Copy {
    bs: i64,
    kpb: i64,
    xpb: i64,
    kpack: i64,
}

impl Copy {
    /// Vector along KPack (the Fwd A copy, both WrW copies): thread data = lcm(max(1, K*X*KPack /
    /// bs), vec); the rest `tmp` split between K and X by `more_k` (gcd with KPerBlock first, else
    /// with X first); `swap`: the Padded_Gemm WrW B copy's gcds, which take NPerBlock for the K
    /// share and KPerBlock for the X share (wrw_v4r4_xdlops_padded_gemm.cpp B copy).
    fn along_kpack(&self, vec: i64, more_k: bool, swap: bool, lcm_first: bool, exact: bool) -> bool {
        let Copy { bs, kpb, xpb, kpack } = *self;
        if vec <= 0 || bs <= 0 {
            return false;
        }
        let mut dptc = (kpb * xpb * kpack / bs).max(1);
        if lcm_first {
            dptc = lcm(dptc, vec);
        }
        let tmp = dptc / vec;
        if tmp == 0 {
            return false;
        }
        let (dk, dx) = if more_k {
            let dk = gcd(if swap { xpb } else { kpb }, tmp);
            (dk, tmp / dk)
        } else {
            let dx = gcd(if swap { kpb } else { xpb }, tmp);
            (tmp / dx, dx)
        };
        if dk <= 0 || dx <= 0 {
            return false;
        }
        if kpb % dk != 0 || xpb % dx != 0 || kpack % vec != 0 {
            return false;
        }
        let cluster = (kpb / dk) * (xpb / dx) * (kpack / vec);
        if exact {
            bs == cluster
        } else {
            bs >= cluster
        }
    }

    /// Vector along X (the Fwd B copy; V4R5 over B = X / `waves` per wave and the block size
    /// equal to the cluster): thread data = lcm(max(1, K*X*KPack / bs), vec); with V4R5 it must
    /// be a multiple of vec*waves; the rest split between KPack and K by `more_kpack`.
    fn along_x(&self, vec: i64, more_kpack: bool, waves: Option<i64>) -> bool {
        let Copy { bs, kpb, xpb, kpack } = *self;
        if vec <= 0 || bs <= 0 {
            return false;
        }
        let (xpb, data) = match waves {
            Some(w) => (xpb / w, (kpb * w * (xpb / w) * kpack / bs).max(1)),
            None => (xpb, (kpb * xpb * kpack / bs).max(1)),
        };
        let dptc = lcm(data, vec);
        let tmp = match waves {
            Some(w) => {
                if vec * w == 0 || dptc % (vec * w) != 0 {
                    return false;
                }
                dptc / (vec * w)
            }
            None => dptc / vec,
        };
        if tmp <= 0 {
            return false;
        }
        let (dkp, dk) = if more_kpack {
            let dkp = gcd(kpack, tmp);
            (dkp, tmp / dkp)
        } else {
            let dk = gcd(kpb, tmp);
            (tmp / dk, dk)
        };
        if dkp <= 0 || dk <= 0 {
            return false;
        }
        if kpb % dk != 0 || xpb % vec != 0 || kpack % dkp != 0 {
            return false;
        }
        let cluster = (kpb / dk) * (xpb / vec) * (kpack / dkp);
        if waves.is_some() {
            bs == cluster
        } else {
            bs >= cluster
        }
    }
}

/// BwdData's copies (bwd_v4r1_xdlops.cpp:67-300): Some((cluster along M or N, LDS write vector))
/// or None where MIOpen throws.
fn bwd_copy(p: &Prob, c: &Cfg, a: bool) -> Option<(i64, i64)> {
    let bs = block_size(c);
    if bs <= 0 {
        return None;
    }
    let xpb = if a { c.mpb } else { c.npb };
    let mut src = gcd(4, xpb);
    if a {
        if !(p.y == 1 && p.x == 1) {
            src = 1;
        }
    } else if p.y == 1 && p.x == 1 && p.lph == 0 && p.lpw == 0 && p.rph == 0 && p.rpw == 0 {
        src = gcd(src, p.ho * p.wo);
    } else {
        src = 1;
    }
    let data = lcm((c.kpb * xpb * c.kpack / bs).max(1), src);
    if !a && bs > c.npb && c.kpack > bs / c.npb {
        return None;
    }
    if src <= 0 {
        return None;
    }
    let tmp = data / src;
    if tmp <= 0 {
        return None;
    }
    let more_k = if a { c.a_more } else { !c.b_more };
    let (dk, dkp) = if more_k {
        let dk = gcd(c.kpb, tmp);
        (dk, tmp / dk)
    } else {
        let dkp = gcd(c.kpack, tmp);
        (tmp / dkp, dkp)
    };
    if dk <= 0 || dkp <= 0 {
        return None;
    }
    // A's LDS write vector starts from the buffer-load length (4), B's from the LDS-write one.
    let dst0 = if a { 4 } else { p.lds_write_max() };
    let dst = gcd(dst0.min(dkp), dkp);
    if c.kpb % dk != 0 || xpb % src != 0 || c.kpack % dkp != 0 {
        return None;
    }
    let cluster_x = xpb / src;
    if bs < (c.kpb / dk) * cluster_x * (c.kpack / dkp) {
        return None;
    }
    Some((cluster_x, dst))
}

/// The first rule (R2-R6, in MIOpen's order) a config breaks on a problem, R1 excluded (see
/// [`check`]); `core_only`: only the rules that read no flag and no
/// `GemmBThreadDataPerRead_GemmN` (R2, R3, R6).
fn check_rules(kind: XKind, p: &Prob, c: &Cfg, core_only: bool) -> Result<(), Rule> {
    if !blockwise_ok(p, c) {
        return Err(Rule::BlockwiseGemm);
    }
    let bs = block_size(c);
    let lds = (c.kpb * c.mpb * c.kpack + c.kpb * c.npb * c.kpack) * p.elem();
    match kind {
        XKind::FwdV4R4 | XKind::FwdV4R4Padded | XKind::FwdV4R5 => {
            let padded = (kind == XKind::FwdV4R4Padded).then_some((c.mf, c.nf, c.kf));
            let (m, n, kt, k_extra) = fwd_gemm(p, padded);
            if kind == XKind::FwdV4R5 {
                // fwd_v4r5_xdlops.cpp:626-633: N % NWaves.
                let waves = c.npb / c.npw;
                if waves == 0 || p.n % waves != 0 {
                    return Err(Rule::GemmSize);
                }
            }
            if kt % c.kpack != 0 || m % c.mpb != 0 || n % c.npb != 0 || (kt / c.kpack) % c.kpb != 0 {
                return Err(Rule::GemmSize);
            }
            if !core_only {
                // A: vector along KPack, gcd(4, KPack); Padded_Gemm with a K pad also
                // gcd(.., the unpadded K) (fwd_v4r4_xdlops_padded_gemm.cpp:362-368).
                let mut va = gcd(4, c.kpack);
                if k_extra != 0 {
                    va = gcd(va, kt - k_extra);
                }
                let a = Copy {
                    bs,
                    kpb: c.kpb,
                    xpb: c.mpb,
                    kpack: c.kpack,
                };
                let v4r5 = kind == XKind::FwdV4R5;
                if !a.along_kpack(va, c.a_more, false, !v4r5, v4r5) {
                    return Err(Rule::CopyA);
                }
                let b = Copy {
                    bs,
                    kpb: c.kpb,
                    xpb: c.npb,
                    kpack: c.kpack,
                };
                let ok = if v4r5 {
                    let waves = c.npb / c.npw;
                    let vb = gcd(p.input_read_bound(), c.npb / waves);
                    b.along_x(vb, c.b_more, Some(waves))
                } else {
                    b.along_x(gcd(p.input_read_bound(), c.npb), c.b_more, None)
                };
                if !ok {
                    return Err(Rule::CopyB);
                }
            }
        }
        XKind::WrwV4R4 | XKind::WrwV4R4Padded => {
            let padded = kind == XKind::WrwV4R4Padded;
            let Some((m, n, kt, ..)) = wrw_gemm(p, c, padded) else {
                return Err(Rule::GemmSize);
            };
            if kt % c.kpack != 0 || m % c.mpb != 0 || n % c.npb != 0 || (kt / c.kpack) % c.kpb != 0 {
                return Err(Rule::GemmSize);
            }
            if !core_only {
                let a = Copy {
                    bs,
                    kpb: c.kpb,
                    xpb: c.mpb,
                    kpack: c.kpack,
                };
                if !a.along_kpack(gcd(gcd(4, c.kpack), p.ho * p.wo), c.a_more, false, true, false) {
                    return Err(Rule::CopyA);
                }
                let b = Copy {
                    bs,
                    kpb: c.kpb,
                    xpb: c.npb,
                    kpack: c.kpack,
                };
                if !b.along_kpack(gcd(p.input_read_bound(), c.kpack), c.b_more, padded, true, false) {
                    return Err(Rule::CopyB);
                }
            }
        }
        XKind::BwdV4R1 => {
            for (m, n, kt) in bwd_gemms(p) {
                if kt % c.kpack != 0 || m % c.mpb != 0 || n % c.npb != 0 || (kt / c.kpack) % c.kpb != 0 {
                    return Err(Rule::GemmSize);
                }
            }
            if core_only {
                return Ok(());
            }
            let Some((cm, dst_a)) = bwd_copy(p, c, true) else {
                return Err(Rule::CopyA);
            };
            let Some((cn, dst_b)) = bwd_copy(p, c, false) else {
                return Err(Rule::CopyB);
            };
            // LDS (bwd_v4r1_xdlops.cpp:302-352): blocks aligned to lcm(dstA, dstB, M/clusterM,
            // N/clusterN).
            if cm == 0 || cn == 0 {
                return Err(Rule::Lds);
            }
            let align = lcm(lcm(dst_a, dst_b), lcm(c.mpb / cm, c.npb / cn));
            if align <= 0 {
                return Err(Rule::Lds);
            }
            let a_space = c.kpb * ceil_div(c.mpb, align) * align;
            let b_space = c.kpb * ceil_div(c.npb, align) * align;
            if (a_space + b_space) * p.elem() * c.kpack > 65536 {
                return Err(Rule::Lds);
            }
            return Ok(());
        }
    }
    if lds > 65536 {
        return Err(Rule::Lds);
    }
    Ok(())
}

/// `IsReallyValid` of a full config: Ok, or the first rule it breaks.
pub fn check(kind: XKind, p: &Prob, values: &[i64]) -> Result<(), Rule> {
    if values.len() != kind.names().len() || values.iter().enumerate().any(|(i, v)| !kind.domain(i).contains(v)) {
        return Err(Rule::Value);
    }
    check_rules(kind, p, &kind.config(values), false)
}

/// `IsFastToBeUsedForTuning` (fwd_v4r4_xdlops.cpp:629-807, wrw_v4r4_xdlops.cpp:650-770,
/// bwd_v4r1_xdlops.cpp:420-500; the padded and V4R5 variants): F1 MPerWave*NPerWave <= 64*128;
/// F2 not too many blocks (the grid against the biggest block GEMM's, by compute units); F3
/// 2..4 waves a block; F4/F5 no skinny block or wave GEMM where a squarer one divides (not
/// BwdData); F6 at most 16 (fp32) / 32 values a thread copies; F7 (not BwdData) fp32 KPack <= 4
/// and KPerBlock*KPack >= 8 (16 for fp16/bf16), V4R4 only where the K total is a multiple of it.
pub fn fast(kind: XKind, p: &Prob, c: &Cfg) -> bool {
    if c.mpw * c.npw > 64 * 128 {
        return false;
    }
    let (m, n, kt) = match kind {
        XKind::FwdV4R4 | XKind::FwdV4R5 => {
            let (m, n, k, _) = fwd_gemm(p, None);
            (m, n, k)
        }
        XKind::FwdV4R4Padded => {
            let (m, n, k, _) = fwd_gemm(p, Some((c.mf, c.nf, c.kf)));
            (m, n, k)
        }
        XKind::WrwV4R4 | XKind::WrwV4R4Padded => match wrw_gemm(p, c, kind == XKind::WrwV4R4Padded) {
            Some((m, n, k, ..)) => (m, n, k),
            None => (-1, -1, -1),
        },
        XKind::BwdV4R1 => bwd_gemms(p).first().copied().unwrap_or((0, 0, 0)),
    };
    // F2: C++ int arithmetic (grid size), size_t (the biggest GEMM's grid), float ratio.
    {
        let grid = (m * n) / (c.mpb * c.npb);
        let best = (gcd(256, m) * gcd(128, n)).max(gcd(128, m) * gcd(256, n));
        if best > 0 {
            let grid_best = (m * n) / best;
            let ratio = f64::from(grid as f32 / grid_best as f32);
            let cu = p.num_cu;
            let limit = if grid_best > 5 * cu {
                Some(2.81)
            } else if grid_best > 4 * cu {
                Some(3.61)
            } else if grid_best > 3 * cu {
                Some(4.41)
            } else if grid_best > 2 * cu {
                Some(6.41)
            } else if grid_best > cu {
                Some(12.41)
            } else {
                None
            };
            if limit.is_some_and(|l| ratio > l) {
                return false;
            }
        }
    }
    let waves = (c.mpb / c.mpw) * (c.npb / c.npw);
    if !(waves > 1 && waves <= 4) {
        return false;
    }
    if kind != XKind::BwdV4R1 {
        if c.mpb > 2 * c.npb && n % (2 * c.npb) == 0 {
            return false;
        }
        if c.npb > 2 * c.mpb && m % (2 * c.mpb) == 0 {
            return false;
        }
        if c.mpw > 2 * c.npw && c.npb % (2 * c.npw) == 0 {
            return false;
        }
        if c.npw > 2 * c.mpw && c.mpb % (2 * c.mpw) == 0 {
            return false;
        }
    }
    let bs = waves * 64;
    let a = c.kpb * c.mpb * c.kpack / bs;
    let b = c.kpb * c.npb * c.kpack / bs;
    let most = if p.fp32() { 16 } else { 32 };
    if a > most || b > most {
        return false;
    }
    if kind != XKind::BwdV4R1 {
        // fwd_v4r4_xdlops.cpp:757-776 (V4R4 reads the K total; the others do not).
        let v4r4 = kind == XKind::FwdV4R4;
        let least = if p.fp32() { 8 } else { 16 };
        if p.fp32() && c.kpack > 4 {
            return false;
        }
        if c.kpb * c.kpack < least && (!v4r4 || kt % least == 0) {
            return false;
        }
    }
    true
}

/// `HeuristicInit` (fwd_v4r4_xdlops.cpp:126-259; the same loop in each file): from a start
/// config by precision (all sizes at their top, KPerBlock 8, `GemmBThreadDataPerRead_GemmN` 1,
/// the flags fixed: A false, B true; BwdData both true), an odometer of `PreviousTwoPower` steps
/// over (MPerBlock, NPerBlock, MPerWave, NPerWave, KPack, KPerBlock[, DataPerRead]), the last the
/// fastest; the first config tried is one step past the start and, once every wheel has wrapped,
/// the all-top config is tried last. It looks first for a config that is really valid and fast
/// ([`fast`]), then for one that is really valid; when none is, it keeps the all-top config
/// (MIOpen logs "All attempts unsuccessful"; the solver is then not applicable, except BwdData,
/// whose `IsApplicable` does not ask).
///
/// The odometer visits, in decreasing lexicographic order, every tuple below the start tuple,
/// then the top tuple: this walks the same order with a depth-first search that prunes on the
/// block-size rules, so it stops at the same config without trying each of the up to 127,008.
pub fn heuristic_init(kind: XKind, p: &Prob) -> Cfg {
    let half = p.precision == Precision::Fp16;
    let bf16 = p.precision == Precision::Bf16;
    let bwd = kind == XKind::BwdV4R1;
    let kpack_lo = if half {
        4
    } else if bf16 {
        2
    } else {
        1
    };
    let kpack_hi = if p.fp32() { 4 } else { 8 };
    let has_bread = matches!(kind, XKind::FwdV4R4 | XKind::FwdV4R4Padded | XKind::FwdV4R5);
    let bread_hi = if kind == XKind::FwdV4R4 && p.fp32() { 4 } else { 8 };
    let lo16 = if bwd { 16 } else { 4 };
    // Wheels, most significant first: (lo, hi) of MPB, NPB, MPW, NPW, KPack, KPB, BRead.
    let mut wheels: Vec<(i64, i64)> = vec![
        (4, 256),
        (lo16, 256),
        (4, 128),
        (lo16, 128),
        (kpack_lo, kpack_hi),
        (1, 8),
    ];
    if has_bread {
        wheels.push((1, bread_hi));
    }
    let mut start: Vec<i64> = wheels.iter().map(|w| w.1).collect();
    if has_bread {
        *start.last_mut().unwrap() = 1;
    }
    let top: Vec<i64> = wheels.iter().map(|w| w.1).collect();
    let cfg_of = |t: &[i64]| Cfg {
        mpb: t[0],
        npb: t[1],
        mpw: t[2],
        npw: t[3],
        kpack: t[4],
        kpb: t[5],
        b_read: if has_bread { t[6] } else { 1 },
        a_more: bwd,
        b_more: true,
        mf: 16,
        nf: 64,
        kf: 16,
    };
    let valid = |c: &Cfg| check(kind, p, &kind.values(c)).is_ok();
    // Depth-first in decreasing order; `pred` on complete tuples below `start`.
    fn walk(
        wheels: &[(i64, i64)],
        t: &mut Vec<i64>,
        start: &[i64],
        below: bool,
        prune: &dyn Fn(&[i64]) -> bool,
        pred: &dyn Fn(&[i64]) -> bool,
    ) -> Option<Vec<i64>> {
        let d = t.len();
        if d == wheels.len() {
            return (below && pred(t)).then(|| t.clone());
        }
        let (lo, hi) = wheels[d];
        let mut v = hi;
        while v >= lo {
            // Tuples at or above the start (lexicographically) are not visited before the wrap.
            if below || v <= start[d] {
                t.push(v);
                let below_now = below || v < start[d];
                if !prune(t) {
                    if let Some(found) = walk(wheels, t, start, below_now, prune, pred) {
                        return Some(found);
                    }
                }
                t.pop();
            }
            v /= 2;
        }
        None
    }
    // Necessary conditions on (MPB, NPB, MPW, NPW): the wave GEMM is one of the list, the waves
    // tile the block, 64..256 threads (R2).
    let prune = |t: &[i64]| {
        if t.len() == 4 {
            let (mpb, npb, mpw, npw) = (t[0], t[1], t[2], t[3]);
            if !WAVE_GEMMS.iter().any(|&(m, n, _)| m == mpw && n == npw) || mpb % mpw != 0 || npb % npw != 0 {
                return true;
            }
            let bs = (npb * mpb) / (mpw * npw) * 64;
            return !(64..=256).contains(&bs);
        }
        false
    };
    let round = |want_fast: bool| -> Option<Cfg> {
        let pred = |t: &[i64]| {
            let c = cfg_of(t);
            valid(&c) && (!want_fast || fast(kind, p, &c))
        };
        let mut t = Vec::with_capacity(wheels.len());
        if let Some(found) = walk(&wheels, &mut t, &start, false, &prune, &pred) {
            return Some(cfg_of(&found));
        }
        pred(&top).then(|| cfg_of(&top))
    };
    round(true).or_else(|| round(false)).unwrap_or_else(|| cfg_of(&top))
}

/// The rules of one solver on one problem.
pub struct Rules {
    pub kind: XKind,
    pub prob: Prob,
    valid: std::sync::OnceLock<Vec<Vec<i64>>>,
}

impl Rules {
    pub fn new(kind: XKind, prob: Prob) -> Rules {
        Rules {
            kind,
            prob,
            valid: std::sync::OnceLock::new(),
        }
    }

    /// Every valid config over the domains, in domain order.
    pub fn valid_configs(&self) -> Vec<Vec<i64>> {
        let n = self.kind.names().len();
        let mut out = Vec::new();
        let mut buf = Vec::with_capacity(n);
        fn walk(r: &Rules, n: usize, buf: &mut Vec<i64>, out: &mut Vec<Vec<i64>>) {
            if buf.len() == n {
                out.push(buf.clone());
                return;
            }
            for &v in r.kind.domain(buf.len()) {
                buf.push(v);
                if r.prefix_valid(buf) {
                    walk(r, n, buf, out);
                }
                buf.pop();
            }
        }
        walk(self, n, &mut buf, &mut out);
        out
    }
}

impl IntRules for Rules {
    fn config_len(&self) -> usize {
        self.kind.names().len()
    }

    /// Each value in its domain (R1); with the block, wave and pack sizes (and factors) known,
    /// R2, R3 and R6; the whole config, every rule.
    fn prefix_valid(&self, prefix: &[i64]) -> bool {
        let kind = self.kind;
        let n = kind.names().len();
        if prefix.len() > n || prefix.iter().enumerate().any(|(i, v)| !kind.domain(i).contains(v)) {
            return false;
        }
        if prefix.len() == n {
            return check_rules(kind, &self.prob, &kind.config(prefix), false).is_ok();
        }
        if prefix.len() >= kind.core_len() {
            return check_rules(kind, &self.prob, &kind.config(prefix), true).is_ok();
        }
        true
    }

    /// Exact: some valid config extends the prefix with later values in `domain`.
    fn completable(&self, prefix: &[i64], domain: &[i64]) -> bool {
        self.prefix_valid(prefix) && completable_in(self.valid.get_or_init(|| self.valid_configs()), prefix, domain)
    }
}
