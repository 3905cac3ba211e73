//! An update's changes to the colliders' [`CollidingEntities`], made a table at a time.
//!
//! Made one at a time, each change looks its collider up through Bevy's `Query::get_mut`: the entity's
//! record, then its component and change tick, each a read from memory outside the caches in a large
//! world, and each look-up waits on the one before it. Here the records are read first, in a loop
//! short enough for many of those reads to be under way at once; the changes are then sorted by table
//! and made on the tables' slices. Workload W1 at 100,000 colliders shows it to pay.

use core::panic::Location;

use bevy::ecs::change_detection::ContiguousMut;
use bevy::ecs::entity::Entities;
use bevy::prelude::*;

use super::CollidingEntities;
use crate::entity_set::SpareEntitySets;

/// One change to one collider's set: `other` added or removed, the collider found by where Bevy keeps
/// its components.
#[derive(Clone, Copy, Debug)]
struct SetChange {
    /// The collider's table in the low 31 bits, and in the top bit whether `other` is added.
    table_and_kind: u32,
    /// The collider's row in its table.
    row: u32,
    /// The entity added or removed.
    other: Entity,
}

impl SetChange {
    /// The bit of [`Self::table_and_kind`] that tells an insertion.
    const INSERT: u32 = 1 << 31;

    /// The change of the set at `row` of `table`: `other` added when `insert`, removed otherwise.
    fn new(table: u32, row: u32, other: Entity, insert: bool) -> Self {
        Self {
            table_and_kind: table | if insert { Self::INSERT } else { 0 },
            row,
            other,
        }
    }

    /// The collider's table.
    fn table(&self) -> u32 {
        self.table_and_kind & !Self::INSERT
    }

    /// Where the change sorts among those of `tables` tables ([`sort_key`]).
    fn key(&self, tables: u32) -> u32 {
        sort_key(
            self.table(),
            self.table_and_kind & Self::INSERT != 0,
            tables,
        )
    }
}

/// Where the changes of kind `insert` to the sets of `table` sort among those of `tables` tables:
/// removals, then insertions, each by table.
fn sort_key(table: u32, insert: bool, tables: u32) -> u32 {
    u32::from(insert) * tables + table
}

/// An update's changes to the colliders' sets, and the buffers that sort them, kept between updates.
#[derive(Debug, Default)]
pub(crate) struct SetChanges {
    /// The removals, then the insertions, in the order made.
    listed: Vec<SetChange>,
    /// `listed` sorted by key, the order of each key's changes kept.
    sorted: Vec<SetChange>,
    /// Where each key's changes begin in `sorted`; one more for the end.
    key_starts: Vec<u32>,
    /// How many tables the keys allow for: one more than the highest table of a change.
    tables: u32,
}

impl SetChanges {
    /// Forgets the last update's changes.
    pub(crate) fn clear(&mut self) {
        self.listed.clear();
        self.tables = 0;
    }

    /// Lists the change of `entity`'s set (adding `other` when `insert`, removing it otherwise), if
    /// `entity` is spawned. All removals must be listed before the first insertion, so that the
    /// overflows the removals empty serve the insertions (see `entity_set.rs`).
    pub(crate) fn list(
        &mut self,
        entities: &Entities,
        entity: Entity,
        other: Entity,
        insert: bool,
    ) {
        let Ok(location) = entities.get_spawned(entity) else {
            return;
        };
        let (table, row) = (location.table_id.as_u32(), location.table_row.index_u32());
        self.push(SetChange::new(table, row, other, insert));
    }

    /// Adds `change` to the list, making room in the keys for its table.
    fn push(&mut self, change: SetChange) {
        self.tables = self.tables.max(change.table() + 1);
        self.listed.push(change);
    }

    /// Sorts the listed changes by kind, then table, keeping their order within each (a counting
    /// sort).
    fn sort(&mut self) {
        let tables = self.tables;
        let key = |change: &SetChange| change.key(tables);
        self.key_starts.clear();
        self.key_starts.resize(2 * tables as usize + 1, 0);
        for change in &self.listed {
            self.key_starts[key(change) as usize + 1] += 1;
        }
        for k in 1..self.key_starts.len() {
            self.key_starts[k] += self.key_starts[k - 1];
        }
        let Some(&first) = self.listed.first() else {
            self.sorted.clear();
            return;
        };
        // Every slot is written below: only slots beyond the buffer's last length need a value first.
        self.sorted.resize(self.listed.len(), first);
        // `key_starts[k]` serves as the next free place of key `k` while placing...
        for change in &self.listed {
            let slot = &mut self.key_starts[key(change) as usize];
            self.sorted[*slot as usize] = *change;
            *slot += 1;
        }
        // ...and ends as the end of key `k`, the start of key `k + 1`: one place on, each key's start.
        self.key_starts.rotate_right(1);
        self.key_starts[0] = 0;
    }

    /// The changes of kind `insert` to the sets of `table`.
    fn of(&self, insert: bool, table: u32) -> &[SetChange] {
        if table >= self.tables {
            return &[];
        }
        let key = sort_key(table, insert, self.tables) as usize;
        &self.sorted[self.key_starts[key] as usize..self.key_starts[key + 1] as usize]
    }

    /// Makes the listed changes to the sets of `sets` (removals first, in every table, then
    /// insertions), marking each set changed as `Mut` would. Changes nothing where the query cannot be
    /// read as slices (see Bevy's `Query::contiguous_iter_mut`), which the caller asks first.
    pub(crate) fn apply(
        &mut self,
        sets: &mut Query<(Entity, &mut CollidingEntities)>,
        entities: &Entities,
        spare: &mut SpareEntitySets,
    ) {
        self.sort();
        for insert in [false, true] {
            // A query that can be read as slices once can be every time.
            let Ok(tables) = sets.contiguous_iter_mut() else {
                return;
            };
            for (table_entities, table_sets) in tables {
                let Some(&first) = table_entities.first() else {
                    continue;
                };
                let Ok(location) = entities.get_spawned(first) else {
                    continue;
                };
                let changes = self.of(insert, location.table_id.as_u32());
                if !changes.is_empty() {
                    apply_to_table(changes, insert, table_sets, spare);
                }
            }
        }
    }
}

/// Makes `changes` (insertions when `insert`, removals otherwise) to the sets of one table, given as
/// slices, asking ahead for the rows of later changes when the table outgrows the cache.
fn apply_to_table(
    changes: &[SetChange],
    insert: bool,
    table_sets: ContiguousMut<CollidingEntities>,
    spare: &mut SpareEntitySets,
) {
    let (sets, mut ticks) = ContiguousMut::bypass_change_detection_split(table_sets);
    let this_run = ticks.this_run();
    for change in changes {
        let row = change.row as usize;
        let Some(set) = sets.get_mut(row) else {
            continue;
        };
        if insert {
            set.0.insert(change.other, spare);
        } else {
            set.0.remove(change.other, spare);
        }
        ticks.changed_mut()[row] = this_run;
        if let Some(callers) = ticks.changed_by_mut().into_option() {
            callers[row] = Location::caller();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sort_gives_each_kind_and_table_its_changes_in_the_order_listed() {
        let mut next = crate::test_rng::xorshift(0x5e7);
        let mut changes = SetChanges::default();
        // Removals, then insertions, over tables 0 to 6 (table 5 never used), with duplicates.
        let mut listed = Vec::new();
        for k in 0..1_000_u32 {
            let insert = k >= 600;
            let table = [0, 1, 2, 3, 4, 6][(next() % 6) as usize];
            listed.push((insert, table, k));
            let other = Entity::from_raw_u32(k).unwrap();
            changes.push(SetChange::new(table, (next() % 50) as u32, other, insert));
        }
        changes.sort();
        for insert in [false, true] {
            for table in 0..9 {
                let expected: Vec<u32> = (listed.iter())
                    .filter(|&&(i, t, _)| i == insert && t == table)
                    .map(|&(.., k)| k)
                    .collect();
                let found: Vec<u32> = (changes.of(insert, table).iter())
                    .map(|change| change.other.index_u32())
                    .collect();
                assert_eq!(found, expected, "insert {insert}, table {table}");
            }
        }
        changes.clear();
        changes.sort();
        assert!(
            changes.of(false, 0).is_empty(),
            "nothing listed, nothing found"
        );
    }
}
