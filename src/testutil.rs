//! Deterministic random numbers for tests and benchmarks (no dependency needed).

/// A 64-bit linear congruential generator (Knuth's MMIX constants).
#[derive(Debug, Clone)]
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }

    /// Uniform in [0, 1).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 29) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in [-scale, scale), never exactly zero.
    pub fn value(&mut self, scale: f32) -> f32 {
        let v = (self.next_f32() * 2.0 - 1.0) * scale;
        if v == 0.0 {
            scale * 0.5
        } else {
            v
        }
    }

    pub fn vec(&mut self, len: usize, scale: f32) -> Vec<f32> {
        (0..len).map(|_| self.value(scale)).collect()
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}
