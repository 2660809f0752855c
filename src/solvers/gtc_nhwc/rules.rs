//! The problem quantities, validity rules and static defaults of the three GTC NHWC solvers, as
//! `../shared/miopen/solvers/ConvAsmImplicitGemmGTCDynamic{Fwd,Bwd,Wrw}XdlopsNHWC.md` and
//! `GTC_NHWC_COMMON.md` transcribe them (ROCm/MIOpen 2d1fd997a,
//! `src/solver/conv/conv_asm_implicit_gemm_gtc_{fwd,bwd,wrw}_nhwc.cpp`); rule names (F4, B5,
//! W6, ...) are the write-ups'.
//!
//! All arithmetic is in `i128` on sizes clamped to MIOpen's `int`, so nothing overflows; where
//! MIOpen would divide by zero (a zero grid) the config is invalid.

use super::catalogue::{Catalogue, Entry};
use crate::problem::{ConvProblem, Direction, Precision, MAX_FIELD_VALUE};

/// `0xffffffff`: the 32-bit limits of the kernels' grid arithmetic and tensor offsets.
pub const U32_MAX: i128 = 0xffff_ffff;

/// The largest split value of each direction's tuner (`{FWD,BWD,WRW}_MAX_GEMM_K_SPLITS`).
pub fn max_gks(d: Direction) -> i64 {
    match d {
        Direction::Forward | Direction::BackwardData => 8,
        Direction::BackwardWeights => 10,
    }
}

/// The split values the tuner tries for an entry: 0 for an entry that cannot split, else
/// `1..=max` (`NextLinear<1, MAX>`).
pub fn gks_domain(d: Direction, e: &Entry) -> std::ops::RangeInclusive<i64> {
    if e.can_split {
        1..=max_gks(d)
    } else {
        0..=0
    }
}

fn size(v: u64) -> i128 {
    i128::from(v.min(MAX_FIELD_VALUE))
}

fn ceil_div(a: i128, b: i128) -> i128 {
    if b <= 0 {
        0
    } else {
        (a + b - 1).div_euclid(b)
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `igemm_split_batch_size` (`asm_implicit_gemm.hpp:243-296`): how many batch slices keep each
/// slice's larger tensor under 4 GiB; 0 when one image alone does not fit (not applicable).
/// `hi, wi` / `ho, wo`: the sizes of the tensors with `c` / `k` channels.
pub fn split_batch_size(hi: i128, wi: i128, ho: i128, wo: i128, n: i128, k: i128, c: i128, bytes: i128) -> i128 {
    let image = (c * hi * wi * bytes).max(k * ho * wo * bytes);
    if image >= U32_MAX || image <= 0 || n <= 0 {
        return 0;
    }
    let mut max_n = U32_MAX / image;
    if max_n > n {
        max_n = n % max_n;
    } else if max_n < n {
        let mut m = n / max_n;
        let sqrt_n = (n as f64).sqrt() as i128;
        while n % max_n != 0 {
            if n % m == 0 {
                max_n = n / m;
            } else {
                m += 1;
                if m > sqrt_n {
                    max_n = 1;
                }
            }
        }
    }
    n / max_n
}

/// `ComputeMatrixPadSize(col, cpb, row, rpb)`.
pub fn pad_size(col: i128, cpb: i128, row: i128, rpb: i128) -> i128 {
    let ce = ceil_div(col, cpb) * cpb - col;
    let re = ceil_div(row, rpb) * rpb - row;
    ce * row + re * col + ce * re
}

/// `HeuristicInitMacroTileNoPadGemmK`: the first tile dividing M, N and K; else, among tiles
/// dividing K, the (M, N) tile of least padding and the first tile with it that divides K;
/// `None` when there is none.
pub fn macro_tile(m: i128, n: i128, k: i128, tiles: &[(i128, i128, i128)]) -> Option<(i128, i128, i128)> {
    if let Some(&t) = tiles.iter().find(|(a, b, c)| m % a == 0 && n % b == 0 && k % c == 0) {
        return Some(t);
    }
    let mut best: Option<(i128, (i128, i128))> = None;
    for &(a, b, c) in tiles {
        if k % c != 0 {
            continue;
        }
        let pad = pad_size(m, a, k, c) + pad_size(n, b, k, c) + pad_size(m, a, n, b);
        if best.is_none_or(|(p, _)| pad < p) {
            best = Some((pad, (a, b)));
        }
    }
    let (_, (a, b)) = best?;
    tiles.iter().find(|t| t.0 == a && t.1 == b && k % t.2 == 0).copied()
}

/// `ComputeLog2GemmKGlobalSplitsWith2DMerge(grid, max_grid, d0, d1, kpb, max_log2)`.
pub fn log2_splits(grid: i128, max_grid: i128, d0: i128, d1: i128, kpb: i128, max_log2: u32) -> i128 {
    let mut r = 0;
    for gs in 0..max_log2 {
        if (grid << gs) > max_grid || d0 % (1i128 << gs) != 0 || kpb == 0 || ((d0 >> gs) * d1) % kpb != 0 {
            break;
        }
        r = i128::from(gs);
    }
    r
}

/// A problem as one GTC solver sees it (each direction's "in" and "out", MIOpen's normalized
/// strides and dilations).
#[derive(Debug, Clone)]
pub struct Dims {
    pub direction: Direction,
    pub precision: Precision,
    pub n: i128,
    /// x's channels (forward C) and y's (forward K).
    pub c: i128,
    pub k: i128,
    /// x's size and y's (dy's) size.
    pub hi: i128,
    pub wi: i128,
    pub ho: i128,
    pub wo: i128,
    pub y: i128,
    pub x: i128,
    pub pad_h: i128,
    pub pad_w: i128,
    pub stride_h: i128,
    pub stride_w: i128,
    pub dilation_h: i128,
    pub dilation_w: i128,
    pub group: i128,
    pub bytes: i128,
    pub unit_conv: bool,
    pub splits_4g: i128,
}

impl Dims {
    pub fn new(p: &ConvProblem) -> Dims {
        let (hi, wi, ho, wo) = (size(p.in_h), size(p.in_w), size(p.out_h), size(p.out_w));
        let (y, x) = (size(p.filter_h), size(p.filter_w));
        // fwd normalizes the stride by x's size (its "in"), bwd by dx's (its "out"): both are
        // x's size here; wrw does not normalize it.
        let (stride_h, stride_w) = match p.direction {
            Direction::BackwardWeights => (size(p.stride_h), size(p.stride_w)),
            _ => (
                if hi > 1 { size(p.stride_h) } else { 1 },
                if wi > 1 { size(p.stride_w) } else { 1 },
            ),
        };
        let dilation_h = if y > 1 { size(p.dilation_h) } else { 1 };
        let dilation_w = if x > 1 { size(p.dilation_w) } else { 1 };
        let (pad_h, pad_w) = (size(p.pad_h), size(p.pad_w));
        let bytes = if p.precision == Precision::Fp32 { 4 } else { 2 };
        let (n, c, k) = (size(p.n), size(p.c), size(p.k));
        let unit_conv = x == 1
            && y == 1
            && stride_h == 1
            && stride_w == 1
            && dilation_h == 1
            && dilation_w == 1
            && pad_h == 0
            && pad_w == 0;
        Dims {
            direction: p.direction,
            precision: p.precision,
            n,
            c,
            k,
            hi,
            wi,
            ho,
            wo,
            y,
            x,
            pad_h,
            pad_w,
            stride_h,
            stride_w,
            dilation_h,
            dilation_w,
            group: size(p.groups).max(1),
            bytes,
            unit_conv,
            splits_4g: split_batch_size(hi, wi, ho, wo, n, k, c, bytes),
        }
    }

    /// bwd: `(h_tilda_slice * w_tilda_slice, y_tilda * x_tilda)` (bwd:409-467).
    fn bwd_tilda(&self) -> (i128, i128) {
        let (sh, sw) = (self.stride_h.max(1), self.stride_w.max(1));
        let (dh, dw) = (self.dilation_h, self.dilation_w);
        let y_tilda = sh / gcd(sh, dh).max(1);
        let x_tilda = sw / gcd(sw, dw).max(1);
        let h_tilda = self.ho + (dh * (self.y - 1) + sh - 1) / sh;
        let w_tilda = self.wo + (dw * (self.x - 1) + sw - 1) / sw;
        let h_left = (self.pad_h - dh * (y_tilda - 1)).max(0) / sh;
        let w_left = (self.pad_w - dw * (x_tilda - 1)).max(0) / sw;
        let h_right = h_tilda.min((self.pad_h + self.hi - 1 + sh - 1) / sh + 1);
        let w_right = w_tilda.min((self.pad_w + self.wi - 1 + sw - 1) / sw + 1);
        ((h_right - h_left) * (w_right - w_left), y_tilda * x_tilda)
    }

    /// The kernel's grid size for an entry with split `gks` (fwd:339-366, bwd:409-467,
    /// wrw:336-362; wrw has no split factor), and the third term of the 32-bit check
    /// (`splits_4G`, or wrw's occupancy).
    pub fn grid(&self, e: &Entry, gks: i64) -> (i128, i128) {
        let (mpb, npb) = (i128::from(e.mpb), i128::from(e.npb));
        let split = 1i128 << gks.clamp(0, 62);
        let splits = self.splits_4g.max(1);
        match self.direction {
            Direction::Forward => {
                let gemm_m = (self.n / splits) * self.ho * self.wo;
                let gemm_n = self.k / self.group;
                (self.group * ceil_div(gemm_m, mpb) * ceil_div(gemm_n, npb) * split, self.splits_4g)
            }
            Direction::BackwardData => {
                let (slice, num_gemm) = self.bwd_tilda();
                let gemm_m = (self.n / splits) * slice;
                let gemm_n = self.c / self.group;
                let mut grid = self.group * ceil_div(gemm_m, mpb) * ceil_div(gemm_n, npb) * split;
                if e.multihead != 0 {
                    grid *= num_gemm;
                }
                (grid, self.splits_4g)
            }
            Direction::BackwardWeights => {
                let tb3 = i128::from(e.tb[3]).max(1);
                let c_padded = ceil_div(self.c / self.group, tb3) * tb3;
                let gemm_n = ceil_div(c_padded * self.y * self.x, npb) * npb;
                let gemm_m = self.k / self.group;
                (self.group * ceil_div(gemm_m, mpb) * ceil_div(gemm_n, npb), occupancy(e))
            }
        }
    }

    /// The 32-bit launch check `block_size * grid_size * third <= 0xffffffff` (F4, B4, W6 and
    /// the applicability check with the largest tile).
    pub fn launch_fits(&self, e: &Entry, gks: i64) -> bool {
        let (grid, third) = self.grid(e, gks);
        e.block_size() * grid * third <= U32_MAX
    }
}

/// wrw's `ComputeKernelOccupancy` (wrw:364-441).
pub fn occupancy(e: &Entry) -> i128 {
    let ts: i128 = if e.precision == Precision::Fp32 { 4 } else { 2 };
    let block = e.block_size().max(1);
    let acc = i128::from(e.mpb) * i128::from(e.npb) / block;
    let lds_a = ts * i128::from(e.mpb) * i128::from(e.kpb);
    let lds_b = ts * i128::from(e.npb) * i128::from(e.kpb);
    let lds_single = 2 * lds_a.max(lds_b);
    let aux = if e.nxe == 0 { 36 } else { 42 };
    let a_epv = if ts == 2 && e.ta[3] > 1 { 2 } else { 1 };
    let b_epv = if ts == 2 && e.tb[3] > 1 { 2 } else { 1 };
    let sz = if e.precision == Precision::Fp16 { 2 } else { 1 };
    let (ta, tb) = (i128::from(e.ta[1] * e.ta[3]), i128::from(e.tb[1] * e.tb[3]));
    let vgpr = ta / a_epv + tb / b_epv + ta / sz + tb / sz + aux;
    let lds = if ts == 2 {
        if lds_single >= 32768 || (lds_single <= 16384 && lds_single > 8192 && acc < 128 && vgpr < 85) {
            lds_single
        } else {
            2 * lds_single
        }
    } else {
        lds_single
    };
    if lds <= 0 || acc <= 0 || vgpr <= 0 {
        return 0;
    }
    (65536 / lds).min((256 / acc).min(256 / vgpr))
}

/// `IsValid` of an entry with split `gks` for the problem (the write-ups' F1-F10, B1-B10,
/// W1-W6; the rules that only an environment switch turns on are left out). `spare`: also the
/// rule of the tuner's spare set (F10, B10, W5), which every tuned value passes.
pub fn is_valid(d: &Dims, e: &Entry, gks: i64, spare: bool) -> bool {
    if e.precision != d.precision || gks < 0 {
        return false;
    }
    let fp16 = d.precision == Precision::Fp16;
    let bf16 = d.precision == Precision::Bf16;
    let group = d.group;
    let (npb, kpb) = (i128::from(e.npb), i128::from(e.kpb));
    let vs_gcd = gcd(npb, if e.vector_store == 0 { 8 } else { i128::from(e.vector_store) });
    let divides = |a: i128, b: i128| b != 0 && a % b == 0;
    match d.direction {
        Direction::Forward => {
            // F3
            if fp16 && gks != 0 && e.vector_store != 1 && d.splits_4g > 1 {
                return false;
            }
            // F4
            if !d.launch_fits(e, gks) {
                return false;
            }
            // F5
            if e.merge_e != 0 {
                let cg = d.c / group;
                if cg <= 0 || d.x <= 0 || d.y <= 0 {
                    return false;
                }
                let s_y = (kpb / (d.x * cg)) % d.y;
                let s_x = (kpb / cg) % d.x;
                let s_c = kpb % cg;
                if !(cg < 0xffffff && d.y < 0xffffff && d.x < 0xffffff && s_y < 256 && s_x < 256 && s_c < 256) {
                    return false;
                }
            }
            let pad_c = e.pad_c();
            if !pad_c {
                // F6
                let c_split = d.c >> gks.min(62);
                if c_split == 0 || !divides(c_split / group, kpb) {
                    return false;
                }
                // F7
                if fp16 {
                    let kg = d.k / group;
                    let ok = if gks != 0 { kg % 2 == 0 } else { divides(kg, vs_gcd) };
                    if !ok {
                        return false;
                    }
                }
                // F8
                if bf16 && gks == 0 && !divides(d.k / group, vs_gcd) {
                    return false;
                }
            }
            // F9
            if e.nxe == 0 && !d.unit_conv {
                return false;
            }
            // F10
            !(spare && d.unit_conv && e.nxe != 0 && !pad_c)
        }
        Direction::BackwardData => {
            // B3
            if fp16 && gks != 0 && e.vector_store != 1 && d.splits_4g > 1 {
                return false;
            }
            // B4
            if !d.launch_fits(e, gks) {
                return false;
            }
            // B5, B6
            if !(e.ta[1] == 1 && e.merge_e == 1) {
                let kg = d.k / group;
                if gks != 0 && (kpb << gks.min(62)) > kg {
                    return false;
                }
                if !divides((d.k >> gks.min(62)) / group, kpb) {
                    return false;
                }
            }
            let exempt = e.ta[1] == 1 && e.tb[3] == 1 && e.merge_e == 1 && gks == 0;
            let cg = d.c / group;
            // B7
            if fp16 && !exempt {
                let ok = if gks != 0 { cg % 2 == 0 } else { divides(cg, vs_gcd) };
                if !ok {
                    return false;
                }
            }
            // B8
            if bf16 && !exempt && gks == 0 && !divides(cg, vs_gcd) {
                return false;
            }
            // B9
            if e.nxe == 0 && !d.unit_conv {
                return false;
            }
            // B10
            !(spare && d.unit_conv && e.nxe != 0 && !e.pad_c())
        }
        Direction::BackwardWeights => {
            // W3
            if e.nxe == 0 && !d.unit_conv {
                return false;
            }
            // W4
            if (fp16 || bf16) && !(divides(d.c / group, i128::from(e.tb[3])) && divides(d.k / group, i128::from(e.ta[3]))) {
                return false;
            }
            // W5
            if spare && d.unit_conv && e.nxe != 0 {
                return false;
            }
            // W6
            d.launch_fits(e, gks)
        }
    }
}

/// The largest tile of each direction and precision that `IsApplicable` checks the 32-bit limit
/// with (fwd:319-337, bwd:389-407, wrw:316-334): (mpb, npb, kpb, multihead, nxe, ta, ca, tb, cb).
fn largest_tile(d: Direction, p: Precision) -> Entry {
    let fp32 = p == Precision::Fp32;
    type Tile = (i64, i64, i64, i64, i64, [i64; 4], [i64; 4], [i64; 4], [i64; 4]);
    let t: Tile = match (d, fp32) {
        (Direction::Forward, true) => (256, 64, 16, 0, 1, [1, 4, 4, 1], [1, 4, 1, 64], [1, 4, 1, 1], [1, 4, 1, 64]),
        (Direction::Forward, false) => (256, 128, 32, 0, 1, [1, 8, 4, 1], [1, 4, 1, 64], [1, 8, 2, 1], [1, 4, 1, 64]),
        (Direction::BackwardData, true) => (256, 64, 16, 1, 1, [1, 4, 4, 1], [1, 4, 1, 64], [1, 4, 1, 1], [1, 4, 1, 64]),
        (Direction::BackwardData, false) => (256, 256, 32, 1, 1, [1, 8, 4, 1], [1, 4, 1, 64], [1, 8, 1, 4], [1, 4, 1, 64]),
        (Direction::BackwardWeights, true) => (256, 128, 16, 0, 0, [1, 1, 1, 16], [1, 16, 1, 16], [1, 1, 1, 8], [1, 16, 1, 16]),
        (Direction::BackwardWeights, false) => (256, 256, 32, 0, 1, [1, 4, 1, 8], [1, 8, 1, 32], [1, 4, 1, 8], [1, 8, 1, 32]),
    };
    Entry {
        index: 0,
        precision: p,
        nxb: 0,
        nxe: t.4,
        mpb: t.0,
        npb: t.1,
        kpb: t.2,
        multihead: t.3,
        vector_store: 0,
        can_split: false,
        merge_e: 0,
        ta: t.5,
        ca: t.6,
        tb: t.7,
        cb: t.8,
        text: Vec::new(),
    }
}

/// `IsApplicable`'s size checks: each image under 4 GiB (`splits_4G != 0`) and the largest
/// tile's launch within 32 bits. `Err` names the check.
pub fn size_limits(d: &Dims) -> Result<(), String> {
    if d.splits_4g == 0 {
        return Err("one image of the larger tensor is 4 GiB or more (igemm_split_batch_size = 0)".into());
    }
    let tile = largest_tile(d.direction, d.precision);
    if !d.launch_fits(&tile, 0) {
        return Err("block size x grid size x splits of the largest tile exceed 0xffffffff".into());
    }
    Ok(())
}

/// The tile lists `HeuristicInit` tries, in order.
fn tile_list(d: Direction, p: Precision) -> Vec<(i128, i128, i128)> {
    let fp32 = p == Precision::Fp32;
    let list: &[(i128, i128, i128)] = match (d, fp32) {
        (Direction::Forward, true) => &[
            (128, 128, 16),
            (128, 128, 8),
            (128, 64, 16),
            (128, 64, 32),
            (64, 128, 16),
            (128, 32, 32),
            (128, 32, 16),
            (256, 64, 16),
            (64, 256, 16),
            (64, 64, 32),
            (64, 32, 32),
            (64, 16, 32),
            (32, 64, 32),
            (16, 64, 32),
        ],
        (Direction::Forward, false) => &[
            (128, 128, 32),
            (256, 128, 32),
            (128, 256, 32),
            (128, 64, 32),
            (64, 128, 32),
            (256, 64, 32),
            (64, 256, 32),
            (64, 64, 64),
            (256, 32, 32),
            (32, 256, 32),
            (128, 32, 32),
            (32, 128, 32),
            (64, 32, 32),
            (32, 64, 32),
        ],
        (Direction::BackwardData, true) => &[
            (128, 128, 16),
            (128, 64, 16),
            (128, 64, 32),
            (64, 128, 16),
            (128, 32, 32),
            (128, 32, 16),
            (256, 64, 16),
            (64, 256, 16),
            (64, 64, 32),
            (64, 32, 32),
            (64, 32, 16),
            (64, 16, 32),
            (64, 16, 16),
            (32, 64, 32),
            (16, 64, 32),
        ],
        (Direction::BackwardData, false) => &[
            (128, 128, 32),
            (256, 128, 32),
            (128, 256, 32),
            (256, 256, 32),
            (128, 64, 32),
            (64, 128, 32),
            (256, 64, 32),
            (64, 256, 32),
            (64, 64, 64),
            (64, 64, 16),
            (256, 32, 32),
            (128, 32, 32),
            (32, 128, 32),
            (64, 32, 32),
            (64, 32, 16),
            (32, 64, 32),
        ],
        (Direction::BackwardWeights, true) => &[
            (128, 128, 16),
            (128, 64, 16),
            (64, 128, 16),
            (128, 32, 16),
            (256, 64, 16),
            (64, 256, 16),
            (64, 64, 16),
            (64, 32, 16),
            (32, 64, 16),
            (32, 32, 32),
        ],
        (Direction::BackwardWeights, false) => &[
            (256, 256, 32),
            (256, 128, 16),
            (256, 128, 32),
            (128, 256, 16),
            (128, 256, 32),
            (128, 128, 16),
            (128, 128, 32),
            (256, 64, 16),
            (256, 64, 32),
            (64, 256, 16),
            (64, 256, 32),
            (128, 64, 32),
            (64, 128, 16),
            (64, 128, 32),
            (64, 64, 64),
            (64, 64, 32),
            (256, 32, 32),
            (32, 256, 32),
            (64, 32, 32),
            (64, 64, 16),
        ],
    };
    let mut list = list.to_vec();
    // bf16 = the fp16 list without 256x256x32 (bwd, wrw).
    if p == Precision::Bf16 && d != Direction::Forward {
        list.retain(|&t| t != (256, 256, 32));
    }
    list
}

/// MIOpen's static default (`HeuristicInit`, `GetDefaultPerformanceConfig`) as (entry, split,
/// vector_store). `vector_store` differs from the entry's only where wrw's `SetParamsForKSplit`
/// rewrites it; `index` stays 0 in MIOpen's default (the params text of a default prints 0
/// there). `cus`: the device's compute units (wrw only).
pub fn static_default(d: &Dims, cat: &Catalogue, cus: i128) -> Option<(usize, i64, i64)> {
    let entries: Vec<&Entry> = cat.entries.iter().filter(|e| e.precision == d.precision).collect();
    let group = d.group;
    let tiles = tile_list(d.direction, d.precision);
    let (gemm_m, gemm_n, gemm_k) = match d.direction {
        Direction::Forward => (d.n * d.ho * d.wo, d.k / group, (d.c / group) * d.y * d.x),
        Direction::BackwardData => (d.n * d.bwd_tilda().0, d.c / group, d.k / group),
        Direction::BackwardWeights => (d.k / group, (d.c / group) * d.y * d.x, 0),
    };
    let odd = matches!(d.precision, Precision::Fp16 | Precision::Bf16)
        && match d.direction {
            Direction::Forward => (d.k / group) % 2 != 0,
            _ => (d.c / group) % 2 != 0,
        };
    let wrw_split = |e: &Entry| -> Option<i64> {
        // wrw: need_k_split = grid <= 600 || num_cu * occupancy / grid != 0; then the split is
        // the occupancy (SetParamsForKSplit).
        let (grid, occ) = d.grid(e, i64::from(e.can_split));
        let gks = if grid > 0 { cus * occ / grid } else { 0 };
        (grid <= 600 || gks != 0).then_some(occ as i64)
    };
    let with_split = |e: &Entry, split: Option<i64>| -> (usize, i64, i64) {
        let flag = i64::from(e.can_split);
        match split {
            None => (e.index, flag, e.vector_store),
            Some(occ) => {
                // SetParamsForKSplit: vector_store = 1 for fp16 with tb[3] == 1, bf16 likewise.
                let vs = if matches!(d.precision, Precision::Fp16 | Precision::Bf16) && e.tb[3] == 1 {
                    1
                } else {
                    e.vector_store
                };
                (e.index, occ, vs)
            }
        }
    };
    let pad_fallback = || -> Option<(usize, i64, i64)> {
        let mut best: Option<(i128, &Entry)> = None;
        for &e in &entries {
            let (mpb, npb, kpb) = (i128::from(e.mpb), i128::from(e.npb), i128::from(e.kpb));
            let pad = match d.direction {
                Direction::BackwardWeights => {
                    if d.precision != Precision::Fp32
                        && ((d.c / group) % i128::from(e.tb[3]).max(1) != 0 || (d.k / group) % i128::from(e.ta[3]).max(1) != 0)
                    {
                        continue;
                    }
                    let n = if d.precision == Precision::Fp32 {
                        let tb3 = i128::from(e.tb[3]).max(1);
                        let c_padded = ceil_div(d.c / group, tb3) * tb3;
                        ceil_div(c_padded * d.y * d.x, npb) * npb
                    } else {
                        gemm_n
                    };
                    pad_size(gemm_m, mpb, n, npb)
                }
                _ => {
                    if !e.pad_c() {
                        continue;
                    }
                    pad_size(gemm_m, mpb, gemm_k, kpb) + pad_size(gemm_n, npb, gemm_k, kpb) + pad_size(gemm_m, mpb, gemm_n, npb)
                }
            };
            if best.is_none_or(|(p, _)| pad < p) {
                best = Some((pad, e));
            }
        }
        // No candidate: MIOpen copies entry 0 of the catalogue (`selected_index` stays 0).
        let e = best.map(|(_, e)| e).or_else(|| cat.entries.first())?;
        Some(match d.direction {
            Direction::BackwardWeights => with_split(e, wrw_split(e)),
            _ => with_split(e, None),
        })
    };
    let tile = macro_tile(gemm_m, gemm_n, gemm_k, &tiles);
    let Some((mpb, npb, kpb)) = tile.filter(|_| !odd) else {
        return pad_fallback();
    };
    for &e in &entries {
        if (i128::from(e.mpb), i128::from(e.npb), i128::from(e.kpb)) != (mpb, npb, kpb) {
            continue;
        }
        let flag = i64::from(e.can_split);
        let nxe_ok = if d.unit_conv { e.nxe == 0 } else { e.nxe != 0 };
        if !nxe_ok || !is_valid(d, e, flag, false) {
            continue;
        }
        return Some(match d.direction {
            Direction::Forward | Direction::BackwardData => {
                let fp16 = d.precision == Precision::Fp16;
                let (grid, _) = d.grid(e, flag);
                let (d0, odd_8) = match d.direction {
                    Direction::Forward => (d.c / group, d.k % 8 != 0 && d.k % 2 == 0),
                    _ => (d.k / group, d.c % 8 != 0 && d.c % 2 == 0),
                };
                let gks = log2_splits(grid, 1200, d0, 1, kpb, 8);
                let need = (fp16 && odd_8) || gks != 0;
                if need && gks > 0 {
                    (e.index, gks as i64, e.vector_store)
                } else {
                    (e.index, flag, e.vector_store)
                }
            }
            Direction::BackwardWeights => with_split(e, wrw_split(e)),
        });
    }
    pad_fallback()
}
