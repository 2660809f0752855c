//! Element-wise exp, logistic sigmoid and tanh in a form the compiler vectorises.
//!
//! `exp` reduces x = n·ln2 + r with |r| <= ln2/2 and evaluates a degree-6 polynomial for e^r
//! (relative error below 2 ulp over the clamped range), then scales by 2^n through the exponent
//! bits. The exact logistic is 1 / (1 + e^-x); tanh(x) = 2·σ(2x) - 1 (absolute error ~1e-7,
//! which is what the engine's 1e-4 absolute tolerance needs).

/// e^x, clamped to the finite f32 range. NaN in gives NaN out.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    let xc = x.clamp(-87.3, 88.3);
    // Round to nearest with the 1.5*2^23 trick: no libm call, so loops over it vectorise.
    const ROUNDER: f32 = 12_582_912.0;
    let shifted = xc * LOG2E + ROUNDER;
    let n = shifted - ROUNDER;
    let r = xc - n * LN2_HI - n * LN2_LO;
    // Taylor coefficients 1/k! up to k = 6, Horner form.
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    // The low mantissa bits of `shifted` hold n as an integer: 2^n from integer ops alone
    // (a float-to-int cast would stop the loop from vectorising).
    let n_int = shifted.to_bits().wrapping_sub(ROUNDER.to_bits()) as i32;
    let scale = f32::from_bits(((n_int + 127) as u32) << 23);
    let y = p * scale;
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// The logistic function 1 / (1 + e^-x).
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

/// Hyperbolic tangent through the logistic.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    2.0 * sigmoid(2.0 * x) - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_close_to_std_over_range() {
        let mut worst = 0f64;
        let mut x = -87.0f32;
        while x < 88.0 {
            let got = exp(x) as f64;
            let want = (x as f64).exp();
            worst = worst.max(((got - want) / want).abs());
            x += 0.0137;
        }
        assert!(worst < 4e-7, "worst relative error {worst}");
    }

    #[test]
    fn sigmoid_and_tanh_close_to_f64() {
        let mut x = -30.0f32;
        while x < 30.0 {
            let s = 1.0 / (1.0 + (-(x as f64)).exp());
            assert!((sigmoid(x) as f64 - s).abs() < 1e-7, "sigmoid({x})");
            assert!((tanh(x) as f64 - (x as f64).tanh()).abs() < 3e-7, "tanh({x})");
            x += 0.0173;
        }
    }

    #[test]
    fn extremes_and_nan() {
        assert!(sigmoid(-1e30) >= 0.0 && sigmoid(-1e30) < 1e-30);
        assert!(sigmoid(1e30) == 1.0);
        assert!(tanh(1e30) == 1.0 && tanh(-1e30) == -1.0);
        assert!(exp(f32::NAN).is_nan());
        assert!(sigmoid(f32::NAN).is_nan());
    }
}
