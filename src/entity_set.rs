//! A set of entities that holds its first few in place: the storage of
//! [`CollidingEntities`](crate::CollidingEntities).

use bevy::ecs::entity::{Entity, EntityHashSet};
use bevy::ecs::resource::Resource;

/// How many entities the set holds without allocating. Most colliders touch a few others at a time
/// (about one on average in the workload runner's W1, eight in the dense pile W2).
const INLINE: usize = 6;

/// A set of entities whose first [`INLINE`] members sit in the set itself and the rest in a hash set,
/// the overflow, taken from [`SpareEntitySets`] when first needed and given back once empty.
///
/// A hash set of its own for each collider would cost an allocation whenever one began touching its
/// first other collider, and a read of memory outside the component for each start and end
/// (`collision_bench` W2 and W5 show both). Here adding and removing scans at most [`INLINE`] entities
/// in place; a collider touching many (a wall under a crowd) still adds and removes the rest in
/// constant time. Passed on through [`SpareEntitySets`], an overflow is allocated only when more sets
/// hold one at once than ever before, so a game in its steady state allocates none (W1 and W2 show
/// it).
#[derive(Clone)]
pub(crate) struct SmallEntitySet {
    inline: [Entity; INLINE],
    inline_len: u8,
    overflow: Option<Box<EntityHashSet>>,
}

impl Default for SmallEntitySet {
    fn default() -> Self {
        Self {
            inline: [Entity::PLACEHOLDER; INLINE],
            inline_len: 0,
            overflow: None,
        }
    }
}

impl SmallEntitySet {
    fn inline(&self) -> &[Entity] {
        &self.inline[..usize::from(self.inline_len)]
    }

    /// Whether `entity` is in the set.
    #[inline]
    pub(crate) fn contains(&self, entity: Entity) -> bool {
        self.inline().contains(&entity)
            || self
                .overflow
                .as_ref()
                .is_some_and(|overflow| overflow.contains(&entity))
    }

    /// Adds `entity`; returns whether it was not in the set already. An overflow, when the set first
    /// needs one, comes from `spare`.
    #[inline]
    pub(crate) fn insert(&mut self, entity: Entity, spare: &mut SpareEntitySets) -> bool {
        if self.contains(entity) {
            return false;
        }
        let len = usize::from(self.inline_len);
        if len < INLINE {
            self.inline[len] = entity;
            self.inline_len += 1;
        } else {
            self.overflow
                .get_or_insert_with(|| spare.take())
                .insert(entity);
        }
        true
    }

    /// Removes `entity`; returns whether it was in the set. An overflow left empty goes to `spare`.
    #[inline]
    pub(crate) fn remove(&mut self, entity: Entity, spare: &mut SpareEntitySets) -> bool {
        if let Some(index) = self.inline().iter().position(|&member| member == entity) {
            let last = usize::from(self.inline_len) - 1;
            self.inline[index] = self.inline[last];
            self.inline_len -= 1;
            return true;
        }
        let Some(overflow) = &mut self.overflow else {
            return false;
        };
        let removed = overflow.remove(&entity);
        if overflow.is_empty() {
            spare.give(self.overflow.take());
        }
        removed
    }

    /// How many entities the set holds.
    pub(crate) fn len(&self) -> usize {
        usize::from(self.inline_len) + self.overflow.as_ref().map_or(0, |overflow| overflow.len())
    }

    /// The entities, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Entity> + '_ {
        let overflow = self.overflow.iter().flat_map(|overflow| overflow.iter());
        self.inline().iter().chain(overflow).copied()
    }

    /// Moves every entity into `out`, leaving the set empty; its overflow, if any, goes to `spare`.
    pub(crate) fn drain_into(&mut self, out: &mut Vec<Entity>, spare: &mut SpareEntitySets) {
        out.extend(self.iter());
        self.inline_len = 0;
        spare.give(self.overflow.take());
    }
}

/// How many entities a new overflow holds before it grows, each growth an allocation: a new one grew
/// on its way to what its set held, and one passed on grew again where its new set held more. On W2
/// the pipeline made a median of 26 allocations a frame over 300 frames without this room, 6 with it.
const OVERFLOW_CAPACITY: usize = 14;

/// Empty overflows of [`SmallEntitySet`]s, each with the room it had, for the next set that needs one.
#[derive(Resource, Debug, Default)]
#[expect(
    clippy::vec_box,
    reason = "the boxes are what the sets hold: passed on as they are, without an allocation"
)]
pub(crate) struct SpareEntitySets(Vec<Box<EntityHashSet>>);

impl SpareEntitySets {
    /// An empty overflow: a spare one if any, else a new one.
    fn take(&mut self) -> Box<EntityHashSet> {
        self.0
            .pop()
            .unwrap_or_else(|| Box::new(EntityHashSet::with_capacity(OVERFLOW_CAPACITY)))
    }

    /// Keeps `overflow`, emptied, for the next set that needs one.
    fn give(&mut self, overflow: Option<Box<EntityHashSet>>) {
        if let Some(mut overflow) = overflow {
            overflow.clear();
            self.0.push(overflow);
        }
    }
}

/// Sets are equal when they hold the same entities, in whatever order and place.
impl PartialEq for SmallEntitySet {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|entity| other.contains(entity))
    }
}

impl Eq for SmallEntitySet {}

impl core::fmt::Debug for SmallEntitySet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(index: u32) -> Entity {
        Entity::from_raw_u32(index).expect("a valid index")
    }

    /// Random inserts and removes over a few or many entities, in two sets that share their spare
    /// overflows, each compared after every step with a hash set.
    #[test]
    fn agrees_with_a_hash_set_on_random_operations() {
        for universe in [3, INLINE as u32, 2 * INLINE as u32, 40] {
            let mut rng = crate::test_rng::TestRng::new(0x5eed + u64::from(universe));
            let mut spare = SpareEntitySets::default();
            let mut sets = [SmallEntitySet::default(), SmallEntitySet::default()];
            let mut oracles = [EntityHashSet::default(), EntityHashSet::default()];
            let mut handed_over = 0;
            for step in 0..8000 {
                let which = rng.below(2);
                let (set, oracle) = (&mut sets[which], &mut oracles[which]);
                let member = entity(rng.below(universe as usize) as u32);
                let spares_before = spare.0.len();
                let (got, expected) = if rng.below(2) == 0 {
                    (set.insert(member, &mut spare), oracle.insert(member))
                } else {
                    (set.remove(member, &mut spare), oracle.remove(&member))
                };
                handed_over += usize::from(spare.0.len() != spares_before);
                assert_eq!(
                    got, expected,
                    "step {step} over {universe}: result for {member}"
                );
                assert_eq!(
                    set.len(),
                    oracle.len(),
                    "step {step} over {universe}: length"
                );
                let mut members: Vec<Entity> = set.iter().collect();
                members.sort_unstable();
                let mut expected_members: Vec<Entity> = oracle.iter().copied().collect();
                expected_members.sort_unstable();
                assert_eq!(members, expected_members, "step {step} over {universe}");
                for index in 0..universe {
                    assert_eq!(
                        set.contains(entity(index)),
                        oracle.contains(&entity(index)),
                        "step {step} over {universe}: contains {index}"
                    );
                }
                assert!(
                    spare.0.iter().all(|overflow| overflow.is_empty()),
                    "step {step} over {universe}: spare overflows are empty"
                );
                assert!(
                    sets.iter().all(|set| set
                        .overflow
                        .as_ref()
                        .is_none_or(|overflow| !overflow.is_empty())),
                    "step {step} over {universe}: a set keeps no empty overflow"
                );
                assert!(spare.0.len() <= 2, "two sets, at most two overflows");
            }
            // Over twice as many entities as fit in place, each set's length wanders about `INLINE`.
            if universe == 2 * INLINE as u32 {
                assert!(
                    handed_over > 100,
                    "overflows changed hands {handed_over} times"
                );
            }
        }
    }

    #[test]
    fn an_emptied_overflow_goes_to_the_next_set_that_overflows() {
        let mut spare = SpareEntitySets::default();
        let (mut first, mut second) = (SmallEntitySet::default(), SmallEntitySet::default());
        for index in 0..=INLINE as u32 {
            first.insert(entity(index), &mut spare);
        }
        let overflow: *const EntityHashSet = &**first.overflow.as_ref().expect("seven overflow");
        let room = first
            .overflow
            .as_ref()
            .map_or(0, |overflow| overflow.capacity());
        assert!(
            room >= OVERFLOW_CAPACITY,
            "a new overflow has room for {OVERFLOW_CAPACITY}"
        );
        // The seventh went to the overflow; removing it empties the overflow, which goes to spare.
        assert!(first.remove(entity(INLINE as u32), &mut spare));
        assert!(
            first.overflow.is_none(),
            "the emptied overflow left the set"
        );
        assert_eq!(spare.0.len(), 1);
        for index in 100..=100 + INLINE as u32 {
            second.insert(entity(index), &mut spare);
        }
        let handed: *const EntityHashSet = &**second.overflow.as_ref().expect("seven overflow");
        assert_eq!(
            handed, overflow,
            "the second set overflows into the first one's overflow"
        );
        assert!(spare.0.is_empty());
        let mut out = Vec::new();
        second.drain_into(&mut out, &mut spare);
        assert_eq!(out.len(), INLINE + 1);
        assert_eq!(spare.0.len(), 1, "a drained set gives its overflow back");
        assert!(spare.0[0].is_empty(), "emptied");
    }

    #[test]
    fn sets_with_the_same_members_in_another_order_are_equal() {
        let mut spare = SpareEntitySets::default();
        let (mut a, mut b) = (SmallEntitySet::default(), SmallEntitySet::default());
        for index in 0..10 {
            a.insert(entity(index), &mut spare);
            b.insert(entity(9 - index), &mut spare);
        }
        assert_eq!(a, b, "same ten members, inserted in opposite orders");
        b.remove(entity(0), &mut spare);
        assert_ne!(a, b, "one member fewer");
        b.insert(entity(10), &mut spare);
        assert_ne!(a, b, "same length, one member different");
    }

    #[test]
    fn drain_into_empties_the_set_and_keeps_nothing_behind() {
        let mut spare = SpareEntitySets::default();
        let mut set = SmallEntitySet::default();
        for index in 0..10 {
            set.insert(entity(index), &mut spare);
        }
        let mut out = Vec::new();
        set.drain_into(&mut out, &mut spare);
        out.sort_unstable();
        let mut expected: Vec<Entity> = (0..10).map(entity).collect();
        expected.sort_unstable();
        assert_eq!(out, expected, "all ten drained");
        assert_eq!(set.len(), 0, "empty after draining");
        assert!(!set.contains(entity(7)), "a drained member is gone");
        assert!(set.insert(entity(7), &mut spare), "and can be added again");
    }
}
