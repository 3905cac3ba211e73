//! The broad phase: which pairs of colliders are worth an exact test.
//!
//! After Box2D v3's `broad_phase.c`. Each enabled collider with a valid shape is a *proxy* with a *fat
//! AABB*: its box grown by a *margin*, a share of its size. A proxy that was added, changed layers, or
//! whose box left its fat AABB goes into the *move buffer*; only those are re-inserted and queried for
//! new pairs. The *pair set* holds every pair of proxies whose fat AABBs overlap and whose layers
//! interact, and persists between updates: a pair leaves it when its fat AABBs stop overlapping, its
//! layers stop interacting, or one of its colliders goes. A collider that stays inside its fat AABB
//! costs the copy of its new shape, and one that does not move costs nothing.
//!
//! Most proxies live in a loose grid (`grid.rs`) whose cells fit them; the few wider than a cell live
//! in a dynamic AABB tree (`dynamic_tree.rs`), so that neither a crowd nor a long wall makes the cells
//! the wrong size. Both answer the spatial queries ([`SpatialQuery`](crate::SpatialQuery)).

mod dynamic_tree;
mod grid;

use bevy::ecs::entity::EntityHashSet;
use bevy::math::bounding::{Aabb2d, BoundingVolume, IntersectsVolume};
use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use crate::collider::ActiveColliders;
use crate::diagnostics::{CollisionDiagnostics, StageTimer};
use crate::geometry::WorldShape;
use crate::layers::CollisionLayers;
use crate::prepare::PreparedShapes;
use dynamic_tree::DynamicTree;
use grid::LooseGrid;

/// No proxy, no pair, or a proxy in neither structure.
const NULL: u32 = u32::MAX;
/// Where a proxy in the grid is, in place of a tree node.
const IN_GRID: u32 = u32::MAX - 1;

/// A proxy's fat AABB is its box grown on every side by this share of its larger half size: large
/// enough that a collider crossing its own size in a few dozen updates leaves it about once in that
/// many, small enough to add few pairs whose shapes are apart (workload W1 of `collision_bench`).
const MARGIN_SHARE: f32 = 0.25;

/// The grid's cells are this many times the median width of the fat AABBs when the cell size is
/// picked: every proxy up to twice the median lives in the grid (workloads `sizes` and `level`).
const CELL_PER_MEDIAN: f32 = 2.0;

/// The cell size is picked again once the proxies are more than twice, or fewer than a quarter, of
/// what they were when it was last picked, and never for fewer than this many.
const PICK_AGAIN_FROM: usize = 64;

/// One collider in the broad phase.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Proxy {
    /// [`Entity::PLACEHOLDER`] for a free proxy.
    pub(crate) entity: Entity,
    pub(crate) shape: WorldShape,
    pub(crate) layers: CollisionLayers,
    pub(crate) fat: Aabb2d,
    /// The tree node holding the proxy, [`IN_GRID`], or [`NULL`] while in neither.
    node: u32,
    /// The update that last changed the proxy's shape or layers, or added it.
    pub(crate) changed_at: u32,
    /// The update that last put it in the move buffer.
    moved_at: u32,
}

/// A pair of proxies in the pair set, the lower id first; [`NULL`] ids for a free slot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pair {
    pub(crate) a: u32,
    pub(crate) b: u32,
}

impl Pair {
    /// Whether the slot holds no pair.
    pub(crate) fn is_free(&self) -> bool {
        self.a == NULL
    }

    fn key(a: u32, b: u32) -> u64 {
        (u64::from(a.min(b)) << 32) | u64::from(a.max(b))
    }
}

/// The proxies, the move buffer and the pair set, updated in
/// [`CollisionSystems::BroadPhase`](crate::CollisionSystems::BroadPhase). The narrow phase reads it;
/// the spatial queries and the debug overlay too.
#[derive(Resource, Debug, Default)]
pub struct BroadPhase {
    proxies: Vec<Proxy>,
    /// Each entity's proxy by the entity's index, or [`NULL`]: a table, not a hash, for the look-up
    /// of every moved collider of an update.
    proxy_of: Vec<u32>,
    /// Proxies free since before this update, and those freed in it: these join the free ones at its
    /// end, so that within an update a proxy id names one collider only.
    free: Vec<u32>,
    freed: Vec<u32>,
    grid: LooseGrid,
    tree: DynamicTree,
    /// How many proxies there were when the grid's cell size was picked.
    picked_for: usize,
    move_buffer: Vec<u32>,
    /// The pair set: its pairs in slots that keep their index while the pair lasts, which the narrow
    /// phase keeps its contacts by, and the slot of each pair by its key.
    pairs: Vec<Pair>,
    pair_slots: HashMap<u64, u32>,
    free_pairs: Vec<u32>,
    /// The slots of the pairs that left the pair set this update.
    removed_pairs: Vec<u32>,
    /// Colliders removed, disabled or enabled since the last update, pushed by the plugin's observers:
    /// their proxies are taken out, and put back where the collider takes part.
    pub(crate) queue: Vec<Entity>,
    /// This update's number; the proxies' stamps compare with it.
    stamp: u32,
    /// Whether a proxy's shape or layers changed, or a pair left, this update.
    changed: bool,
    /// The widths of the fat AABBs, when the cell size is picked.
    widths: Vec<f32>,
    /// The enabled colliders whose shape is invalid, which have no proxy.
    invalid: EntityHashSet,
}

impl BroadPhase {
    /// Every pair in the pair set, as entities: their fat AABBs overlap and their layers interact.
    pub fn candidate_pairs(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        self.live_pairs().map(|(_, pair)| {
            (
                self.proxies[pair.a as usize].entity,
                self.proxies[pair.b as usize].entity,
            )
        })
    }

    /// How many pairs the pair set holds.
    pub fn candidate_count(&self) -> usize {
        self.pair_slots.len()
    }

    /// The bounding box of every collider taking part, as of the last update.
    pub fn aabbs(&self) -> impl Iterator<Item = (Entity, Aabb2d)> + '_ {
        self.live_proxies()
            .map(|proxy| (proxy.entity, proxy.shape.aabb()))
    }

    /// The fat AABB of every collider taking part: its box grown by the margin, the box the pairs
    /// are found with.
    pub fn fat_aabbs(&self) -> impl Iterator<Item = (Entity, Aabb2d)> + '_ {
        self.live_proxies().map(|proxy| (proxy.entity, proxy.fat))
    }

    /// How many colliders take part.
    pub fn proxy_count(&self) -> usize {
        self.proxies.len() - self.free.len() - self.freed.len()
    }

    pub(crate) fn live_proxies(&self) -> impl Iterator<Item = &Proxy> + '_ {
        self.proxies
            .iter()
            .filter(|proxy| proxy.entity != Entity::PLACEHOLDER)
    }

    /// The pairs of the pair set with their slots.
    pub(crate) fn live_pairs(&self) -> impl Iterator<Item = (u32, Pair)> + '_ {
        (self.pairs.iter().enumerate())
            .filter(|(_, pair)| pair.a != NULL)
            .map(|(slot, &pair)| (slot as u32, pair))
    }

    pub(crate) fn proxy(&self, id: u32) -> &Proxy {
        &self.proxies[id as usize]
    }

    /// The pair set's slots, free ones included ([`Pair::is_free`]).
    pub(crate) fn pair_slots(&self) -> &[Pair] {
        &self.pairs
    }

    /// The slots of the pairs that left the pair set this update.
    pub(crate) fn removed_pairs(&self) -> &[u32] {
        &self.removed_pairs
    }

    /// Whether `proxy` changed shape or layers, or was added, this update.
    #[inline]
    pub(crate) fn changed_now(&self, proxy: &Proxy) -> bool {
        proxy.changed_at == self.stamp
    }

    /// Whether any proxy changed, or any pair left the pair set, this update.
    pub(crate) fn anything_changed(&self) -> bool {
        self.changed
    }

    /// Calls `visit` with every proxy whose fat AABB overlaps `aabb` (touching counts).
    pub(crate) fn query(&self, aabb: &Aabb2d, mut visit: impl FnMut(&Proxy)) {
        self.grid
            .query(aabb, |id| visit(&self.proxies[id as usize]));
        self.tree.query(aabb, |_, id| {
            visit(&self.proxies[id as usize]);
            true
        });
    }

    /// Calls `visit` with the proxies whose fat AABB the segment from `origin` along the unit
    /// `direction` may reach within `max_distance`, nearer ones roughly first, some more than once.
    /// `visit` returns how far the search must still reach, shortened by a hit it found.
    pub(crate) fn ray_candidates(
        &self,
        origin: Vec2,
        direction: Vec2,
        max_distance: f32,
        mut visit: impl FnMut(&Proxy, f32) -> f32,
    ) {
        let mut reach = max_distance;
        self.tree
            .ray_cast(origin, direction, reach, |_, id, tree_reach| {
                let shortened = visit(&self.proxies[id as usize], tree_reach);
                reach = reach.min(shortened);
                shortened
            });
        if self.grid.len() == 0 {
            return;
        }
        // The grid is read a stretch of the segment at a time, so that a hit ends the search, and a
        // long or endless ray stops where the grid's proxies end.
        let Some((enter, exit)) = segment_in(&self.grid.bounds(), origin, direction, reach) else {
            return;
        };
        let stretch = 4.0 * self.grid.cell_size();
        let mut from = enter;
        while from <= exit.min(reach) {
            let to = (from + stretch).min(exit).min(reach);
            let (a, b) = (origin + direction * from, origin + direction * to);
            let piece = Aabb2d {
                min: a.min(b),
                max: a.max(b),
            };
            self.grid.query(&piece, |id| {
                reach = reach.min(visit(&self.proxies[id as usize], reach))
            });
            if to >= exit.min(reach) {
                break;
            }
            from = to;
        }
    }

    fn proxy_id(&self, entity: Entity) -> Option<u32> {
        let id = *self.proxy_of.get(entity.index_u32() as usize)?;
        (id != NULL && self.proxies[id as usize].entity == entity).then_some(id)
    }

    /// Adds a proxy for `entity`, in the move buffer, in neither structure yet.
    fn create(&mut self, entity: Entity, shape: WorldShape, layers: CollisionLayers) {
        let proxy = Proxy {
            entity,
            shape,
            layers,
            fat: fatten(&shape),
            node: NULL,
            changed_at: self.stamp,
            moved_at: NULL,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.proxies[id as usize] = proxy;
                id
            }
            None => {
                self.proxies.push(proxy);
                (self.proxies.len() - 1) as u32
            }
        };
        let index = entity.index_u32() as usize;
        if self.proxy_of.len() <= index {
            self.proxy_of.resize(index + 1, NULL);
        }
        self.proxy_of[index] = id;
        self.mark_moved(id);
        self.changed = true;
    }

    /// Takes the proxy `id` out; its pairs leave the pair set in this update's sweep.
    fn destroy(&mut self, id: u32) {
        self.unplace(id);
        let proxy = &mut self.proxies[id as usize];
        self.proxy_of[proxy.entity.index_u32() as usize] = NULL;
        proxy.entity = Entity::PLACEHOLDER;
        self.freed.push(id);
        self.changed = true;
    }

    /// Gives the proxy `id` a new shape and layers; puts it in the move buffer when its box left its
    /// fat AABB or its layers changed.
    #[inline(never)]
    fn update(&mut self, id: u32, shape: WorldShape, layers: CollisionLayers) {
        self.changed = true;
        let proxy = &mut self.proxies[id as usize];
        proxy.shape = shape;
        proxy.changed_at = self.stamp;
        let left = !proxy.fat.contains(&shape.aabb());
        let relayered = proxy.layers != layers;
        proxy.layers = layers;
        if left {
            self.unplace(id);
            self.proxies[id as usize].fat = fatten(&shape);
        }
        if left || relayered {
            self.mark_moved(id);
        }
    }

    fn mark_moved(&mut self, id: u32) {
        let proxy = &mut self.proxies[id as usize];
        if proxy.moved_at != self.stamp {
            proxy.moved_at = self.stamp;
            self.move_buffer.push(id);
        }
    }

    /// Takes the proxy `id` out of the grid or the tree.
    fn unplace(&mut self, id: u32) {
        let proxy = &mut self.proxies[id as usize];
        match proxy.node {
            NULL => {}
            IN_GRID => self.grid.remove(id, &proxy.fat),
            node => self.tree.destroy_proxy(node),
        }
        proxy.node = NULL;
    }

    /// Puts the proxy `id` in the grid if it fits a cell, in the tree otherwise.
    fn place(&mut self, id: u32) {
        let proxy = &mut self.proxies[id as usize];
        proxy.node = if self.grid.fits(&proxy.fat) {
            self.grid.insert(id, proxy.fat);
            IN_GRID
        } else {
            self.tree.create_proxy(proxy.fat, id)
        };
    }

    /// Places the proxies of the move buffer, or every proxy in a grid of a cell size picked anew
    /// once their number has changed much since the last pick.
    #[inline(never)]
    fn place_moved(&mut self) {
        let count = self.proxy_count();
        let pick = count > 0
            && (self.picked_for == 0
                || (count >= PICK_AGAIN_FROM
                    && (count > 2 * self.picked_for || 4 * count < self.picked_for)));
        if !pick {
            for k in 0..self.move_buffer.len() {
                let id = self.move_buffer[k];
                if self.proxies[id as usize].node == NULL
                    && self.proxies[id as usize].entity != Entity::PLACEHOLDER
                {
                    self.place(id);
                }
            }
            return;
        }
        let mut widths = core::mem::take(&mut self.widths);
        widths.clear();
        widths.extend(
            self.live_proxies()
                .map(|proxy| (proxy.fat.max - proxy.fat.min).max_element()),
        );
        let middle = widths.len() / 2;
        let (_, median, _) = widths.select_nth_unstable_by(middle, f32::total_cmp);
        let cell = (CELL_PER_MEDIAN * *median).max(f32::MIN_POSITIVE);
        self.widths = widths;
        self.grid = LooseGrid::new(cell, count);
        self.tree = DynamicTree::default();
        self.picked_for = count;
        for id in 0..self.proxies.len() as u32 {
            if self.proxies[id as usize].entity != Entity::PLACEHOLDER {
                self.place(id);
            }
        }
    }

    /// Takes out of the pair set the pairs of a proxy that went, and those of a moved proxy whose fat
    /// AABBs no longer overlap or whose layers no longer interact.
    #[inline(never)]
    fn sweep_pairs(&mut self) {
        let Self {
            proxies,
            pairs,
            pair_slots,
            free_pairs,
            removed_pairs,
            stamp,
            ..
        } = self;
        for (slot, pair) in pairs.iter_mut().enumerate() {
            if pair.a == NULL {
                continue;
            }
            let (a, b) = (&proxies[pair.a as usize], &proxies[pair.b as usize]);
            let keep = if a.entity == Entity::PLACEHOLDER || b.entity == Entity::PLACEHOLDER {
                false
            } else if a.moved_at == *stamp || b.moved_at == *stamp {
                a.fat.intersects(&b.fat) && a.layers.interacts_with(&b.layers)
            } else {
                true
            };
            if !keep {
                pair_slots.remove(&Pair::key(pair.a, pair.b));
                *pair = Pair { a: NULL, b: NULL };
                free_pairs.push(slot as u32);
                removed_pairs.push(slot as u32);
            }
        }
    }

    /// Queries the structures with the fat AABB of each proxy of the move buffer, and adds the pairs
    /// it finds that are new. Where both proxies moved, the pair is added by the query of the lower id.
    #[inline(never)]
    fn find_new_pairs(&mut self) {
        let mut buffer = core::mem::take(&mut self.move_buffer);
        for &id in &buffer {
            let proxy = self.proxies[id as usize];
            if proxy.entity == Entity::PLACEHOLDER {
                continue;
            }
            let Self {
                proxies,
                grid,
                tree,
                pairs,
                pair_slots,
                free_pairs,
                stamp,
                ..
            } = self;
            let mut add = |other: u32| {
                let found = &proxies[other as usize];
                if other == id
                    || (found.moved_at == *stamp && other < id)
                    || !proxy.layers.interacts_with(&found.layers)
                {
                    return;
                }
                let key = Pair::key(id, other);
                if pair_slots.contains_key(&key) {
                    return;
                }
                let pair = Pair {
                    a: id.min(other),
                    b: id.max(other),
                };
                let slot = match free_pairs.pop() {
                    Some(slot) => {
                        pairs[slot as usize] = pair;
                        slot
                    }
                    None => {
                        pairs.push(pair);
                        (pairs.len() - 1) as u32
                    }
                };
                pair_slots.insert(key, slot);
            };
            grid.query(&proxy.fat, &mut add);
            tree.query(&proxy.fat, |_, other| {
                add(other);
                true
            });
        }
        buffer.clear();
        self.move_buffer = buffer;
    }

    /// Checks the broad phase's invariants, panicking with the first broken one: the structures keep
    /// their own rules and hold every proxy once; every proxy's box lies inside its fat AABB; and the
    /// pair set is exactly the set of pairs of proxies whose fat AABBs overlap and whose layers
    /// interact, found by brute force. Takes time quadratic in the proxies: for tests.
    pub fn validate(&self) {
        self.grid.validate();
        self.tree.validate();
        let live: Vec<u32> = (0..self.proxies.len() as u32)
            .filter(|&id| self.proxies[id as usize].entity != Entity::PLACEHOLDER)
            .collect();
        assert_eq!(
            self.grid.len() + self.tree.len(),
            live.len(),
            "every proxy is placed once"
        );
        for (id, fat) in self.grid.iter() {
            assert_eq!(
                self.proxies[id as usize].node, IN_GRID,
                "proxy {id} is in the grid"
            );
            assert_eq!(
                self.proxies[id as usize].fat, fat,
                "proxy {id}'s fat AABB in the grid"
            );
        }
        for &id in &live {
            let proxy = &self.proxies[id as usize];
            assert!(
                proxy.fat.contains(&proxy.shape.aabb()),
                "proxy {id}'s box lies in its fat AABB"
            );
            assert_eq!(
                self.proxy_id(proxy.entity),
                Some(id),
                "proxy {id} is found by its entity"
            );
            if proxy.node != IN_GRID {
                assert_eq!(self.tree.user(proxy.node), id, "proxy {id} is in the tree");
                assert_eq!(
                    self.tree.fat_aabb(proxy.node),
                    proxy.fat,
                    "proxy {id}'s fat AABB in the tree"
                );
            }
        }
        let mut expected = Vec::new();
        for (k, &a) in live.iter().enumerate() {
            for &b in &live[k + 1..] {
                let (pa, pb) = (&self.proxies[a as usize], &self.proxies[b as usize]);
                if pa.fat.intersects(&pb.fat) && pa.layers.interacts_with(&pb.layers) {
                    expected.push(Pair::key(a, b));
                }
            }
        }
        let mut held: Vec<u64> = self
            .live_pairs()
            .map(|(_, pair)| Pair::key(pair.a, pair.b))
            .collect();
        held.sort_unstable();
        assert_eq!(
            held, expected,
            "the pair set is the brute-force set of overlapping fat AABBs"
        );
        for (slot, pair) in self.live_pairs() {
            assert_eq!(
                self.pair_slots.get(&Pair::key(pair.a, pair.b)),
                Some(&slot),
                "pair slot {slot} is indexed"
            );
        }
    }
}

/// `shape`'s box grown by its margin ([`MARGIN_SHARE`]).
fn fatten(shape: &WorldShape) -> Aabb2d {
    let aabb = shape.aabb();
    aabb.grow(Vec2::splat(MARGIN_SHARE * aabb.half_size().max_element()))
}

/// Where the segment from `origin` along `direction` within `reach` enters and leaves `aabb`, if it
/// meets it (Ericson, Real-Time Collision Detection, 5.3.3: the slabs).
fn segment_in(aabb: &Aabb2d, origin: Vec2, direction: Vec2, reach: f32) -> Option<(f32, f32)> {
    let inverse = direction.recip();
    let near = (aabb.min - origin) * inverse;
    let far = (aabb.max - origin) * inverse;
    let enter = near.min(far).max_element().max(0.0);
    let exit = near.max(far).min_element().min(reach);
    (enter <= exit).then_some((enter, exit))
}

/// Brings the proxies up to date with this update's prepared shapes and the colliders that came, went
/// or changed layers, then sweeps the pair set and queries the moved proxies for new pairs.
pub(crate) fn update_broad_phase(
    mut broad_phase: ResMut<BroadPhase>,
    prepared: Res<PreparedShapes>,
    colliders: ActiveColliders,
    mut diagnostics: ResMut<CollisionDiagnostics>,
) {
    let timer = StageTimer::start();
    let bp = &mut *broad_phase;
    bp.stamp = bp.stamp.wrapping_add(1);
    bp.changed = false;
    bp.removed_pairs.clear();
    let queue = core::mem::take(&mut bp.queue);
    // A collider removed and given a `Collider` again, or disabled and enabled again, since the last
    // update comes back as a new proxy, so that its pairs start anew: their ends were sent at the removal.
    for &entity in &queue {
        if let Some(id) = bp.proxy_id(entity) {
            bp.destroy(id);
        }
    }
    for &(entity, shape, layers) in &prepared.changed {
        match (bp.proxy_id(entity), shape) {
            (Some(id), Some(shape)) => bp.update(id, shape, layers),
            (None, Some(shape)) => {
                bp.create(entity, shape, layers);
                bp.invalid.remove(&entity);
            }
            (Some(id), None) => {
                bp.destroy(id);
                bp.invalid.insert(entity);
            }
            (None, None) => {
                bp.invalid.insert(entity);
            }
        }
    }
    // The observers' word is the last: a collider disabled or removed after the prepare stage goes, and
    // one enabled again without a change of shape comes back.
    for &entity in &queue {
        let active = colliders.get(entity).ok();
        match (bp.proxy_id(entity), active) {
            (Some(id), None) => bp.destroy(id),
            (None, Some((_, shape, layers))) => match shape.0 {
                Some(shape) => bp.create(entity, shape, *layers),
                None => {
                    bp.invalid.insert(entity);
                }
            },
            _ => {}
        }
        if active.is_none() {
            bp.invalid.remove(&entity);
        }
    }
    bp.queue = queue;
    bp.queue.clear();
    bp.place_moved();
    if !bp.freed.is_empty() || !bp.move_buffer.is_empty() {
        bp.sweep_pairs();
    }
    diagnostics.moved_proxies = bp.move_buffer.len();
    bp.find_new_pairs();
    bp.changed |= !bp.removed_pairs.is_empty();
    let freed = core::mem::take(&mut bp.freed);
    bp.free.extend_from_slice(&freed);
    bp.freed = freed;
    bp.freed.clear();
    diagnostics.colliders = bp.proxy_count();
    diagnostics.invalid_colliders = bp.invalid.len();
    diagnostics.candidate_pairs = bp.candidate_count();
    diagnostics.timings.broad_phase = timer.elapsed();
}
