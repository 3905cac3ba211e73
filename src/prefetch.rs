//! Asking the memory early for what a loop reads out of order.
//!
//! Several passes read or write an array in an order of another array's making: the grid's order of
//! the colliders gathered in the order of Bevy's tables, the exact tests' second collider of each pair,
//! the contacts' sort placing each contact by its entity. From 100,000 colliders those arrays outgrow
//! the caches, and the processor, which waits for each such read before it retires the loop's later
//! work, keeps only a few of them under way. [`prefetch_ahead`] asks for the element a loop will reach
//! [`AHEAD`] steps later, so that many are under way at once. A hint: results never change, and on
//! targets other than x86-64 it does nothing. Most loops ask only for arrays that outgrow the cache
//! ([`worth_prefetching`]); the taking of the drifted colliders' rows (`broad_phase/drift.rs`) asks
//! for smaller ones too ([`worth_prefetching_between_updates`]), as in a game its arrays are out of the
//! cache by the time the next update comes.

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

/// The size above which an array that a loop reads or writes out of order is taken to be out of the
/// cache when a game's next update comes, milliseconds later, though it would fit the cache.
const BETWEEN_UPDATES_BYTES: usize = 256 << 10;

/// Whether `items` are large enough that asking ahead for them pays in a game, whose updates lie
/// milliseconds apart: the game's other work, or the machine at rest, takes them out of the cache in
/// between. On workload W1 with updates 1/60 s apart (`collision_bench --fps 60`), the take of the
/// drifted colliders (`broad_phase/drift.rs`) asking ahead took the broad phase 88 µs against 112 µs at
/// 10,000 colliders (400 KB of entries), but nothing off it at 1,000 (40 KB): 8.1 µs either way; back
/// to back it cost 2.7 µs at 10,000 and 0.5 µs at 1,000 (the odd updates of a run asking, the even ones
/// not, the updates that keep the grid). Measured again at 1,000 in the forty-sixth round: 1.3 to 2.1
/// µs off the broad phase at that pace, nothing measurable off the pipeline's median, 0.4 to 0.6 µs
/// more back to back.
#[inline]
pub(crate) fn worth_prefetching_between_updates<T>(items: &[T]) -> bool {
    size_of_val(items) > BETWEEN_UPDATES_BYTES
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

    #[test]
    fn between_updates_arrays_from_a_quarter_of_a_mebibyte_are_worth_prefetching() {
        let small = vec![[0_u8; 40]; BETWEEN_UPDATES_BYTES / 40];
        let large = vec![[0_u8; 40]; BETWEEN_UPDATES_BYTES / 40 + 1];
        assert!(!worth_prefetching_between_updates(&small));
        assert!(worth_prefetching_between_updates(&large));
        assert!(!worth_prefetching(&large), "smaller than the cache");
        // The entries of 1,000 and 10,000 colliders, 40 bytes each.
        assert!(!worth_prefetching_between_updates(&vec![[0_u8; 40]; 1_000]));
        assert!(worth_prefetching_between_updates(&vec![[0_u8; 40]; 10_000]));
    }
}
