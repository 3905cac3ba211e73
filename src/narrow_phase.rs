//! The narrow phase: exact tests on the pairs of the broad phase's pair set, and the contacts that
//! result.

use core::ops::Range;

use bevy::ecs::system::{StaticSystemParam, SystemParamItem};
use bevy::math::bounding::{BoundingVolume, IntersectsVolume};
use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;

use crate::broad_phase::{BroadPhase, Pair};
use crate::diagnostics::{CollisionDiagnostics, StageTimer};
use crate::geometry::{Contact, WorldShape, contact_point, shape_cast};
use crate::hooks::{ActiveHooks, CollisionHooks};
use crate::parallel::pool_for;
use crate::settings::CollisionSettings;

/// Below this many pair slots, or changed colliders, the narrow phase runs on one thread.
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
    /// Where the pair has a [`SweptCollider`](crate::SweptCollider) that moved in the last update
    /// that tested the pair, the share of that update's motion at which they first touched; `None`
    /// otherwise.
    pub time_of_impact: Option<f32>,
}

impl PairContact {
    /// `(collider1, collider2)`.
    pub fn key(&self) -> (Entity, Entity) {
        (self.collider1, self.collider2)
    }
}

/// Where a pair with a swept collider first touched in an update ([`SweptCollider`]).
///
/// [`SweptCollider`]: crate::SweptCollider
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Impact {
    /// The share of the update's motion at first contact, from 0 to 1.
    pub(crate) time_of_impact: f32,
    /// Where the pair touched then, in world space.
    pub(crate) point: Vec2,
    /// The unit normal there, from the pair's first collider to its second.
    pub(crate) normal: Vec2,
}

/// Where `a`, which moved by `a_move` this update, and `b`, which moved by `b_move`, first touched on
/// the way, their rotations those at the end; `None` if they did not, or moved together.
fn impact(a: &WorldShape, a_move: Vec2, b: &WorldShape, b_move: Vec2) -> Option<Impact> {
    let (a_start, b_start) = (a.translated(-a_move), b.translated(-b_move));
    // Shapes that touch on the way lie in the boxes around their ways then: most pairs of a swept
    // collider are apart by those boxes, which cost far less than the cast (workload `bullets` of
    // `collision_bench`, `--swept`).
    let a_way = a_start.aabb().merge(&a.aabb());
    if !a_way.intersects(&b_start.aabb().merge(&b.aabb())) {
        return None;
    }
    // `b` held still where it began, `a` moved by the motion relative to it.
    let relative = a_move - b_move;
    let (direction, length) = Dir2::new_and_length(relative).ok()?;
    let hit = shape_cast(&a_start, direction, length, &b_start)?;
    let time_of_impact = (hit.distance / length).min(1.0);
    Some(Impact {
        time_of_impact,
        point: hit.point + b_move * time_of_impact,
        normal: -hit.normal,
    })
}

/// A pair that began touching this update, for the events stage.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Start {
    /// The pair, its contact's normal the one at first contact.
    pub(crate) pair: PairContact,
    pub(crate) point: Vec2,
    pub(crate) time_of_impact: Option<f32>,
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
    /// The contact of each touching pair, by the slot of its pair in the broad phase's pair set.
    slots: Vec<Option<PairContact>>,
    /// The slot of each touching pair, by `(collider1, collider2)`.
    index: HashMap<(Entity, Entity), u32>,
    /// The pairs that began touching this update, and those that stopped: what the events stage
    /// reports.
    pub(crate) started: Vec<Start>,
    pub(crate) ended: Vec<(Entity, Entity)>,
    /// What each task tested, kept between updates.
    tested: Vec<Tested>,
}

/// What one task of the narrow phase tested: how many pairs, and the verdicts left for the serial
/// pass.
#[derive(Debug, Default)]
struct Tested {
    count: usize,
    verdicts: Vec<Verdict>,
}

impl Contacts {
    /// The touching pairs, in no particular order (the same from run to run).
    pub fn iter(&self) -> impl Iterator<Item = &PairContact> {
        self.slots.iter().flatten()
    }

    /// How many pairs touch.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether nothing touches.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The contact between `a` and `b`, its normal pointing from `a` to `b`; `None` if they do not touch.
    pub fn get(&self, a: Entity, b: Entity) -> Option<Contact> {
        let slot = *self.index.get(&(a.min(b), a.max(b)))?;
        let contact = self.slots[slot as usize]?.contact;
        Some(if a < b { contact } else { contact.flipped() })
    }

    /// Whether `a` and `b` touch.
    pub fn contains(&self, a: Entity, b: Entity) -> bool {
        self.index.contains_key(&(a.min(b), a.max(b)))
    }

    /// The contacts of `entity`, each as `(other, contact)` with the normal pointing from `entity` to
    /// `other`. A linear scan: for one entity's neighbours per frame, prefer `CollidingEntities`.
    pub fn of(&self, entity: Entity) -> impl Iterator<Item = (Entity, Contact)> + '_ {
        self.iter().filter_map(move |pair| {
            if pair.collider1 == entity {
                Some((pair.collider2, pair.contact))
            } else if pair.collider2 == entity {
                Some((pair.collider1, pair.contact.flipped()))
            } else {
                None
            }
        })
    }

    /// Takes the contact of the pair in `slot`, which left the pair set, and ends it if it touched.
    fn forget(&mut self, slot: u32) {
        if let Some(pair) = self.slots.get_mut(slot as usize).and_then(Option::take) {
            self.index.remove(&pair.key());
            self.ended.push(pair.key());
        }
    }

    /// Takes in the `verdict` of a pair that touched and still touches, bringing its contact `held`
    /// up to date, or of one that neither touched nor touches; answers whether it did. A start or
    /// an end is left to [`Self::record`], which the serial pass runs.
    #[inline]
    fn update_in_place(held: &mut Option<PairContact>, &(_, contact, impact): &Verdict) -> bool {
        let Some(pair) = held else {
            return contact.is_none() && impact.is_none();
        };
        let Some(contact) = touching(contact, impact) else {
            return false;
        };
        pair.contact = contact;
        pair.time_of_impact = impact.map(|impact| impact.time_of_impact);
        true
    }

    /// Records the verdict of the test of the pair in `slot`, normals pointing from its first
    /// collider to its second: a start, an end, or a new contact for a pair that still touches. A
    /// pair that touched only on the way of a sweep touches with no depth. `shapes` gives the pair's
    /// colliders, the lower first, and their shapes, for a start.
    fn record(
        &mut self,
        (slot, contact, impact): Verdict,
        shapes: impl FnOnce() -> ((Entity, Entity), (WorldShape, WorldShape)),
    ) {
        let touching = touching(contact, impact);
        let held = &mut self.slots[slot as usize];
        let time_of_impact = impact.map(|impact| impact.time_of_impact);
        match (held.as_mut(), touching) {
            (Some(pair), Some(contact)) => {
                pair.contact = contact;
                pair.time_of_impact = time_of_impact;
            }
            (None, Some(contact)) => {
                let ((collider1, collider2), (a, b)) = shapes();
                let pair = PairContact {
                    collider1,
                    collider2,
                    contact,
                    time_of_impact,
                };
                *held = Some(pair);
                self.index.insert(pair.key(), slot);
                self.started.push(match impact {
                    Some(impact) => Start {
                        pair: PairContact {
                            contact: Contact {
                                normal: impact.normal,
                                depth: contact.depth,
                            },
                            ..pair
                        },
                        point: impact.point,
                        time_of_impact: Some(impact.time_of_impact),
                    },
                    None => Start {
                        pair,
                        point: contact_point(&a, &b, &contact),
                        time_of_impact: None,
                    },
                });
            }
            (Some(_), None) => self.forget(slot),
            (None, None) => {}
        }
    }
}

/// The contact of a tested pair that touches: at the end of the update, or else on the way of a
/// sweep, with no depth.
#[inline]
fn touching(contact: Option<Contact>, impact: Option<Impact>) -> Option<Contact> {
    contact.or(impact.map(|impact| Contact {
        normal: impact.normal,
        depth: 0.0,
    }))
}

/// The slot of a tested pair, its contact at the end of the update, and where it first touched on
/// the way of a sweep.
type Verdict = (u32, Option<Contact>, Option<Impact>);

/// Tests exactly the pairs of the pair set with a collider whose shape or layers changed this update
/// (every pair when the settings changed), and updates the contacts: the pairs that began and stopped
/// touching are listed for the events stage. Pairs of colliders that did not change keep their
/// contacts untested. A pair the game's hooks turned down does not touch.
pub(crate) fn find_contacts(
    broad_phase: Res<BroadPhase>,
    settings: Res<CollisionSettings>,
    rejected: Res<RejectedPairs>,
    mut contacts: ResMut<Contacts>,
    mut diagnostics: ResMut<CollisionDiagnostics>,
) {
    let timer = StageTimer::start();
    contacts.started.clear();
    contacts.ended.clear();
    let test_all = settings.is_changed();
    diagnostics.tested_pairs = 0;
    if broad_phase.anything_changed() || test_all {
        for &slot in broad_phase.removed_pairs() {
            contacts.forget(slot);
        }
        let pairs = broad_phase.pair_slots();
        let bp = &*broad_phase;
        contacts.slots.resize(pairs.len(), None);
        let mode = settings.overlap_mode;
        let rejected = &*rejected;
        let any_swept = bp.any_swept();
        let test = move |slot: usize, pair: &Pair| {
            if rejected.contains(slot as u32) {
                return (slot as u32, None, None);
            }
            // Most updates sweep nothing: their pairs skip two loads from the sweeps (workload W1
            // of `collision_bench` at 100,000).
            let (a_move, b_move) = if any_swept {
                (bp.sweep_of(pair.a), bp.sweep_of(pair.b))
            } else {
                (Vec2::ZERO, Vec2::ZERO)
            };
            let swept = a_move != Vec2::ZERO || b_move != Vec2::ZERO;
            let impact = if swept {
                impact(&bp.shape(pair.a), a_move, &bp.shape(pair.b), b_move)
            } else {
                None
            };
            (slot as u32, bp.contact(pair.a, pair.b, mode), impact)
        };
        // The pairs of a few changed proxies are found through their lists, of many by a pass over
        // every slot. The pass splits the slots among its tasks, and each brings the contacts of
        // pairs that still touch up to date in place: only starts and ends wait for the serial pass
        // (workload `clustered` of `collision_bench`).
        let changed = bp.changed_proxies();
        let scan = test_all || !bp.listed();
        let items = if scan { pairs.len() } else { changed.len() };
        let run = move |range: Range<usize>, held: &mut [Option<PairContact>], out: &mut Tested| {
            out.verdicts.clear();
            out.count = 0;
            if scan {
                let slots = range.clone().zip(&pairs[range]).zip(held);
                for ((slot, pair), held) in slots {
                    if pair.is_free()
                        || !(test_all || bp.changed_now(pair.a) || bp.changed_now(pair.b))
                    {
                        continue;
                    }
                    out.count += 1;
                    let verdict = test(slot, pair);
                    if !Contacts::update_in_place(held, &verdict) {
                        out.verdicts.push(verdict);
                    }
                }
                return;
            }
            for &id in &changed[range] {
                // Each pair once: by the lower proxy where both changed.
                let once = bp.pairs_of(id).filter(|(_, pair)| {
                    let other = pair.other(id);
                    id < other || !bp.changed_now(other)
                });
                out.verdicts
                    .extend(once.map(|(slot, pair)| test(slot as usize, &pair)));
            }
            out.count = out.verdicts.len();
        };
        let shapes = |pair: Pair| {
            move || {
                let entities = (bp.proxy(pair.a).entity, bp.proxy(pair.b).entity);
                (entities, (bp.shape(pair.a), bp.shape(pair.b)))
            }
        };
        let mut tested = core::mem::take(&mut contacts.tested);
        let slots = &mut contacts.slots[..];
        match pool_for(items, PARALLEL_THRESHOLD) {
            Some(pool) => {
                let chunk = items.div_ceil(pool.thread_num() * 4);
                tested.resize_with(items.div_ceil(chunk), Tested::default);
                // Each task's share of the slots, where it scans them.
                let mut shares = slots.chunks_mut(chunk);
                pool.scope(|scope| {
                    for (k, out) in tested.iter_mut().enumerate() {
                        let range = k * chunk..((k + 1) * chunk).min(items);
                        let held = if scan {
                            shares.next().unwrap_or_default()
                        } else {
                            &mut []
                        };
                        scope.spawn(async move { run(range, held, out) });
                    }
                });
            }
            None => {
                tested.resize_with(1, Tested::default);
                let held = if scan { slots } else { &mut [] };
                run(0..items, held, &mut tested[0]);
            }
        }
        for out in &tested {
            for &verdict in &out.verdicts {
                contacts.record(verdict, shapes(pairs[verdict.0 as usize]));
            }
        }
        diagnostics.tested_pairs = tested.iter().map(|out| out.count).sum();
        contacts.tested = tested;
    }
    diagnostics.touching_pairs = contacts.len();
    diagnostics.timings.narrow_phase = timer.elapsed();
}

/// The slots of the pair set's pairs that the hooks turned down in this update, for the narrow
/// phase; empty where no hooks are installed.
#[derive(Resource, Debug, Default)]
pub(crate) struct RejectedPairs(HashSet<u32>);

impl RejectedPairs {
    /// Whether the pair in `slot` was turned down.
    #[inline]
    pub(crate) fn contains(&self, slot: u32) -> bool {
        !self.0.is_empty() && self.0.contains(&slot)
    }
}

/// Asks the hooks about every pair of a collider with [`ActiveHooks`] in the pair set.
pub(crate) fn filter_pairs<H: CollisionHooks + 'static>(
    hooks: StaticSystemParam<H>,
    marked: Query<Entity, With<ActiveHooks>>,
    broad_phase: Res<BroadPhase>,
    mut rejected: ResMut<RejectedPairs>,
    mut hooked: Local<HashSet<u32>>,
) where
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    rejected.0.clear();
    let bp = &*broad_phase;
    hooked.clear();
    hooked.extend(marked.iter().filter_map(|e| bp.proxy_id(e)));
    if hooked.is_empty() {
        return;
    }
    let mut ask = |slot: u32, a: u32, b: u32| {
        let (a, b) = (bp.proxy(a).entity, bp.proxy(b).entity);
        if !hooks.filter_pair(a.min(b), a.max(b)) {
            rejected.0.insert(slot);
        }
    };
    if bp.listed() {
        for &id in hooked.iter() {
            for (slot, pair) in bp.pairs_of(id) {
                // Each pair once: by the lower proxy where both are marked.
                let other = pair.other(id);
                if id < other || !hooked.contains(&other) {
                    ask(slot, pair.a, pair.b);
                }
            }
        }
    } else {
        for (slot, pair) in bp.pair_slots().iter().enumerate() {
            if !pair.is_free() && (hooked.contains(&pair.a) || hooked.contains(&pair.b)) {
                ask(slot as u32, pair.a, pair.b);
            }
        }
    }
}
