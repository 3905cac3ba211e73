//! Asking the memory early for what a loop reads out of order.
//!
//! Several passes read or write an array in an order of another array's making: the grid's order of
//! the colliders gathered in the order of Bevy's tables, the exact tests' second collider of each pair,
//! the contacts' sort placing each contact by its entity. From 100,000 colliders those arrays outgrow
//! the caches, and the processor, which waits for each such read before it retires the loop's later
//! work, keeps only a few of them under way. [`prefetch_ahead`] asks for the element a loop will reach
//! [`AHEAD`] steps later, so that many are under way at once. A hint: results never change, and on
//! targets other than x86-64 it does nothing.

/// How many steps ahead a loop asks for its element: on workload W1 at 100,000 colliders the taking of
/// the drifted colliders (`broad_phase/drift.rs`) took 1.30 to 1.35 ms a frame asking 8 steps ahead,
/// 1.01 to 1.12 ms at 16, 0.90 to 1.21 ms at 32 and no less at 64 or 128 (each run's median, three
/// alternating runs each), against 1.95 to 3.0 ms without asking.
pub(crate) const AHEAD: usize = 32;

/// The size above which an array is taken to outgrow the cache (a core's second-level cache on the
/// machine measured: 1 MiB).
const CACHE_BYTES: usize = 1 << 20;

/// Whether `items` outgrow the cache, so that asking ahead for them pays. Below, it only costs
/// instructions: on workload W1 at 10,000 colliders, whose arrays fit, the pipeline took 670.6 million
/// instructions in 70 updates with every loop asking, 645.8 million without (callgrind).
#[inline]
pub(crate) fn worth_prefetching<T>(items: &[T]) -> bool {
    worth_prefetching_as_many::<T>(items.len())
}

/// [`worth_prefetching`] for an array of `count` items, before it is filled.
#[inline]
pub(crate) fn worth_prefetching_as_many<T>(count: usize) -> bool {
    count.saturating_mul(size_of::<T>()) > CACHE_BYTES
}

/// Asks for `items[index]` to be brought into the cache, if it exists; both of its ends, for an element
/// that may straddle two cache lines.
#[inline(always)]
pub(crate) fn prefetch_ahead<T>(items: &[T], index: usize) {
    if let Some(item) = items.get(index) {
        prefetch(item);
    }
}

/// Asks for `item`'s cache lines: one, unless it is larger than its alignment (an element aligned to
/// its own size, at most a line's, lies within one line).
#[inline(always)]
fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = core::ptr::from_ref(item).cast::<i8>();
        let last = first.wrapping_add(size_of::<T>().saturating_sub(1));
        // SAFETY: a prefetch reads nothing a program can see and cannot fault, whatever the address;
        // SSE, which it needs, is part of every x86-64 processor.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            if size_of::<T>() > align_of::<T>() {
                _mm_prefetch::<_MM_HINT_T0>(last);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetching_any_index_changes_nothing_and_never_panics() {
        let items = [1_u64, 2, 3];
        for index in [0, 2, 3, usize::MAX] {
            prefetch_ahead(&items, index);
        }
        prefetch_ahead::<[u8; 0]>(&[[]], 0);
        assert_eq!(items, [1, 2, 3], "a hint only");
    }

    #[test]
    fn only_arrays_larger_than_the_cache_are_worth_prefetching() {
        let small = vec![0_u64; CACHE_BYTES / 8];
        let large = vec![0_u64; CACHE_BYTES / 8 + 1];
        assert!(!worth_prefetching(&small), "fits: not worth it");
        assert!(worth_prefetching(&large), "one element more: worth it");
    }
}
