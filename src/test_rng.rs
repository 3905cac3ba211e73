//! A small seeded generator for the unit tests' random samples.

/// A xorshift generator from `seed` (not zero): each call gives the next 64 bits. Not for anything
/// but tests: fast, reproducible, and good enough to scatter samples.
pub(crate) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}
