//! A small seeded generator for the unit tests' random samples.

/// A xorshift generator from `seed` (not zero): each call gives the next 64 bits. Not for anything
/// but tests: fast, reproducible, and good enough to scatter samples.
pub(crate) fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut rng = TestRng::new(seed);
    move || rng.next()
}

/// The generator behind [`xorshift`], with the draws the unit tests ask for.
pub(crate) struct TestRng(u64);

impl TestRng {
    /// A generator from `seed` (not zero).
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A uniform index below `n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A uniform float in `[low, high)`.
    pub(crate) fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
}
