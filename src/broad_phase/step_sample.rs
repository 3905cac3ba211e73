//! Whether the colliders stayed within the boxes a grown build would have given them, from a sample
//! kept from one build to the next: see [`StepSample`].

use bevy::math::bounding::{Aabb2d, BoundingVolume};
use bevy::prelude::*;

use super::gather::GatheredCollider;
use super::{MOVED_SHARE, drift_margin};

/// How many gathered colliders [`StepSample`] keeps, at most.
const STEP_SAMPLES: usize = 64;

/// The boxes of a strided sample of the gathered colliders, as one build found them, to tell at the
/// next whether a build that grew its boxes then would have been kept until now.
///
/// After a grown build that was not kept for a single update (colliders that teleport), the broad phase
/// builds without growing its boxes (`BroadPhase::build_grid`). The sample tells it when to grow them
/// again: once the colliders stay within grown boxes from one update to the next. Before it, the broad
/// phase tried a grown build every seventeenth update. On workload W5 (10,000 colliders teleported
/// every update) each such update took the broad phase 0.84 ms against 0.33 ms, and the pipeline's p99
/// was 1.52 to 1.59 ms; with the sample it is 1.17 to 1.18 ms, for a median of 1.04 ms (three
/// alternating runs each).
#[derive(Debug, Default)]
pub(super) struct StepSample {
    /// Each sampled collider's index among the gathered ones, its entity, and its box.
    boxes: Vec<(u32, Entity, Aabb2d)>,
    /// The recorded boxes' sizes, for their median.
    sizes: Vec<f32>,
}

impl StepSample {
    /// Keeps a sample of `gathered`: every collider at a stride that gives at most [`STEP_SAMPLES`].
    pub(super) fn record(&mut self, gathered: &[GatheredCollider]) {
        let stride = gathered.len().div_ceil(STEP_SAMPLES).max(1);
        self.boxes.clear();
        self.boxes.extend(
            (gathered.iter().enumerate().step_by(stride))
                .map(|(index, collider)| (index as u32, collider.entry.entity, collider.aabb)),
        );
    }

    /// Forgets the sample: the next [`Self::stayed_within`] cannot tell.
    pub(super) fn clear(&mut self) {
        self.boxes.clear();
    }

    /// Whether the sampled colliders that `gathered` holds at the same index stayed within their
    /// recorded boxes grown as a build would grow them ([`drift_margin`] of the recorded boxes), all
    /// but one in `2 * MOVED_SHARE` at most: half the share of moved colliders with which the broad
    /// phase keeps a grown build, so that a world whose colliders step about as far as the margin does
    /// not try a grown build on every other update. `None` when fewer than half the sample are found
    /// where they were (colliders came, went or changed tables), or nothing was sampled.
    ///
    /// The margin comes from the sample, not from `gathered`, whose sampled boxes lie far apart in
    /// memory: on W5 the broad phase took 0.341 to 0.343 ms with a margin worked out from `gathered` as
    /// a build does, against 0.310 to 0.312 ms this way (three alternating runs each).
    pub(super) fn stayed_within(&mut self, gathered: &[GatheredCollider]) -> Option<bool> {
        let margin = drift_margin(self.boxes.iter().map(|(.., aabb)| aabb), &mut self.sizes);
        let (mut found, mut left) = (0, 0);
        for &(index, entity, recorded) in &self.boxes {
            let Some(now) = (gathered.get(index as usize)).filter(|now| now.entry.entity == entity)
            else {
                continue;
            };
            found += 1;
            left += usize::from(!recorded.grow(Vec2::splat(margin)).contains(&now.aabb));
        }
        (found > 0 && found * 2 >= self.boxes.len()).then_some(left * 2 * MOVED_SHARE <= found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broad_phase::ColliderEntry;
    use crate::geometry::{WorldRect, WorldShape};

    /// A gathered square of side 2 centred at `center`, on the entity of index `index`.
    fn square(index: u32, center: Vec2) -> GatheredCollider {
        let rect = WorldRect {
            center,
            half_size: Vec2::ONE,
        };
        GatheredCollider {
            entry: ColliderEntry {
                entity: Entity::from_raw_u32(index).unwrap(),
                shape: WorldShape::from(rect),
            },
            aabb: Aabb2d::new(center, Vec2::ONE),
        }
    }

    fn row(len: u32, center: impl Fn(u32) -> Vec2) -> Vec<GatheredCollider> {
        (0..len).map(|index| square(index, center(index))).collect()
    }

    #[test]
    fn tells_steps_within_the_margin_from_steps_beyond_it() {
        let at = |x: f32| move |index: u32| Vec2::new(index as f32 * 3.0 + x, 0.0);
        let mut sample = StepSample::default();
        sample.record(&row(1000, at(0.0)));
        assert_eq!(sample.boxes.len(), 63, "every sixteenth of 1,000");
        assert_eq!(sample.stayed_within(&row(1000, at(0.0))), Some(true));
        // Steps up to the margin, a tenth of the squares' side of 2, stay within, on the grown box's
        // edge included.
        assert_eq!(sample.stayed_within(&row(1000, at(0.2))), Some(true));
        assert_eq!(sample.stayed_within(&row(1000, at(-0.2))), Some(true));
        assert_eq!(sample.stayed_within(&row(1000, at(0.21))), Some(false));
        // A few beyond it are allowed: one in sixteen of the 63 found, so 3 and not 4.
        let first_jump = |jumps: u32| {
            move |index: u32| {
                let jumped = index.is_multiple_of(16) && index / 16 < jumps;
                Vec2::new(index as f32 * 3.0, if jumped { 50.0 } else { 0.0 })
            }
        };
        assert_eq!(sample.stayed_within(&row(1000, first_jump(3))), Some(true));
        assert_eq!(sample.stayed_within(&row(1000, first_jump(4))), Some(false));
    }

    #[test]
    fn cannot_tell_when_the_colliders_are_not_where_they_were() {
        let at = |index: u32| Vec2::new(index as f32 * 3.0, 0.0);
        let mut sample = StepSample::default();
        assert_eq!(sample.stayed_within(&row(10, at)), None, "nothing sampled");
        sample.record(&row(100, at));
        assert_eq!(sample.boxes.len(), 50, "every second of 100");
        // Colliders gone from the end: half the sample found is enough, less is not.
        assert_eq!(sample.stayed_within(&row(50, at)), Some(true));
        assert_eq!(sample.stayed_within(&row(48, at)), None);
        // Other entities at the same indices: none found.
        let others: Vec<GatheredCollider> = (0..100)
            .map(|index| square(index + 1000, at(index)))
            .collect();
        assert_eq!(sample.stayed_within(&others), None);
        // A box that turned NaN left.
        let mut nan = row(100, at);
        nan[0].aabb = Aabb2d::new(Vec2::NAN, Vec2::ONE);
        let mut sample_of_one = StepSample::default();
        sample_of_one.record(&row(1, at));
        assert_eq!(sample_of_one.stayed_within(&nan), Some(false));
    }
}
