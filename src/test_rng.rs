//! The tests' one seeded generator: the unit tests use it as `crate::test_rng`, and the integration
//! tests and the benchmarks include this file as a module of their own.

/// A xorshift generator from `seed` (not zero): each call gives the next 64 bits.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut rng = TestRng::new(seed);
    move || rng.next()
}

/// A seeded xorshift generator, for tests and benchmarks only: fast, the same samples on every run and
/// machine, and good enough to scatter them.
#[derive(Clone, Debug)]
pub struct TestRng(u64);

impl TestRng {
    /// A generator from `seed`; zero, which xorshift would never leave, counts as one.
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    /// The next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A uniform index below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A uniform float in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A uniform float in `[low, high)`.
    pub fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }
}
