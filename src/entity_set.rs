//! A set of entities that holds its first few in place: the storage of
//! [`CollidingEntities`](crate::CollidingEntities).

use bevy::ecs::entity::{Entity, EntityHashSet};

/// How many entities the set holds without allocating. Most colliders touch a few others at a time
/// (about one on average in the workload runner's W1, eight in the dense pile W2).
const INLINE: usize = 6;

/// A set of entities whose first [`INLINE`] members sit in the set itself and the rest in a hash set
/// allocated the first time they are needed, and kept.
///
/// A hash set of its own for each collider cost an allocation whenever one began touching its first
/// other collider or more than its table held, and a read of memory outside the component for each
/// start and end (the README's performance section has the figures). Here adding and removing scans
/// at most [`INLINE`] entities in place; a collider touching many (a wall under a crowd) still adds and
/// removes the rest in constant time.
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

    /// Adds `entity`; returns whether it was not in the set already.
    #[inline]
    pub(crate) fn insert(&mut self, entity: Entity) -> bool {
        if self.contains(entity) {
            return false;
        }
        let len = usize::from(self.inline_len);
        if len < INLINE {
            self.inline[len] = entity;
            self.inline_len += 1;
        } else {
            self.overflow.get_or_insert_default().insert(entity);
        }
        true
    }

    /// Removes `entity`; returns whether it was in the set.
    #[inline]
    pub(crate) fn remove(&mut self, entity: Entity) -> bool {
        if let Some(index) = self.inline().iter().position(|&member| member == entity) {
            let last = usize::from(self.inline_len) - 1;
            self.inline[index] = self.inline[last];
            self.inline_len -= 1;
            return true;
        }
        self.overflow
            .as_mut()
            .is_some_and(|overflow| overflow.remove(&entity))
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

    /// Moves every entity into `out`, leaving the set empty (with its allocation, if any, kept).
    pub(crate) fn drain_into(&mut self, out: &mut Vec<Entity>) {
        out.extend(self.iter());
        self.inline_len = 0;
        if let Some(overflow) = &mut self.overflow {
            overflow.clear();
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

    /// A small xorshift generator, so that the sequence of operations is the same on every run.
    struct Xorshift(u64);

    impl Xorshift {
        fn below(&mut self, bound: u32) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % u64::from(bound)) as u32
        }
    }

    /// Random inserts and removes over a few or many entities, compared after each with a hash set.
    #[test]
    fn agrees_with_a_hash_set_on_random_operations() {
        for universe in [3, INLINE as u32, 2 * INLINE as u32, 40] {
            let mut rng = Xorshift(0x5eed + u64::from(universe));
            let (mut set, mut oracle) = (SmallEntitySet::default(), EntityHashSet::default());
            for step in 0..4000 {
                let member = entity(rng.below(universe));
                let (got, expected) = if rng.below(2) == 0 {
                    (set.insert(member), oracle.insert(member))
                } else {
                    (set.remove(member), oracle.remove(&member))
                };
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
            }
        }
    }

    #[test]
    fn sets_with_the_same_members_in_another_order_are_equal() {
        let (mut a, mut b) = (SmallEntitySet::default(), SmallEntitySet::default());
        for index in 0..10 {
            a.insert(entity(index));
            b.insert(entity(9 - index));
        }
        assert_eq!(a, b, "same ten members, inserted in opposite orders");
        b.remove(entity(0));
        assert_ne!(a, b, "one member fewer");
        b.insert(entity(10));
        assert_ne!(a, b, "same length, one member different");
    }

    #[test]
    fn drain_into_empties_the_set_and_keeps_nothing_behind() {
        let mut set = SmallEntitySet::default();
        for index in 0..10 {
            set.insert(entity(index));
        }
        let mut out = Vec::new();
        set.drain_into(&mut out);
        out.sort_unstable();
        let mut expected: Vec<Entity> = (0..10).map(entity).collect();
        expected.sort_unstable();
        assert_eq!(out, expected, "all ten drained");
        assert_eq!(set.len(), 0, "empty after draining");
        assert!(!set.contains(entity(7)), "a drained member is gone");
        assert!(set.insert(entity(7)), "and can be added again");
    }
}
