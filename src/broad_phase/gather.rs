//! Gathering the colliders that take part in a full build from Bevy's tables into the broad phase's
//! arrays: each valid collider's entry with its padded bounding box ([`GatheredCollider`]), and its
//! layers, in the tables' order. A build in the background gathers them instead from the entries of
//! the update that started it, where that update read them in their table ([`gather_from_entries`]).
//!
//! The tables are read as slices (Bevy's contiguous iteration): on workload W1 at 10,000 colliders the
//! broad phase took 0.340 ms against 0.357 ms through the query one collider at a time. A large table is
//! split over the compute task pool when it has several threads, each task writing its run of rows to
//! the same places of the arrays as one thread would, so the order does not depend on the split: on two
//! threads at 100,000 colliders the broad phase took 3.03 and 3.12 ms against 3.44 and 4.07 ms.

use bevy::math::bounding::Aabb2d;
use bevy::prelude::*;
use bevy::tasks::TaskPool;

use super::drift::MAX_TABLES_IN_PLACE;
use super::{ColliderEntry, padded};
use crate::collider::{ActiveColliders, ColliderWorldShape};
use crate::geometry::{WorldCircle, WorldShape};
use crate::layers::CollisionLayers;
use crate::parallel::pool_for;

/// Below this many colliders in a table, its rows are gathered on one thread.
const PARALLEL_THRESHOLD: usize = 2048;

/// One collider as gathered: its entry and its padded bounding box, in one cache line of its own.
///
/// The update that keeps the grid reads them in the grid's order, out of the tables' order
/// (`drift.rs`), as the build's reorder does: one line a collider, where an entry of 40 bytes in an
/// array of entries and a box in an array of boxes took one and a half lines and one. On workload W1
/// at 1,000,000 colliders the taking of the drifted colliders went from 25 and 23 ms to 13 and 17 ms
/// a frame (each run's median, two alternating runs each); at 100,000, where the arrays fit the last
/// level of cache, from 0.97 to 1.35 ms to 1.15 to 1.25 ms (three), within the machine's noise; at
/// 10,000 the pipeline took 644.7 million instructions in 70 updates before, 636.5 million after
/// (callgrind).
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(crate) struct GatheredCollider {
    pub entry: ColliderEntry,
    pub aabb: Aabb2d,
}

/// The broad phase's arrays that a gather fills, one element per valid collider.
pub(super) struct GatherTarget<'a> {
    pub colliders: &'a mut Vec<GatheredCollider>,
    pub layers: &'a mut Vec<CollisionLayers>,
}

/// What a gather found besides the valid colliders.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Gathered {
    /// Enabled colliders without a valid shape, left out.
    pub invalid: usize,
    /// Whether some valid collider has layers other than [`CollisionLayers::ALL`].
    pub layered: bool,
    /// Whether the gathered colliders' indices are the rows of the tables, one table after another,
    /// read as slices: at most [`MAX_TABLES_IN_PLACE`] tables had rows, and none was left out as
    /// invalid.
    pub rows: bool,
}

/// Fills `target` with every valid collider of `colliders`, in the order of Bevy's tables. The arrays
/// keep their length between updates where they can, so that a gather of as many colliders as last
/// time writes each element once, where clearing them would have them filled twice.
pub(super) fn gather_colliders(colliders: &ActiveColliders, target: GatherTarget) -> Gathered {
    let GatherTarget {
        colliders: gathered_colliders,
        layers,
    } = target;
    let mut gathered = Gathered::default();
    let mut count = 0;
    let mut append = |rows: Rows| {
        let end = count + rows.entities.len();
        grow_to(gathered_colliders, end, PLACEHOLDER);
        grow_to(layers, end, CollisionLayers::ALL);
        let slots = Slots {
            colliders: &mut gathered_colliders[count..end],
            layers: &mut layers[count..end],
        };
        let (valid, layered) = match pool_for(rows.entities.len(), PARALLEL_THRESHOLD) {
            Some(pool) => gather_rows_split(pool, rows, slots),
            None => gather_rows(rows, slots),
        };
        gathered.invalid += end - count - valid;
        gathered.layered |= layered;
        count += valid;
    };
    let (mut tables_with_rows, mut as_slices) = (0, false);
    match colliders.contiguous_iter() {
        Ok(tables) => {
            as_slices = true;
            for (entities, shapes, collider_layers) in tables {
                tables_with_rows += usize::from(!entities.is_empty());
                append(Rows {
                    entities,
                    shapes,
                    layers: collider_layers,
                });
            }
        }
        // A disabling component stored as a sparse set (see Bevy's `DefaultQueryFilters`) keeps the
        // tables from being read as slices: one collider at a time, then.
        Err(_) => {
            for (entity, shape, collider_layers) in colliders {
                append(Rows {
                    entities: core::slice::from_ref(&entity),
                    shapes: core::slice::from_ref(shape),
                    layers: core::slice::from_ref(collider_layers),
                });
            }
        }
    }
    gathered_colliders.truncate(count);
    layers.truncate(count);
    gathered.rows = as_slices && tables_with_rows <= MAX_TABLES_IN_PLACE && gathered.invalid == 0;
    gathered
}

/// Fills `target` as [`gather_colliders`] would from the tables that hold every collider, from the
/// entries of a build that read its colliders there instead: `entries` in the build's order, `rows`
/// each entry's row, counted over the tables one after another, or [`NO_ROW`] for an entry whose
/// collider is gone (the other entries' rows being every row once), and `layers` the entries' layers,
/// empty when the build kept none. So a build in the background started by an update that read the
/// colliders in their tables (`background.rs`) gathers them on its own thread, from that update's
/// entries.
pub(super) fn gather_from_entries(
    entries: &[ColliderEntry],
    rows: &[u32],
    layers: &[CollisionLayers],
    target: GatherTarget,
) {
    let GatherTarget {
        colliders,
        layers: gathered_layers,
    } = target;
    // The entries of gone colliders have no row.
    let len = rows.iter().filter(|&&row| row != NO_ROW).count();
    colliders.resize(len, PLACEHOLDER);
    for (entry, &row) in entries.iter().zip(rows).filter(|&(_, &row)| row != NO_ROW) {
        colliders[row as usize] = GatheredCollider {
            entry: *entry,
            aabb: padded(entry.shape.aabb()),
        };
    }
    gathered_layers.clear();
    gathered_layers.resize(
        if layers.is_empty() { 0 } else { len },
        CollisionLayers::ALL,
    );
    for (&layers, &row) in layers.iter().zip(rows).filter(|&(_, &row)| row != NO_ROW) {
        gathered_layers[row as usize] = layers;
    }
}

/// The row of an entry whose collider is gone, for [`gather_from_entries`].
pub(super) const NO_ROW: u32 = u32::MAX;

/// What fills the arrays' new elements before a gather writes them.
const PLACEHOLDER: GatheredCollider = GatheredCollider {
    entry: ColliderEntry {
        entity: Entity::PLACEHOLDER,
        shape: WorldShape::Circle(WorldCircle {
            center: Vec2::ZERO,
            radius: 0.0,
        }),
    },
    aabb: Aabb2d {
        min: Vec2::ZERO,
        max: Vec2::ZERO,
    },
};

/// Lengthens `vec` to `len` with `filler`, if it is shorter.
#[inline]
fn grow_to<T: Copy>(vec: &mut Vec<T>, len: usize, filler: T) {
    if vec.len() < len {
        vec.resize(len, filler);
    }
}

/// Rows of one table, as slices.
#[derive(Clone, Copy)]
struct Rows<'a> {
    entities: &'a [Entity],
    shapes: &'a [ColliderWorldShape],
    layers: &'a [CollisionLayers],
}

/// Where a run of rows is gathered to: as many elements of each array as the run has rows.
struct Slots<'a> {
    colliders: &'a mut [GatheredCollider],
    layers: &'a mut [CollisionLayers],
}

/// Writes the valid colliders of `rows` to the start of `slots`, in order; returns how many, and
/// whether any has layers other than [`CollisionLayers::ALL`].
#[inline(always)]
fn gather_rows(rows: Rows, slots: Slots) -> (usize, bool) {
    let (mut count, mut layered) = (0, false);
    // By index, as the prepare stage's loop, which took longer over an iterator.
    for row in 0..rows.entities.len() {
        if let Some(shape) = rows.shapes[row].0 {
            let layers = rows.layers[row];
            slots.colliders[count] = GatheredCollider {
                entry: ColliderEntry {
                    entity: rows.entities[row],
                    shape,
                },
                aabb: padded(shape.aabb()),
            };
            slots.layers[count] = layers;
            layered |= layers != CollisionLayers::ALL;
            count += 1;
        }
    }
    (count, layered)
}

/// [`gather_rows`] split over `pool`, a run of rows a task, each writing to its run's own slots; the
/// runs are then moved together where invalid colliders left gaps.
fn gather_rows_split(pool: &TaskPool, rows: Rows, slots: Slots) -> (usize, bool) {
    let len = rows.entities.len();
    let run_len = len.div_ceil(pool.thread_num() * 4);
    let Slots { colliders, layers } = slots;
    let runs = pool.scope(|scope| {
        let (mut colliders_rest, mut layers_rest) = (&mut *colliders, &mut *layers);
        for start in (0..len).step_by(run_len) {
            let end = (start + run_len).min(len);
            let run = Rows {
                entities: &rows.entities[start..end],
                shapes: &rows.shapes[start..end],
                layers: &rows.layers[start..end],
            };
            let (run_colliders, rest) =
                core::mem::take(&mut colliders_rest).split_at_mut(end - start);
            colliders_rest = rest;
            let (run_layers, rest) = core::mem::take(&mut layers_rest).split_at_mut(end - start);
            layers_rest = rest;
            let run_slots = Slots {
                colliders: run_colliders,
                layers: run_layers,
            };
            scope.spawn(async move { (start, gather_rows(run, run_slots)) });
        }
    });
    let (mut count, mut layered) = (0, false);
    for (start, (valid, run_layered)) in runs {
        if start != count {
            colliders.copy_within(start..start + valid, count);
            layers.copy_within(start..start + valid, count);
        }
        count += valid;
        layered |= run_layered;
    }
    (count, layered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::WorldRotatedRect;
    use bevy::tasks::TaskPoolBuilder;

    /// Gathers `rows` on one thread and split over a pool of four, into fresh arrays.
    fn gathered_both_ways(rows: Rows) -> [(Vec<ColliderEntry>, usize, bool); 2] {
        let pool = TaskPoolBuilder::new().num_threads(4).build();
        [false, true].map(|split| {
            let len = rows.entities.len();
            let (mut colliders, mut layers) =
                (vec![PLACEHOLDER; len], vec![CollisionLayers::ALL; len]);
            let slots = Slots {
                colliders: &mut colliders,
                layers: &mut layers,
            };
            let (count, layered) = if split {
                gather_rows_split(&pool, rows, slots)
            } else {
                gather_rows(rows, slots)
            };
            colliders.truncate(count);
            for collider in &colliders {
                let padded_box = padded(collider.entry.shape.aabb());
                assert_eq!(collider.aabb, padded_box, "split: {split}");
            }
            let entries = colliders.iter().map(|collider| collider.entry).collect();
            (entries, count, layered)
        })
    }

    #[test]
    fn a_gather_from_entries_writes_what_a_gather_of_their_table_writes() {
        let count = 300u32;
        let entities: Vec<Entity> = (0..count)
            .map(|i| Entity::from_raw_u32(i + 1).unwrap())
            .collect();
        let shape = |i: u32| match i % 3 {
            0 => WorldShape::Circle(WorldCircle::new(Vec2::new(i as f32, 1.0), 0.5)),
            _ => WorldShape::RotatedRect(WorldRotatedRect::new(
                Vec2::new(-(i as f32), 3.0),
                Vec2::new(1.0 + (i % 5) as f32, 2.0),
                Rot2::radians(0.1 * i as f32),
            )),
        };
        let shapes: Vec<ColliderWorldShape> = (0..count)
            .map(|i| ColliderWorldShape(Some(shape(i))))
            .collect();
        let table_layers: Vec<CollisionLayers> = (0..count)
            .map(|i| CollisionLayers::new(1 << (i % 4), 0b1111))
            .collect();
        let rows = Rows {
            entities: &entities,
            shapes: &shapes,
            layers: &table_layers,
        };
        let mut from_table = vec![PLACEHOLDER; count as usize];
        let mut from_table_layers = vec![CollisionLayers::ALL; count as usize];
        let slots = Slots {
            colliders: &mut from_table,
            layers: &mut from_table_layers,
        };
        assert_eq!(gather_rows(rows, slots), (count as usize, true));
        // The entries in a build's order: row 7k mod 300 in slot k (7 is prime to 300).
        let order: Vec<u32> = (0..count).map(|k| k * 7 % count).collect();
        let entries: Vec<ColliderEntry> = order
            .iter()
            .map(|&row| from_table[row as usize].entry)
            .collect();
        let layers: Vec<CollisionLayers> = order
            .iter()
            .map(|&row| table_layers[row as usize])
            .collect();
        // Arrays of another length, left from an earlier gather.
        let (mut gathered, mut gathered_layers) = (vec![PLACEHOLDER; 500], Vec::new());
        let target = GatherTarget {
            colliders: &mut gathered,
            layers: &mut gathered_layers,
        };
        gather_from_entries(&entries, &order, &layers, target);
        assert_eq!(gathered.len(), from_table.len());
        for (row, (ours, theirs)) in gathered.iter().zip(&from_table).enumerate() {
            assert_eq!(ours.entry.entity, theirs.entry.entity, "row {row}");
            assert_eq!(ours.entry.shape, theirs.entry.shape, "row {row}");
            assert_eq!(ours.aabb, theirs.aabb, "row {row}");
        }
        assert_eq!(gathered_layers, from_table_layers);
        // Without layers kept, none are written.
        let target = GatherTarget {
            colliders: &mut gathered,
            layers: &mut gathered_layers,
        };
        gather_from_entries(&entries, &order, &[], target);
        assert!(gathered_layers.is_empty());
        assert_eq!(gathered[7].entry.entity, entities[7]);
    }

    #[test]
    fn split_gather_writes_what_one_thread_writes_across_invalid_colliders() {
        let count = 1000;
        let entities: Vec<Entity> = (0..count)
            .map(|i| Entity::from_raw_u32(i).unwrap())
            .collect();
        // Invalid colliders scattered, and a whole run of them: the pool's runs are 63 rows long, the
        // third from 126 to 188.
        let invalid = |i: u32| i % 7 == 3 || (120..200).contains(&i);
        let shapes: Vec<ColliderWorldShape> = (0..count)
            .map(|i| {
                let shape = WorldShape::Circle(WorldCircle::new(Vec2::splat(i as f32), 1.0));
                ColliderWorldShape((!invalid(i)).then_some(shape))
            })
            .collect();
        let mut layers = vec![CollisionLayers::ALL; count as usize];
        layers[900] = CollisionLayers::new(0b10, 0b10);
        let rows = Rows {
            entities: &entities,
            shapes: &shapes,
            layers: &layers,
        };
        let [one_thread, split] = gathered_both_ways(rows);
        let expected: Vec<Entity> = (0..count)
            .filter(|&i| !invalid(i))
            .map(|i| entities[i as usize])
            .collect();
        let gathered: Vec<Entity> = split.0.iter().map(|entry| entry.entity).collect();
        assert_eq!(gathered, expected, "the valid colliders, in order");
        assert_eq!(split.1, expected.len());
        assert!(split.2, "one collider has other layers");
        assert_eq!(
            one_thread.0.iter().map(|e| e.entity).collect::<Vec<_>>(),
            gathered,
            "one thread and the split agree"
        );
        assert_eq!((one_thread.1, one_thread.2), (split.1, split.2));
        // Without that collider's layers, no layers are reported.
        layers[900] = CollisionLayers::ALL;
        let rows = Rows {
            entities: &entities,
            shapes: &shapes,
            layers: &layers,
        };
        assert!(!gathered_both_ways(rows)[1].2, "default layers only");
    }
}
