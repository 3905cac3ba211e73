//! A least-significant-digit radix sort on 128-bit keys, for the pipeline's per-frame sorts.
//!
//! Linear in the items and stable; a byte that every key shares costs one pass to find and none to
//! sort, so keys made of two entities (64 bits each, mostly small indices and zero generations) sort in
//! a few passes. At a few thousand pairs it is several times faster than a comparison sort.

use crate::prefetch::{AHEAD, prefetch_ahead, worth_prefetching};

/// Sorts `items` by `key`, stably, a byte at a time from the lowest. `scratch` is a buffer the caller
/// keeps between calls, so that a steady state allocates nothing.
pub(crate) fn radix_sort_by_key<T: Copy>(
    items: &mut Vec<T>,
    scratch: &mut Vec<T>,
    key: impl Fn(&T) -> u128,
) {
    let Some(&first) = items.first() else {
        return;
    };
    // The bits where some keys differ: only bytes holding such bits need a pass.
    let (mut any, mut all) = (0u128, u128::MAX);
    for item in items.iter() {
        let k = key(item);
        any |= k;
        all &= k;
    }
    let varying = any ^ all;
    for byte in 0..16 {
        let shift = byte * 8;
        if (varying >> shift) & 0xff == 0 {
            continue;
        }
        let digit = |item: &T| ((key(item) >> shift) & 0xff) as usize;
        let mut starts = [0u32; 256];
        for item in items.iter() {
            starts[digit(item)] += 1;
        }
        let mut total = 0;
        for start in &mut starts {
            (*start, total) = (total, total + *start);
        }
        // Every slot is written below: only slots beyond the buffer's last length need a value first.
        scratch.resize(items.len(), first);
        for item in items.iter() {
            let slot = &mut starts[digit(item)];
            scratch[*slot as usize] = *item;
            *slot += 1;
        }
        core::mem::swap(items, scratch);
    }
}

/// Sorts `items` by `bucket` (below `bucket_count`), stably: one pass to count each bucket's items, one
/// to place them. Afterwards `starts[b]` is where bucket b's run ends. `scratch` and `starts` are
/// buffers the caller keeps between calls.
pub(crate) fn counting_sort_by_bucket<T: Copy>(
    items: &mut Vec<T>,
    scratch: &mut Vec<T>,
    starts: &mut Vec<u32>,
    bucket_count: usize,
    bucket: impl Fn(&T) -> usize,
) {
    let Some(&first) = items.first() else {
        return;
    };
    starts.clear();
    starts.resize(bucket_count + 1, 0);
    for item in items.iter() {
        starts[bucket(item) + 1] += 1;
    }
    // A running total: the contacts' sort took 31.5 million instructions in 70 updates of W1 at 10,000
    // colliders (callgrind) adding each start to the next by index, 26.2 million with this.
    let mut total = 0;
    for start in starts.iter_mut() {
        total += *start;
        *start = total;
    }
    // Every slot is written below: only slots beyond the buffer's last length need a value first.
    scratch.resize(items.len(), first);
    // Each item goes to a place of its bucket's making (`prefetch.rs`): a loop for each choice, so that
    // the one that does not ask costs nothing for it.
    if worth_prefetching(scratch) {
        place_in_buckets::<true, T>(items, scratch, starts, &bucket);
    } else {
        place_in_buckets::<false, T>(items, scratch, starts, &bucket);
    }
    core::mem::swap(items, scratch);
}

/// Writes each item of `items` to `scratch` at its bucket's next place (`starts[b]` walks from bucket
/// b's start to its end, which is bucket b + 1's start). When `PREFETCH`, asks for the place of the
/// item [`AHEAD`] on; an item of the same bucket in between moves that place on by one, which the hint
/// may then miss.
#[inline(always)]
fn place_in_buckets<const PREFETCH: bool, T: Copy>(
    items: &[T],
    scratch: &mut [T],
    starts: &mut [u32],
    bucket: &impl Fn(&T) -> usize,
) {
    for (k, item) in items.iter().enumerate() {
        if let Some(ahead) = items.get(k + AHEAD).filter(|_| PREFETCH) {
            prefetch_ahead(scratch, starts[bucket(ahead)] as usize);
        }
        let slot = &mut starts[bucket(item)];
        scratch[*slot as usize] = *item;
        *slot += 1;
    }
}

/// Sorts `items` by `key` when that order puts the items of a lower `bucket` (below `bucket_count`)
/// first: one counting sort into the buckets, then a comparison sort within each bucket's run. With
/// many buckets the runs are short, so this costs two passes where [`radix_sort_by_key`] costs one per
/// varying byte. Items of equal key may change order. `scratch` and `starts` are buffers the caller
/// keeps between calls.
pub(crate) fn bucket_sort_by_key<T: Copy, K: Ord>(
    items: &mut Vec<T>,
    scratch: &mut Vec<T>,
    starts: &mut Vec<u32>,
    bucket_count: usize,
    bucket: impl Fn(&T) -> usize,
    key: impl Fn(&T) -> K,
) {
    if items.is_empty() {
        // The counting sort leaves `starts` as it was: nothing to walk.
        return;
    }
    counting_sort_by_bucket(items, scratch, starts, bucket_count, bucket);
    // Most buckets hold one item or none: those are passed over before any slicing. The contacts' sort
    // took 36.9 million instructions in 70 updates of W1 at 10,000 before (callgrind), 32.7 million
    // with this, and the narrow phase's lower alternating runs 0.153 to 0.155 ms before, 0.150 to
    // 0.151 ms after. The buckets are walked eight at a time, which the compiler unrolls, and a run's
    // sort is a call of its own, so that the unrolled walk stays short: in a later round, after other
    // changes, the contacts' sort took 25.9 million instructions walking one bucket at a time and 23.9
    // million this way.
    let mut run_start = 0;
    let mut visit = |run_end: u32| {
        let run_end = run_end as usize;
        if run_end - run_start >= 2 {
            sort_run(&mut items[run_start..run_end], &key);
        }
        run_start = run_end;
    };
    let chunks = starts[..bucket_count].chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for &run_end in chunk {
            visit(run_end);
        }
    }
    for &run_end in rest {
        visit(run_end);
    }
}

/// Sorts a bucket's `run` by `key`: by insertion when short, by the standard sort otherwise.
#[inline(never)]
fn sort_run<T: Copy, K: Ord>(run: &mut [T], key: &impl Fn(&T) -> K) {
    if run.len() > SHORT_RUN {
        run.sort_unstable_by_key(key);
    } else {
        insertion_sort_by_key(run, key);
    }
}

/// Runs up to this long are sorted in place by insertion, without a call into the standard sort. On
/// workload W2 (40,000 touching pairs in runs of about four) the contact sort took 0.68 ms with a call
/// per run and 0.66 ms with this; placing each item by its rank, counted without branches, was slower.
const SHORT_RUN: usize = 16;

/// Sorts a short `run` by `key`, moving each item down past the greater ones before it; equal keys
/// keep their order.
#[inline]
fn insertion_sort_by_key<T: Copy, K: Ord>(run: &mut [T], key: impl Fn(&T) -> K) {
    for i in 1..run.len() {
        let item = run[i];
        let item_key = key(&item);
        let mut j = i;
        while j > 0 && key(&run[j - 1]) > item_key {
            run[j] = run[j - 1];
            j -= 1;
        }
        run[j] = item;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_counting_sorts_order_by_both_keys() {
        // Pairs of small numbers in a scrambled order, with repeats; the third field records the
        // input order, which equal pairs must keep (stability is what makes the second pass keep the
        // first pass's order within each bucket).
        let mut items: Vec<(u32, u32, u32)> = (0..3000u32)
            .map(|i| ((i * 7919) % 211, (i * 104_729) % 97, i))
            .collect();
        let mut expected = items.clone();
        expected.sort_by_key(|&(first, second, _)| (first, second));
        let (mut scratch, mut starts) = (Vec::new(), Vec::new());
        counting_sort_by_bucket(
            &mut items,
            &mut scratch,
            &mut starts,
            97,
            |&(_, second, _)| second as usize,
        );
        counting_sort_by_bucket(
            &mut items,
            &mut scratch,
            &mut starts,
            211,
            |&(first, _, _)| first as usize,
        );
        assert_eq!(
            items, expected,
            "by the first, then the second, then input order"
        );
        assert_eq!(starts[210], 3000, "the last bucket's run ends at the end");
    }

    #[test]
    fn counting_sort_into_a_buffer_too_large_for_the_cache_is_stable() {
        // 100,000 items of 12 bytes: the placing loop that asks for each place ahead (`prefetch.rs`).
        let mut items: Vec<(u32, u32, u32)> = (0..100_000u32)
            .map(|i| ((i * 7919) % 50_021, i % 3, i))
            .collect();
        let mut expected = items.clone();
        expected.sort_by_key(|&(bucket, _, _)| bucket);
        let (mut scratch, mut starts) = (Vec::new(), Vec::new());
        counting_sort_by_bucket(&mut items, &mut scratch, &mut starts, 50_021, |item| {
            item.0 as usize
        });
        assert!(
            worth_prefetching(&scratch),
            "the buffer must outgrow the cache"
        );
        assert_eq!(items, expected, "by bucket, then in input order");
    }

    #[test]
    fn bucket_sort_matches_a_comparison_sort() {
        // Buckets from the high part of the key; one crowded bucket and many empty ones.
        let items: Vec<(u64, u32)> = (0..4000u32)
            .map(|i| {
                let bucket = if i % 5 == 0 {
                    7
                } else {
                    u64::from((i * 7919) % 997)
                };
                ((bucket << 32) | u64::from((i * 31) % 4001), i)
            })
            .collect();
        assert_bucket_sort_by_high_half_matches_a_comparison_sort(items, 1000);
        let mut empty: Vec<(u64, u32)> = Vec::new();
        bucket_sort_by_key(
            &mut empty,
            &mut Vec::new(),
            &mut Vec::new(),
            0,
            |_| 0,
            |&i| i,
        );
        assert!(empty.is_empty(), "nothing to sort");
    }

    #[test]
    fn bucket_sort_sorts_buckets_of_two_and_one() {
        // Buckets of exactly two items, each pair in reverse order, between single and empty buckets:
        // the runs the sort passes over and the shortest it must sort.
        let mut items: Vec<(u64, u32)> = Vec::new();
        for bucket in 0..300u64 {
            let count = [2, 1, 0, 2][bucket as usize % 4];
            for k in (0..count).rev() {
                items.push(((bucket << 32) | k, bucket as u32));
            }
        }
        assert!(!items.is_sorted(), "the input must start out of order");
        assert_bucket_sort_by_high_half_matches_a_comparison_sort(items, 300);
    }

    /// Bucket-sorts `items` by the upper half of their key into `bucket_count` buckets, and checks the
    /// result against a comparison sort.
    fn assert_bucket_sort_by_high_half_matches_a_comparison_sort(
        mut items: Vec<(u64, u32)>,
        bucket_count: usize,
    ) {
        let mut expected = items.clone();
        expected.sort_unstable();
        bucket_sort_by_key(
            &mut items,
            &mut Vec::new(),
            &mut Vec::new(),
            bucket_count,
            |&(key, _)| (key >> 32) as usize,
            |&item| item,
        );
        assert_eq!(items, expected, "sorted as by a comparison sort");
    }

    #[test]
    fn insertion_sort_sorts_short_runs_stably() {
        for len in 0..=SHORT_RUN {
            // Keys with ties; the second field records the input order.
            let run: Vec<(u32, usize)> = (0..len).map(|i| ((i as u32 * 7 + 3) % 5, i)).collect();
            let mut expected = run.clone();
            expected.sort_by_key(|&(key, _)| key);
            let mut sorted = run.clone();
            insertion_sort_by_key(&mut sorted, |&(key, _)| key);
            assert_eq!(sorted, expected, "run of {len}");
        }
    }

    #[test]
    fn sorts_like_a_stable_comparison_sort() {
        // Keys spread over low and high bytes, with many ties; the second field records input order.
        let mut items: Vec<(u128, u32)> = (0..5000u32)
            .map(|i| {
                let low = u128::from((i * 7919) % 3001);
                let high = u128::from((i * 31) % 7) << 70;
                (high | low, i)
            })
            .collect();
        let mut expected = items.clone();
        expected.sort_by_key(|&(key, _)| key);
        radix_sort_by_key(&mut items, &mut Vec::new(), |&(key, _)| key);
        assert_eq!(items, expected, "sorted by key, ties in input order");
    }

    #[test]
    fn handles_empty_single_and_equal_keys() {
        let mut scratch = Vec::new();
        let mut empty: Vec<(u128, u32)> = Vec::new();
        radix_sort_by_key(&mut empty, &mut scratch, |&(key, _)| key);
        assert!(empty.is_empty(), "nothing to sort");
        let mut equal = vec![(5u128, 2u32), (5, 0), (5, 1)];
        radix_sort_by_key(&mut equal, &mut scratch, |&(key, _)| key);
        assert_eq!(
            equal,
            vec![(5, 2), (5, 0), (5, 1)],
            "equal keys keep their order"
        );
        let mut reversed: Vec<(u128, u32)> =
            (0..300u32).rev().map(|i| (u128::from(i), i)).collect();
        radix_sort_by_key(&mut reversed, &mut scratch, |&(key, _)| key);
        assert!(
            reversed.windows(2).all(|w| w[0].0 < w[1].0),
            "reversed input comes out ascending"
        );
    }
}
