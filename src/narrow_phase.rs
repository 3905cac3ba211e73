//! The narrow phase: exact tests on the candidate pairs, and the contacts that result.

use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;

mod by_kind;

use by_kind::TestsByKind;

use crate::broad_phase::BroadPhase;
use crate::diagnostics::{CollisionDiagnostics, StageTimer};
use crate::geometry::Contact;
use crate::parallel::pool_for;
use crate::plugin::CollisionSettings;
use crate::radix_sort::{bucket_sort_by_key, counting_sort_by_bucket, radix_sort_by_key};

/// Below this many candidate pairs the narrow phase runs on one thread.
const PARALLEL_THRESHOLD: usize = 4096;

/// One touching pair: `collider1 < collider2`, the normal pointing from `collider1` to `collider2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairContact {
    /// The lower of the two entities.
    pub collider1: Entity,
    /// The higher of the two entities.
    pub collider2: Entity,
    /// Normal (from `collider1` to `collider2`) and depth.
    pub contact: Contact,
}

impl PairContact {
    fn key(&self) -> (Entity, Entity) {
        (self.collider1, self.collider2)
    }

    /// [`Self::key`] as one number that orders the same way (`Entity` orders by its bits), for a fast
    /// sort.
    #[inline]
    fn sort_key(&self) -> u128 {
        (u128::from(self.collider1.to_bits()) << 64) | u128::from(self.collider2.to_bits())
    }
}

/// Every pair touching after the last collision update, for systems that poll rather than read events.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// #[derive(Component)]
/// struct Player;
///
/// fn push_out_of_walls(contacts: Res<Contacts>, mut player: Single<(Entity, &mut Transform), With<Player>>) {
///     let (entity, ref mut transform) = *player;
///     for (_other, contact) in contacts.of(entity) {
///         // The normal points from the player to the other collider: move back along it.
///         transform.translation -= (contact.normal * contact.depth).extend(0.0);
///     }
/// }
/// # bevy::ecs::system::assert_is_system(push_out_of_walls);
/// ```
#[derive(Resource, Debug, Default)]
pub struct Contacts {
    /// Sorted by `(collider1, collider2)`.
    pub(crate) current: Vec<PairContact>,
    /// Last update's pairs, kept to find what started and ended.
    pub(crate) previous: Vec<PairContact>,
    /// Entities whose `Collider` was removed (or which were despawned) since the last update: their
    /// contacts were ended at once, so the next diff must not end them again.
    pub(crate) removed: EntityHashSet,
    /// How many pairs ended at a collider's removal since the last update, for the diagnostics.
    pub(crate) ended_on_removal: usize,
    /// Whether this update kept last update's contacts because nothing changed: then nothing started
    /// or ended, and `previous` is stale.
    pub(crate) unchanged: bool,
    /// Per-task buffers of the parallel narrow phase, kept between updates.
    chunks: Vec<(Vec<PairContact>, TestsByKind)>,
    /// The sort's buffers, kept between updates.
    sort_scratch: Vec<PairContact>,
    sort_starts: Vec<u32>,
    /// The exact tests' buffers, kept between updates.
    by_kind: TestsByKind,
}

impl Contacts {
    /// The touching pairs, sorted by `(collider1, collider2)`.
    pub fn iter(&self) -> impl Iterator<Item = &PairContact> {
        self.current.iter()
    }

    /// How many pairs touch.
    pub fn len(&self) -> usize {
        self.current.len()
    }

    /// Whether nothing touches.
    pub fn is_empty(&self) -> bool {
        self.current.is_empty()
    }

    /// The contact between `a` and `b`, its normal pointing from `a` to `b`; `None` if they do not touch.
    pub fn get(&self, a: Entity, b: Entity) -> Option<Contact> {
        let key = if a < b { (a, b) } else { (b, a) };
        let index = self
            .current
            .binary_search_by(|pair| pair.key().cmp(&key))
            .ok()?;
        let contact = self.current[index].contact;
        Some(if a < b { contact } else { contact.flipped() })
    }

    /// Whether `a` and `b` touch.
    pub fn contains(&self, a: Entity, b: Entity) -> bool {
        self.get(a, b).is_some()
    }

    /// The contacts of `entity`, each as `(other, contact)` with the normal pointing from `entity` to
    /// `other`. A linear scan: for one entity's neighbours per frame, prefer `CollidingEntities`.
    pub fn of(&self, entity: Entity) -> impl Iterator<Item = (Entity, Contact)> + '_ {
        self.current.iter().filter_map(move |pair| {
            if pair.collider1 == entity {
                Some((pair.collider2, pair.contact))
            } else if pair.collider2 == entity {
                Some((pair.collider1, pair.contact.flipped()))
            } else {
                None
            }
        })
    }
}

/// Tests every candidate pair exactly and keeps the touching ones, sorted, as this update's contacts.
pub(crate) fn find_contacts(
    broad_phase: Res<BroadPhase>,
    settings: Res<CollisionSettings>,
    mut contacts: ResMut<Contacts>,
    mut diagnostics: ResMut<CollisionDiagnostics>,
) {
    let timer = StageTimer::start();
    contacts.unchanged = broad_phase.unchanged;
    if broad_phase.unchanged {
        // Nothing moved or changed: this update's contacts are last update's, and nothing to diff.
        diagnostics.timings.narrow_phase = timer.elapsed();
        return;
    }
    let Contacts {
        current,
        previous,
        chunks,
        sort_scratch,
        sort_starts,
        by_kind,
        ..
    } = &mut *contacts;
    core::mem::swap(current, previous);
    current.clear();
    let entries = &broad_phase.entries;
    let mode = settings.overlap_mode;
    let candidates = &broad_phase.candidates;
    let pool = pool_for(candidates.len(), PARALLEL_THRESHOLD);
    match pool {
        Some(pool) => {
            let chunk_len = candidates.len().div_ceil(pool.thread_num().max(1) * 4);
            let mut buffers = core::mem::take(chunks);
            buffers.resize_with(candidates.len().div_ceil(chunk_len), Default::default);
            let buffers = pool.scope(|scope| {
                for (slice, mut buffer) in candidates.chunks(chunk_len).zip(buffers.drain(..)) {
                    scope.spawn(async move {
                        let (out, tests) = &mut buffer;
                        out.clear();
                        tests.test(slice, entries, mode, out);
                        buffer
                    });
                }
            });
            for (out, _) in &buffers {
                current.extend_from_slice(out);
            }
            *chunks = buffers;
        }
        None => by_kind.test(candidates, entries, mode, current),
    }
    sort_contacts(current, sort_scratch, sort_starts);
    if broad_phase.incremental {
        // Only pairs with a collider moved since the grid's build were tested: the others still
        // touch exactly when they touched last update.
        keep_pairs_that_stayed(previous, current, sort_scratch, |entity| {
            broad_phase.has_moved(entity)
        });
    }
    diagnostics.touching_pairs = current.len();
    diagnostics.timings.narrow_phase = timer.elapsed();
}

/// Sorts `pairs` by `(collider1, collider2)`.
///
/// `Entity` orders by its bits, which hold the generation above the index. When every `collider1` has
/// the same upper half (no index among them was reused), the order is by the lower half of `collider1`
/// first: one counting sort by it, then a sort of each entity's few pairs, two passes where the radix
/// sort makes one per varying byte (about four). Where entities have two pairs or more on average and
/// every `collider2` shares an upper half too, a counting sort by `collider2` comes first instead of
/// the sorts of each entity's pairs, whose branches the predictor misses: on workload W2 (four pairs
/// an entity) the narrow phase took 1.41 to 1.46 ms against 1.56 to 1.58 ms; with half a pair an
/// entity, as in W1, the second counting sort cost more than it saved (at 100,000 colliders, 2.98 to
/// 3.04 ms against 2.84 to 2.88 ms). The result is checked, so that a different layout of the bits in
/// a later Bevy costs a second sort, never a wrong order.
fn sort_contacts(
    pairs: &mut Vec<PairContact>,
    scratch: &mut Vec<PairContact>,
    starts: &mut Vec<u32>,
) {
    if pairs.is_empty() {
        return;
    }
    let lower = |entity: Entity| entity.to_bits() as u32;
    let (low, bucket_count, same_upper) = entity_range(pairs, |pair| pair.collider1);
    // The counting array stays within a few times the pairs, plus a fixed allowance.
    let len = pairs.len();
    let fits = |count: usize| count <= 4 * len + 65_536;
    if same_upper && fits(bucket_count) && len >= 2 * bucket_count {
        // Two pairs or more per `collider1` on average: a stable counting sort by the second entity,
        // then one by the first, in place of sorting each entity's pairs, whose comparisons the
        // branch predictor misses.
        let (low2, bucket_count2, same_upper2) = entity_range(pairs, |pair| pair.collider2);
        if same_upper2 && fits(bucket_count2) {
            counting_sort_by_bucket(pairs, scratch, starts, bucket_count2, |pair| {
                (lower(pair.collider2) - low2) as usize
            });
            counting_sort_by_bucket(pairs, scratch, starts, bucket_count, |pair| {
                (lower(pair.collider1) - low) as usize
            });
            if pairs.is_sorted_by_key(PairContact::sort_key) {
                return;
            }
        }
    }
    if same_upper && fits(bucket_count) {
        bucket_sort_by_key(
            pairs,
            scratch,
            starts,
            bucket_count,
            |pair| (lower(pair.collider1) - low) as usize,
            // Within a bucket every `collider1` is the same entity.
            |pair| pair.collider2.to_bits(),
        );
        if pairs.is_sorted_by_key(PairContact::sort_key) {
            return;
        }
    }
    radix_sort_by_key(pairs, scratch, PairContact::sort_key);
}

/// The lowest lower half (the index) of the `which` entity of `pairs`, how many values lie from it to
/// the highest, and whether all share the upper half (the generation). `pairs` is not empty.
#[inline]
fn entity_range(
    pairs: &[PairContact],
    which: impl Fn(&PairContact) -> Entity,
) -> (u32, usize, bool) {
    let lower = |pair: &PairContact| which(pair).to_bits() as u32;
    let upper = |pair: &PairContact| which(pair).to_bits() >> 32;
    let (mut low, mut high, mut same_upper) = (u32::MAX, 0, true);
    for pair in pairs {
        low = low.min(lower(pair));
        high = high.max(lower(pair));
        same_upper &= upper(pair) == upper(&pairs[0]);
    }
    (low, (high - low) as usize + 1, same_upper)
}

/// Merges into `current` (the pairs tested this update, sorted) the pairs of `previous` (sorted) in
/// which neither collider `moved`; `current` stays sorted. `scratch` is a buffer kept between calls.
fn keep_pairs_that_stayed(
    previous: &[PairContact],
    current: &mut Vec<PairContact>,
    scratch: &mut Vec<PairContact>,
    moved: impl Fn(Entity) -> bool,
) {
    scratch.clear();
    let mut tested = current.iter().copied().peekable();
    for kept in previous
        .iter()
        .filter(|pair| !moved(pair.collider1) && !moved(pair.collider2))
    {
        while let Some(pair) = tested.next_if(|pair| pair.sort_key() < kept.sort_key()) {
            scratch.push(pair);
        }
        scratch.push(*kept);
    }
    scratch.extend(tested);
    core::mem::swap(current, scratch);
}

/// Merges last update's sorted pairs with this update's: pairs only in `current` started, pairs only in
/// `previous` ended. Both outputs come sorted by pair.
///
/// Pairs of an entity in `removed` were already ended when its collider went away: they do not end again,
/// and if such a pair touches again now (the collider came back before this update) it starts again.
pub(crate) fn diff_contacts(
    previous: &[PairContact],
    current: &[PairContact],
    removed: &EntityHashSet,
    mut started: impl FnMut(&PairContact),
    mut ended: impl FnMut(&PairContact),
) {
    let already_ended =
        |pair: &PairContact| removed.contains(&pair.collider1) || removed.contains(&pair.collider2);
    let (mut p, mut c) = (0, 0);
    while p < previous.len() || c < current.len() {
        let order = match (previous.get(p), current.get(c)) {
            (Some(old), Some(new)) => old.key().cmp(&new.key()),
            (Some(_), None) => core::cmp::Ordering::Less,
            (None, _) => core::cmp::Ordering::Greater,
        };
        match order {
            core::cmp::Ordering::Less => {
                if !already_ended(&previous[p]) {
                    ended(&previous[p]);
                }
                p += 1;
            }
            core::cmp::Ordering::Greater => {
                started(&current[c]);
                c += 1;
            }
            core::cmp::Ordering::Equal => {
                if already_ended(&current[c]) {
                    started(&current[c]);
                }
                p += 1;
                c += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::ecs::entity::{EntityGeneration, EntityIndex};

    fn entity(index: u32) -> Entity {
        Entity::from_raw_u32(index).unwrap()
    }

    /// The pair of two entity indices, ordered as the pipeline orders pairs (by `Entity`'s `Ord`).
    fn pair(a: u32, b: u32) -> PairContact {
        let (a, b) = (entity(a), entity(b));
        PairContact {
            collider1: a.min(b),
            collider2: a.max(b),
            contact: Contact {
                normal: Vec2::X,
                depth: 0.0,
            },
        }
    }

    fn sorted(mut pairs: Vec<PairContact>) -> Vec<PairContact> {
        pairs.sort_unstable_by_key(PairContact::key);
        pairs
    }

    /// Runs the diff; returns the started and ended pairs in the order reported.
    fn run(
        previous: &[PairContact],
        current: &[PairContact],
    ) -> (Vec<PairContact>, Vec<PairContact>) {
        let (mut started, mut ended) = (Vec::new(), Vec::new());
        diff_contacts(
            previous,
            current,
            &EntityHashSet::default(),
            |p| started.push(*p),
            |p| ended.push(*p),
        );
        (started, ended)
    }

    #[test]
    fn diff_finds_started_and_ended_pairs_in_order() {
        let previous = sorted(vec![pair(1, 2), pair(1, 3), pair(4, 5)]);
        let current = sorted(vec![pair(1, 3), pair(2, 3), pair(4, 6)]);
        let (started, ended) = run(&previous, &current);
        assert_eq!(
            started,
            sorted(vec![pair(2, 3), pair(4, 6)]),
            "new pairs start, sorted"
        );
        assert_eq!(
            ended,
            sorted(vec![pair(1, 2), pair(4, 5)]),
            "vanished pairs end, sorted"
        );
    }

    #[test]
    fn pairs_that_stayed_merge_in_order() {
        let previous = sorted(vec![pair(1, 2), pair(1, 5), pair(3, 4), pair(6, 7)]);
        // 5 moved: its old pair goes, and the tests found it touching 6 now.
        let mut current = sorted(vec![pair(2, 5), pair(5, 6)]);
        let mut scratch = Vec::new();
        keep_pairs_that_stayed(&previous, &mut current, &mut scratch, |e| e == entity(5));
        assert_eq!(
            current,
            sorted(vec![
                pair(1, 2),
                pair(2, 5),
                pair(3, 4),
                pair(5, 6),
                pair(6, 7)
            ]),
            "kept and tested pairs, sorted, without the moved collider's old pair"
        );
    }

    #[test]
    fn contacts_sort_by_pair_with_and_without_reused_indices() {
        let reused = |index: u32, versions: u32| {
            Entity::from_index_and_generation(
                EntityIndex::from_raw_u32(index).unwrap(),
                EntityGeneration::FIRST.after_versions(versions),
            )
        };
        // Three pairs an entity, which the two counting sorts take, and half a pair, which the sort
        // of each entity's pairs takes; with and without reused indices.
        for (count, versions) in [(6000, 0), (6000, 3), (1000, 0), (1000, 3)] {
            // Pseudo-random pairs over 2,000 entities, a tenth of them on a reused index when
            // `versions` is not zero.
            let mut pairs: Vec<PairContact> = (0..count)
                .map(|k| {
                    let entity =
                        |i: u32| reused(i, if i.is_multiple_of(10) { versions } else { 0 });
                    let (a, b) = (entity((k * 7919) % 2000), entity((k * 104_729 + 1) % 2000));
                    let mut pair = pair(0, 1);
                    (pair.collider1, pair.collider2) = (a.min(b), a.max(b));
                    pair
                })
                .collect();
            let mut expected = pairs.clone();
            expected.sort_by_key(PairContact::key);
            sort_contacts(&mut pairs, &mut Vec::new(), &mut Vec::new());
            let keys =
                |pairs: &[PairContact]| pairs.iter().map(PairContact::key).collect::<Vec<_>>();
            assert_eq!(
                keys(&pairs),
                keys(&expected),
                "sorted by pair, {count} pairs, versions {versions}"
            );
        }
    }

    #[test]
    fn diff_of_identical_frames_is_empty() {
        let frame = sorted(vec![pair(1, 2), pair(3, 4)]);
        assert_eq!(run(&frame, &frame), (vec![], vec![]), "nothing changes");
    }

    #[test]
    fn contacts_get_orients_the_normal() {
        let stored = pair(1, 2);
        let (low, high) = (stored.collider1, stored.collider2);
        let contacts = Contacts {
            current: vec![stored],
            ..Default::default()
        };
        assert_eq!(
            contacts.get(low, high).unwrap().normal,
            Vec2::X,
            "as stored"
        );
        assert_eq!(
            contacts.get(high, low).unwrap().normal,
            -Vec2::X,
            "flipped the other way"
        );
        assert_eq!(
            contacts.of(high).next().unwrap(),
            (low, contacts.get(high, low).unwrap()),
            "of() orients from the entity asked about"
        );
        assert!(
            contacts.get(low, entity(9)).is_none(),
            "an untouched pair has no contact"
        );
    }

    #[test]
    fn diff_skips_pairs_already_ended_and_restarts_them_if_they_touch_again() {
        let previous = sorted(vec![pair(1, 2), pair(3, 4), pair(5, 6)]);
        let current = sorted(vec![pair(3, 4), pair(5, 6)]);
        let removed: EntityHashSet = [entity(1), entity(3)].into_iter().collect();
        let (mut started, mut ended) = (Vec::new(), Vec::new());
        diff_contacts(
            &previous,
            &current,
            &removed,
            |p| started.push(*p),
            |p| ended.push(*p),
        );
        assert!(
            ended.is_empty(),
            "1–2 ended when 1 lost its collider: not again"
        );
        assert_eq!(
            started,
            vec![pair(3, 4)],
            "3 came back and still touches 4: a new start"
        );
    }
}
