//! Keeping the items of a run that pass a test, in order: the verdicts of 64 items at a time are
//! gathered into a mask without a branch, then the kept items are visited from the mask.
//!
//! Written at its place whatever the verdict, with the place moved on by the verdict, each kept item's
//! store would wait on the verdicts of the items before it. On workload W1 at 10,000 colliders the
//! broad phase's filter of the build's pairs took about 59 µs a frame that way and about 40 µs this
//! way, both writing each pair's rank beside it and looking up for each pair whether its colliders
//! moved (temporary timers).

/// Calls `visit` with the index of each of the `len` items for which `kept` holds, in order.
#[inline(always)]
pub(crate) fn for_each_kept(
    len: usize,
    kept: impl Fn(usize) -> bool,
    mut visit: impl FnMut(usize),
) {
    for start in (0..len).step_by(64) {
        let end = (start + 64).min(len);
        let mut mask = 0_u64;
        for k in start..end {
            mask |= u64::from(kept(k)) << (k - start);
        }
        while mask != 0 {
            visit(start + mask.trailing_zeros() as usize);
            mask &= mask - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_exactly_the_kept_items_in_order_across_blocks() {
        for len in [0, 1, 63, 64, 65, 130, 1000] {
            for modulus in [1, 2, 3, 7, 64, 100] {
                let mut visited = Vec::new();
                for_each_kept(len, |k| (k * 7 + 3) % modulus == 0, |k| visited.push(k));
                let expected: Vec<usize> =
                    (0..len).filter(|k| (k * 7 + 3) % modulus == 0).collect();
                assert_eq!(visited, expected, "{len} items, every {modulus}");
            }
        }
    }
}
