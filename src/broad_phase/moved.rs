//! Which colliders moved since the grid was last built over all of them.
//!
//! When few colliders move (a level of walls and a few characters), the broad phase keeps the grid of
//! its last full build and only looks for pairs that involve a collider that moved since: a pair of two
//! colliders that stayed still touches now exactly when it touched before. This file keeps that record,
//! and the colliders that came or went since the build: a new one takes a slot after the build's and
//! counts as moved, a removed one keeps its slot, counted as moved, and is marked gone, so that it has
//! no pairs.

use bevy::prelude::*;

use super::ColliderEntry;

/// The entries (see [`BroadPhase`](super::BroadPhase)) whose world shape changed since the last full
/// build, and where each entity's entry is.
#[derive(Debug, Default)]
pub(crate) struct MovedSinceBuild {
    /// By entity index, the slot of the entity's entry. A stale value is caught by checking the entity
    /// found there, so the table is never cleared, only grown.
    slot_of: Vec<u32>,
    /// By slot: whether the entry moved since the build.
    is_moved: Vec<bool>,
    /// By slot, for slots up to the last one removed since the build: whether its collider is gone.
    is_gone: Vec<bool>,
    /// How many slots [`Self::append`] added and [`Self::remove`] marked gone since the build.
    added: usize,
    gone: usize,
    /// How many of the gone slots were added since the build.
    added_and_gone: usize,
    /// How many entries the build made: the slots before the first added one.
    built: usize,
    /// The moved slots, each once, in the order they first moved.
    slots: Vec<u32>,
    /// Whether the tables above describe the entries of the last build. A build only clears this flag:
    /// the tables are filled when an update first needs them ([`Self::index`]), so that updates where
    /// most colliders move, and a full build follows every one, never pay for them.
    indexed: bool,
}

impl MovedSinceBuild {
    /// Forgets every move: the grid was just built. Call [`Self::index`] before the other queries.
    pub(crate) fn reset(&mut self) {
        self.slots.clear();
        self.is_gone.clear();
        (self.added, self.gone, self.added_and_gone) = (0, 0, 0);
        self.indexed = false;
    }

    /// Fills the tables for `entries`, the entries of the last build, unless they are filled already.
    pub(crate) fn index(&mut self, entries: &[ColliderEntry]) {
        if self.indexed {
            return;
        }
        self.indexed = true;
        self.built = entries.len();
        self.is_moved.clear();
        self.is_moved.resize(entries.len(), false);
        self.slots.clear();
        for (slot, entry) in entries.iter().enumerate() {
            let index = entry.entity.index_u32() as usize;
            if index >= self.slot_of.len() {
                self.slot_of.resize(index + 1, u32::MAX);
            }
            self.slot_of[index] = slot as u32;
        }
    }

    /// The slot of `entity`'s entry in `entries`, if it has one.
    #[inline]
    pub(crate) fn slot(&self, entity: Entity, entries: &[ColliderEntry]) -> Option<usize> {
        debug_assert!(self.indexed, "`index` comes before `slot`");
        let slot = *self.slot_of.get(entity.index_u32() as usize)? as usize;
        (entries.get(slot)?.entity == entity).then_some(slot)
    }

    /// Records that `entity`, new since the build, was appended to the entries at `slot` (their length
    /// before), and counts it as moved.
    pub(crate) fn append(&mut self, entity: Entity, slot: usize) {
        debug_assert!(self.indexed, "`index` comes before `append`");
        debug_assert_eq!(slot, self.is_moved.len(), "appended after every slot");
        let index = entity.index_u32() as usize;
        if index >= self.slot_of.len() {
            self.slot_of.resize(index + 1, u32::MAX);
        }
        self.slot_of[index] = slot as u32;
        self.is_moved.push(false);
        self.mark(slot);
        self.added += 1;
    }

    /// Records that the collider of the entry at `slot` is gone, and counts it as moved.
    pub(crate) fn remove(&mut self, slot: usize) {
        if self.is_gone.len() <= slot {
            self.is_gone.resize(slot + 1, false);
        }
        if !self.is_gone[slot] {
            self.is_gone[slot] = true;
            self.gone += 1;
            self.added_and_gone += usize::from(slot >= self.built);
        }
        self.mark(slot);
    }

    /// Whether the collider of the entry at `slot` is gone since the build ([`Self::remove`]).
    #[inline]
    pub(crate) fn is_gone(&self, slot: usize) -> bool {
        self.is_gone.get(slot).copied().unwrap_or(false)
    }

    /// How many entries' colliders are gone since the build.
    pub(crate) fn gone_count(&self) -> usize {
        self.gone
    }

    /// Whether a collider came or went since the build: the entries are then no longer the build's
    /// gathered colliders, one to one.
    pub(crate) fn membership_changed(&self) -> bool {
        self.came_or_went() > 0
    }

    /// How many moved slots ([`Self::slots`]) are those of colliders that came ([`Self::append`]) or
    /// went ([`Self::remove`]) since the build, each counted once.
    pub(crate) fn came_or_went(&self) -> usize {
        self.added + self.gone - self.added_and_gone
    }

    /// Records that the entry at `slot` moved.
    pub(crate) fn mark(&mut self, slot: usize) {
        debug_assert!(self.indexed, "`index` comes before `mark`");
        if !self.is_moved[slot] {
            self.is_moved[slot] = true;
            self.slots.push(slot as u32);
        }
    }

    /// Whether the entry at `slot` moved since the build.
    #[inline]
    pub(crate) fn is_moved(&self, slot: usize) -> bool {
        debug_assert!(self.indexed, "`index` comes before `is_moved`");
        self.is_moved[slot]
    }

    /// The moved slots, each once.
    pub(crate) fn slots(&self) -> &[u32] {
        &self.slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{WorldCircle, WorldShape};

    fn entries(indices: &[u32]) -> Vec<ColliderEntry> {
        indices
            .iter()
            .map(|&index| ColliderEntry {
                entity: Entity::from_raw_u32(index).unwrap(),
                shape: WorldShape::Circle(WorldCircle::new(Vec2::ZERO, 1.0)),
            })
            .collect()
    }

    #[test]
    fn finds_slots_and_records_moves_once() {
        let entries = entries(&[7, 3, 12]);
        let mut moved = MovedSinceBuild::default();
        moved.reset();
        moved.index(&entries);
        let [three, twelve] = [entries[1].entity, entries[2].entity];
        assert_eq!(moved.slot(three, &entries), Some(1), "3 is in slot 1");
        assert_eq!(
            moved.slot(Entity::from_raw_u32(4).unwrap(), &entries),
            None,
            "4 has no entry"
        );
        assert_eq!(moved.slot(twelve, &entries), Some(2), "12 is in slot 2");
        moved.mark(2);
        moved.mark(2);
        assert_eq!(moved.slots(), &[2], "a slot is recorded once");
        assert!(moved.is_moved(2), "12 moved");
        assert!(!moved.is_moved(0), "7 did not");
        moved.reset();
        assert!(moved.slots().is_empty(), "a build forgets the moves");
        moved.index(&entries);
        assert!(!moved.is_moved(2), "12 is still again");
    }

    #[test]
    fn colliders_that_came_or_went_are_counted_once_among_the_moved() {
        let entries = entries(&[7, 3, 12]);
        let mut moved = MovedSinceBuild::default();
        moved.reset();
        moved.index(&entries);
        moved.mark(0);
        moved.append(Entity::from_raw_u32(20).unwrap(), 3);
        assert_eq!((moved.slots().len(), moved.came_or_went()), (2, 1));
        moved.remove(1);
        moved.remove(1);
        // The new collider goes again: still one slot that came or went.
        moved.remove(3);
        assert_eq!(moved.slots(), &[0, 3, 1]);
        assert_eq!((moved.came_or_went(), moved.gone_count()), (2, 2));
        assert!(moved.is_gone(3) && moved.is_gone(1) && !moved.is_gone(0));
        moved.reset();
        moved.index(&entries);
        assert_eq!((moved.came_or_went(), moved.gone_count()), (0, 0));
        assert!(!moved.membership_changed());
    }

    #[test]
    fn stale_slots_do_not_match_another_entity() {
        let mut moved = MovedSinceBuild::default();
        moved.reset();
        moved.index(&entries(&[1, 2, 3]));
        // A later build without entity 1: its old slot now holds entity 3.
        let rebuilt = entries(&[3, 2]);
        moved.reset();
        moved.index(&rebuilt);
        let one = Entity::from_raw_u32(1).unwrap();
        assert_eq!(moved.slot(one, &rebuilt), None, "1 is gone");
    }
}
