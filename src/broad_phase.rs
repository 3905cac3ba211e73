//! The broad phase: which pairs of colliders are worth an exact test.
//!
//! After Box2D v3's `broad_phase.c`. Each enabled collider with a valid shape is a *proxy* with a *fat
//! AABB*: its box grown by a *margin*, a share of its size. A proxy that was added, changed layers, or
//! whose box left its fat AABB goes into the *move buffer*; only those are re-inserted and queried for
//! new pairs. The *pair set* holds every pair of proxies whose fat AABBs overlap and whose layers
//! interact, but for two regions of one tile map, and persists between updates: a pair leaves it when
//! its fat AABBs stop overlapping, its layers stop interacting, or one of its colliders goes. A collider that stays inside its fat AABB
//! costs the copy of its new shape, and one that does not move costs nothing.
//!
//! The proxies live in a hierarchy of loose grids (`grid.rs`), each level's cells twice as wide as
//! the level below's: a proxy lives in the lowest level whose cells fit it, so that neither a crowd
//! nor a long wall makes the cells the wrong size. The levels answer the spatial queries
//! ([`SpatialQuery`](crate::SpatialQuery)) too.

mod grid;
mod shapes;

use bevy::ecs::entity::EntityHashSet;
use bevy::math::bounding::{Aabb2d, BoundingVolume, IntersectsVolume};
use bevy::prelude::*;

use crate::collider::{
    ActiveColliderFilter, ActiveColliders, ColliderDisabled, ColliderWorldShape, SweptCollider,
    Teleported,
};
use crate::diagnostics::{CollisionDiagnostics, StageTimer};
use crate::geometry::{Contact, OverlapMode, WorldShape};
use crate::hooks::ActiveHooks;
use crate::layers::CollisionLayers;
use crate::prepare::{ChangedSince, for_each_changed_row};
use crate::tilemap::TileRegionOf;
pub(crate) use grid::segment_in;
use grid::{LooseGrid, NOWHERE};
use shapes::ShapeStore;

/// No proxy, no pair, or a proxy in no level.
const NULL: u32 = u32::MAX;

/// A proxy's fat AABB is its box grown on every side by this share of its larger half size, before it
/// is stretched along its last move ([`PREDICTED_MOVES`]): a moving collider leaves it about once in
/// a few updates, and it adds few pairs whose shapes are apart (workloads W1 and `clustered` of
/// `collision_bench`).
const MARGIN_SHARE: f32 = 0.1;

/// A moved proxy's fat AABB reaches this many of its last moves ahead (Box2D v2's `b2_aabbMultiplier`).
const PREDICTED_MOVES: f32 = 4.0;

/// The lowest level's cells are this many times the median width of the fat AABBs when the cell size
/// is picked: every proxy up to that many times the median lives in the lowest level (workloads
/// `sizes` and `level`).
const CELL_PER_MEDIAN: f32 = 2.0;

/// The cell size is picked again once the proxies are more than twice, or fewer than a quarter, of
/// what they were when it was last picked, and never for fewer than this many.
const PICK_AGAIN_FROM: usize = 64;

/// One collider in the broad phase, but for its shape, which is kept apart for the exact tests.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Proxy {
    /// [`Entity::PLACEHOLDER`] for a free proxy.
    pub(crate) entity: Entity,
    pub(crate) layers: CollisionLayers,
    /// The tile map whose regions the collider is one of, as [`group_of`] gives it, or 0: a map's
    /// regions never pair with one another, as flush tiles would all touch.
    group: u32,
    pub(crate) fat: Aabb2d,
    /// The fat AABB before this update's move, for a proxy in the move buffer: which pairs it had.
    old_fat: Aabb2d,
    /// The level holding the proxy, or [`NULL`] while in none.
    level: u32,
}

impl Proxy {
    /// Whether the pair of this proxy and `other` may be in the pair set, their fat AABBs aside: their
    /// layers interact, and they are not regions of one tile map.
    #[inline]
    fn pairs_with(&self, other: &Proxy) -> bool {
        self.layers.interacts_with(&other.layers) && (self.group == 0 || self.group != other.group)
    }
}

/// The group of a collider that is a region of the tile map `map`: the map entity's index and one.
#[inline]
fn group_of(map: Option<&TileRegionOf>) -> u32 {
    map.map_or(0, |map| map.0.index_u32().wrapping_add(1))
}

/// Once a proxy in this many changed in an update, the pairs of the changed proxies are found by a
/// pass over every slot of the pair set in order, and the lists of each proxy's pairs are left to be
/// made again when few change: in a world where most colliders move, the lists' upkeep and their
/// reads out of order cost more than the pass (workloads W1, `clustered` and W3 of
/// `collision_bench`).
const SCAN_SHARE: usize = 4;

/// A pair of proxies in the pair set, `a`'s entity the lower; [`NULL`] ids for a free slot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pair {
    pub(crate) a: u32,
    pub(crate) b: u32,
}

/// The pairs before and after a pair in the list of its `a`, and in `b`'s, or [`NULL`]: each proxy's
/// pairs are chained, so that where few colliders move the others cost nothing.
#[derive(Clone, Copy, Debug)]
struct Links {
    prev: [u32; 2],
    next: [u32; 2],
}

impl Links {
    const NONE: Self = Self {
        prev: [NULL; 2],
        next: [NULL; 2],
    };
}

/// Which of `pair`'s two lists is the list of `proxy`.
#[inline]
fn side(pair: &Pair, proxy: u32) -> usize {
    usize::from(pair.a != proxy)
}

impl Pair {
    const FREE: Self = Self { a: NULL, b: NULL };

    /// Whether the slot holds no pair.
    pub(crate) fn is_free(&self) -> bool {
        self.a == NULL
    }

    /// The other proxy than `proxy`, one of the two.
    #[inline]
    pub(crate) fn other(&self, proxy: u32) -> u32 {
        if self.a == proxy { self.b } else { self.a }
    }
}

/// A flag per proxy.
#[derive(Clone, Debug, Default)]
struct ProxyFlags(Vec<bool>);

impl ProxyFlags {
    fn set(&mut self, id: u32) {
        if self.0.len() <= id as usize {
            self.0.resize(id as usize + 1, false);
        }
        self.0[id as usize] = true;
    }

    #[inline]
    fn get(&self, id: u32) -> bool {
        self.0.get(id as usize).copied().unwrap_or(false)
    }
}

/// The proxies, the move buffer and the pair set, updated in
/// [`CollisionSystems::BroadPhase`](crate::CollisionSystems::BroadPhase). The narrow phase reads it;
/// the spatial queries and the debug overlay too.
#[derive(Resource, Debug, Default)]
pub(crate) struct BroadPhase {
    proxies: Vec<Proxy>,
    /// Each proxy's shape, by proxy: what the exact tests read, packed apart from the rest.
    shapes: ShapeStore,
    /// Each entity's proxy by the entity's index, or [`NULL`]: a table, not a hash, for the look-up
    /// of every moved collider of an update.
    proxy_of: Vec<u32>,
    /// Proxies free since before this update, and those freed in it: these join the free ones at its
    /// end, so that within an update a proxy id names one collider only.
    free: Vec<u32>,
    freed: Vec<u32>,
    /// The levels of grids, the lowest first; empty ones are kept.
    levels: Vec<LooseGrid>,
    /// How many proxies there were when the lowest level's cell size was picked.
    picked_for: usize,
    move_buffer: Vec<u32>,
    /// The proxies whose shape or layers changed this update, or that were added, as flags and as a
    /// list.
    changed: ProxyFlags,
    changed_list: Vec<u32>,
    /// The proxies in the move buffer this update, and those taken out.
    touched: ProxyFlags,
    /// The proxies whose layers or group changed this update.
    relayered: ProxyFlags,
    /// The pair set: its pairs in slots that keep their index while the pair lasts, which the narrow
    /// phase keeps its contacts by.
    pairs: Vec<Pair>,
    /// Each slot's links, apart from the pairs, which the narrow phase reads in order.
    links: Vec<Links>,
    /// The first pair in each proxy's list, or [`NULL`].
    first_pair: Vec<u32>,
    /// Whether the lists are kept this update ([`SCAN_SHARE`]); when not, they are made again at the
    /// next update that keeps them.
    listed: bool,
    pair_count: usize,
    free_pairs: Vec<u32>,
    /// The slots of the pairs that left the pair set this update.
    removed_pairs: Vec<u32>,
    /// The pairs kept this update of a proxy whose layers changed, sorted: the pairs its query finds
    /// that it has already.
    relayered_pairs: Vec<(u32, u32)>,
    /// The pairs the move buffer's queries found new, before they are added.
    new_pairs: Vec<(u32, u32)>,
    /// Colliders removed, disabled or enabled since the last update, pushed by the plugin's observers:
    /// their proxies are taken out, and put back where the collider takes part.
    queue: Vec<Entity>,
    /// Whether a proxy changed, or a pair left, this update.
    anything_changed: bool,
    /// The widths of the fat AABBs, when the cell size is picked.
    widths: Vec<f32>,
    /// The enabled colliders whose shape is invalid, which have no proxy.
    invalid: EntityHashSet,
    /// Each proxy's move this update, where its shape changed.
    moves: Vec<Vec2>,
    /// Each swept proxy's move this update ([`SweptCollider`]), zero for the others; and the swept
    /// proxies of this update and of the last, whose pairs are tested again, without a sweep, where
    /// they did not move.
    sweeps: Vec<Vec2>,
    swept: Vec<u32>,
    swept_before: Vec<u32>,
}

impl BroadPhase {
    /// Every pair in the pair set, as entities: their fat AABBs overlap and their layers interact.
    #[cfg(feature = "debug")]
    pub(crate) fn pair_entities(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        (self.pairs.iter().filter(|pair| !pair.is_free()))
            .map(|pair| (self.proxy(pair.a).entity, self.proxy(pair.b).entity))
    }

    /// How many pairs the pair set holds.
    pub(crate) fn pair_count(&self) -> usize {
        self.pair_count
    }

    /// The bounding box of every collider taking part, as of the last update.
    #[cfg(feature = "debug")]
    pub(crate) fn aabbs(&self) -> impl Iterator<Item = (Entity, Aabb2d)> + '_ {
        self.live_ids()
            .map(|id| (self.proxy(id).entity, self.shape(id).aabb()))
    }

    /// The fat AABB of every collider taking part: its box grown by the margin, the box the pairs
    /// are found with.
    pub(crate) fn fat_aabbs(&self) -> impl Iterator<Item = (Entity, Aabb2d)> + '_ {
        self.live_ids()
            .map(|id| (self.proxy(id).entity, self.proxy(id).fat))
    }

    /// How many colliders take part.
    pub(crate) fn proxy_count(&self) -> usize {
        self.proxies.len() - self.free.len() - self.freed.len()
    }

    fn live_ids(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.proxies.len() as u32).filter(|&id| self.is_live(id))
    }

    fn is_live(&self, id: u32) -> bool {
        self.proxies[id as usize].entity != Entity::PLACEHOLDER
    }

    pub(crate) fn proxy(&self, id: u32) -> &Proxy {
        &self.proxies[id as usize]
    }

    #[inline]
    pub(crate) fn shape(&self, id: u32) -> WorldShape {
        self.shapes.get(id)
    }

    /// The contact of the proxies `a` and `b`.
    #[inline]
    pub(crate) fn contact(&self, a: u32, b: u32, mode: OverlapMode) -> Option<Contact> {
        self.shapes.contact(a, b, mode)
    }

    /// The pair set's slots, free ones included ([`Pair::is_free`]).
    pub(crate) fn pair_slots(&self) -> &[Pair] {
        &self.pairs
    }

    /// The slots of the pairs that left the pair set this update.
    pub(crate) fn removed_pairs(&self) -> &[u32] {
        &self.removed_pairs
    }

    /// Whether the proxy `id` changed shape or layers, or was added, this update.
    #[inline]
    pub(crate) fn changed_now(&self, id: u32) -> bool {
        self.changed.get(id)
    }

    /// The proxies that changed shape or layers, or were added, this update.
    pub(crate) fn changed_proxies(&self) -> &[u32] {
        &self.changed_list
    }

    /// Whether the pairs of the changed proxies are to be found through [`Self::pairs_of`] this
    /// update, or by a pass over every slot.
    pub(crate) fn listed(&self) -> bool {
        self.listed
    }

    /// The slots of the pairs of the proxy `id`, with the pairs, in an update that keeps the lists.
    pub(crate) fn pairs_of(&self, id: u32) -> impl Iterator<Item = (u32, Pair)> + '_ {
        let mut slot = self.first_pair.get(id as usize).copied().unwrap_or(NULL);
        core::iter::from_fn(move || {
            let pair = *self.pairs.get(slot as usize)?;
            let this = slot;
            slot = self.links[slot as usize].next[side(&pair, id)];
            Some((this, pair))
        })
    }

    /// Marks the proxy `id` changed this update.
    fn mark_changed(&mut self, id: u32) {
        if !self.changed.get(id) {
            self.changed.set(id);
            self.changed_list.push(id);
        }
    }

    /// How far the proxy `id` moved this update, where it is swept ([`SweptCollider`]); zero
    /// otherwise.
    #[inline]
    pub(crate) fn sweep_of(&self, id: u32) -> Vec2 {
        self.sweeps.get(id as usize).copied().unwrap_or(Vec2::ZERO)
    }

    /// Queues `entity`, whose collider was removed, disabled or enabled again, for the next update:
    /// its proxy is taken out, and put back where the collider takes part.
    pub(crate) fn queue(&mut self, entity: Entity) {
        self.queue.push(entity);
    }

    /// Whether any proxy is swept this update ([`Self::sweep_of`] is zero for every proxy where not).
    #[inline]
    pub(crate) fn any_swept(&self) -> bool {
        !self.swept.is_empty()
    }

    /// Every collider swept in the last update ([`SweptCollider`]), with its shape at the end and
    /// how far it moved.
    pub(crate) fn sweeps(&self) -> impl Iterator<Item = (Entity, WorldShape, Vec2)> + '_ {
        (self.swept.iter())
            .filter(|&&id| self.is_live(id))
            .map(|&id| (self.proxy(id).entity, self.shape(id), self.sweep_of(id)))
    }

    /// Whether any proxy changed, or any pair left the pair set, this update.
    pub(crate) fn anything_changed(&self) -> bool {
        self.anything_changed
    }

    /// A box around every proxy's fat AABB, and perhaps around some that left.
    pub(crate) fn bounds(&self) -> Aabb2d {
        (self.levels.iter()).fold(NOWHERE, |bounds, level| bounds.merge(&level.bounds()))
    }

    /// Calls `visit` with every proxy whose fat AABB overlaps `aabb` (touching counts), and its shape.
    pub(crate) fn query(&self, aabb: &Aabb2d, mut visit: impl FnMut(&Proxy, &WorldShape)) {
        for level in self.levels.iter().filter(|level| level.len() > 0) {
            level.query(aabb, |id| {
                visit(&self.proxies[id as usize], &self.shapes.get(id));
            });
        }
    }

    /// Calls `visit` with the proxies whose fat AABB the segment from `origin` along the unit
    /// `direction` may reach within `max_distance`, and their shapes, nearer ones roughly first, some
    /// more than once. `visit` returns how far the search must still reach, shortened by a hit it
    /// found.
    pub(crate) fn ray_candidates(
        &self,
        origin: Vec2,
        direction: Vec2,
        max_distance: f32,
        mut visit: impl FnMut(&Proxy, &WorldShape, f32) -> f32,
    ) {
        // Each level is walked along the segment, so that a hit ends the search, and a long or endless
        // ray stops where the level's proxies end; the coarsest first, whose few cells hold the long
        // walls that end most searches early. Each proxy is tested against the segment by its fat
        // AABB before `visit` is.
        let inverse = direction.recip();
        let mut reach = max_distance;
        for level in self.levels.iter().rev().filter(|level| level.len() > 0) {
            let Some((enter, exit)) = segment_in(&level.bounds(), origin, inverse, reach) else {
                continue;
            };
            level.ray_cast(origin, direction, enter, exit, |id, fat, within| {
                if segment_in(fat, origin, inverse, within).is_some() {
                    let shortened = visit(&self.proxies[id as usize], &self.shapes.get(id), within);
                    reach = reach.min(shortened);
                }
                reach
            });
        }
    }

    /// The proxy of `entity`, if it has one.
    pub(crate) fn proxy_id(&self, entity: Entity) -> Option<u32> {
        let id = *self.proxy_of.get(entity.index_u32() as usize)?;
        (id != NULL && self.proxies[id as usize].entity == entity).then_some(id)
    }

    /// Adds a proxy for `entity`, in the move buffer, in neither structure yet.
    fn create(&mut self, entity: Entity, shape: WorldShape, layers: CollisionLayers, group: u32) {
        let proxy = Proxy {
            entity,
            layers,
            group,
            fat: fatten(&shape, Vec2::ZERO, 0.0),
            old_fat: NOWHERE,
            level: NULL,
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
        self.shapes.set(id, &shape);
        let index = entity.index_u32() as usize;
        if self.proxy_of.len() <= index {
            self.proxy_of.resize(index + 1, NULL);
        }
        self.proxy_of[index] = id;
        if self.first_pair.len() <= id as usize {
            self.first_pair.resize(id as usize + 1, NULL);
        }
        if self.moves.len() <= id as usize {
            self.moves.resize(id as usize + 1, Vec2::ZERO);
            self.sweeps.resize(id as usize + 1, Vec2::ZERO);
        }
        self.first_pair[id as usize] = NULL;
        self.moves[id as usize] = Vec2::ZERO;
        self.mark_changed(id);
        self.touched.set(id);
        self.move_buffer.push(id);
        self.anything_changed = true;
    }

    /// Takes the proxy `id` out; its pairs leave the pair set in this update's pruning.
    fn destroy(&mut self, id: u32) {
        self.unplace(id);
        let proxy = &mut self.proxies[id as usize];
        self.proxy_of[proxy.entity.index_u32() as usize] = NULL;
        proxy.entity = Entity::PLACEHOLDER;
        self.freed.push(id);
        self.touched.set(id);
        self.anything_changed = true;
    }

    /// Gives the proxy `id` a new shape, layers and group; puts it in the move buffer when its box left
    /// its fat AABB or its layers or group changed.
    fn update(&mut self, id: u32, shape: WorldShape, layers: CollisionLayers, group: u32) {
        let displacement = shape.center() - self.shapes.center(id);
        let widest = self.lowest_widest();
        self.shapes.set(id, &shape);
        self.moves[id as usize] = displacement;
        self.mark_changed(id);
        self.anything_changed = true;
        let proxy = &mut self.proxies[id as usize];
        let left = !proxy.fat.contains(&shape.aabb());
        let relayered = proxy.layers != layers || proxy.group != group;
        if !left && !relayered {
            return;
        }
        if relayered {
            proxy.layers = layers;
            proxy.group = group;
            self.relayered.set(id);
        }
        if !self.touched.get(id) {
            proxy.old_fat = proxy.fat;
            self.touched.set(id);
            self.move_buffer.push(id);
        }
        // Taken out of its structure and put back where it belongs in `place_moved`.
        if left {
            proxy.fat = fatten(&shape, displacement, widest);
        }
    }

    /// Sweeps the proxy `id`, which moved by `motion` this update: its fat AABB is grown over the box
    /// where the move began, so that its pairs include whatever it passed.
    fn sweep(&mut self, id: u32, motion: Vec2) {
        self.sweeps[id as usize] = motion;
        self.swept.push(id);
        let start = self.shapes.get(id).translated(-motion).aabb();
        let proxy = &mut self.proxies[id as usize];
        if proxy.fat.contains(&start) {
            return;
        }
        if !self.touched.get(id) {
            proxy.old_fat = proxy.fat;
            self.touched.set(id);
            self.move_buffer.push(id);
        }
        let margin = MARGIN_SHARE * start.half_size().max_element();
        proxy.fat = proxy.fat.merge(&start.grow(Vec2::splat(margin)));
    }

    /// Takes in a collider whose shape or layers changed: updates, adds or takes out its proxy.
    /// A swept collider's move is swept where `sweeps`.
    fn take_change(
        &mut self,
        entity: Entity,
        shape: Option<WorldShape>,
        layers: CollisionLayers,
        group: u32,
        sweeps: bool,
    ) {
        match (self.proxy_id(entity), shape) {
            (Some(id), Some(shape)) => {
                self.update(id, shape, layers, group);
                let motion = self.moves[id as usize];
                if sweeps && motion != Vec2::ZERO {
                    self.sweep(id, motion);
                }
            }
            (None, Some(shape)) => {
                self.create(entity, shape, layers, group);
                self.invalid.remove(&entity);
            }
            (Some(id), None) => {
                self.destroy(id);
                self.invalid.insert(entity);
            }
            (None, None) => {
                self.invalid.insert(entity);
            }
        }
    }

    /// Takes the proxy `id` out of its level. A proxy moved this update is there with its fat AABB
    /// from before.
    fn unplace(&mut self, id: u32) {
        let proxy = &mut self.proxies[id as usize];
        let placed = if self.touched.get(id) {
            proxy.old_fat
        } else {
            proxy.fat
        };
        if proxy.level != NULL {
            self.levels[proxy.level as usize].remove(id, &placed);
        }
        proxy.level = NULL;
    }

    /// The widest fat AABB the lowest level holds.
    fn lowest_widest(&self) -> f32 {
        self.levels.first().map_or(0.0, LooseGrid::widest)
    }

    /// Puts the proxy `id` in the lowest level whose cells fit it, adding levels as needed.
    fn place(&mut self, id: u32) {
        let proxy = &mut self.proxies[id as usize];
        let mut level = 0;
        while !self.levels[level].fits(&proxy.fat) {
            level += 1;
            if level == self.levels.len() {
                let cell = 2.0 * self.levels[level - 1].cell_size();
                self.levels.push(LooseGrid::new(cell, 0));
            }
        }
        self.levels[level].insert(id, proxy.fat);
        proxy.level = level as u32;
    }

    /// Places the proxies of the move buffer, or every proxy in a grid of a cell size picked anew
    /// once their number has changed much since the last pick.
    fn place_moved(&mut self) {
        let count = self.proxy_count();
        let pick = count > 0
            && (self.picked_for == 0
                || (count >= PICK_AGAIN_FROM
                    && (count > 2 * self.picked_for || 4 * count < self.picked_for)));
        if !pick {
            for k in 0..self.move_buffer.len() {
                let id = self.move_buffer[k];
                let proxy = &self.proxies[id as usize];
                if self.is_live(id) && (proxy.level == NULL || proxy.fat != proxy.old_fat) {
                    self.unplace(id);
                    self.place(id);
                }
            }
            return;
        }
        let mut widths = core::mem::take(&mut self.widths);
        widths.clear();
        widths.extend(self.live_ids().map(|id| {
            let fat = self.proxies[id as usize].fat;
            (fat.max - fat.min).max_element()
        }));
        let middle = widths.len() / 2;
        let (_, median, _) = widths.select_nth_unstable_by(middle, f32::total_cmp);
        let cell = (CELL_PER_MEDIAN * *median).max(f32::MIN_POSITIVE);
        self.widths = widths;
        self.levels.clear();
        self.levels.push(LooseGrid::new(cell, count));
        self.picked_for = count;
        for id in 0..self.proxies.len() as u32 {
            if self.is_live(id) {
                self.place(id);
            }
        }
    }

    /// Takes out of the pair set the pairs of a proxy that went, and those of a moved proxy whose fat
    /// AABBs no longer overlap or whose layers no longer interact. The lists of the proxies touched
    /// this update are walked, or every slot where the lists are not kept.
    fn prune_pairs(&mut self) {
        let touched = self.move_buffer.len() + self.freed.len();
        if !self.listed {
            for slot in 0..self.pairs.len() as u32 {
                let pair = self.pairs[slot as usize];
                if !pair.is_free() && (self.touched.get(pair.a) || self.touched.get(pair.b)) {
                    self.prune_pair(slot, pair);
                }
            }
        } else {
            for k in 0..touched {
                let id = match self.move_buffer.get(k) {
                    Some(&id) => id,
                    None => self.freed[k - self.move_buffer.len()],
                };
                let mut slot = self.first_pair[id as usize];
                while slot != NULL {
                    let pair = self.pairs[slot as usize];
                    let next = self.links[slot as usize].next[side(&pair, id)];
                    self.prune_pair(slot, pair);
                    slot = next;
                }
            }
        }
        self.relayered_pairs.sort_unstable();
    }

    /// Takes `pair`, in `slot`, out of the pair set if a proxy went, their fat AABBs no longer
    /// overlap or their layers no longer interact; lists it if kept with a proxy that changed layers.
    fn prune_pair(&mut self, slot: u32, pair: Pair) {
        let (a, b) = (self.proxy(pair.a), self.proxy(pair.b));
        let keep = a.entity != Entity::PLACEHOLDER
            && b.entity != Entity::PLACEHOLDER
            && a.fat.intersects(&b.fat)
            && a.pairs_with(b);
        if !keep {
            self.remove_pair(slot);
        } else if self.relayered.get(pair.a) || self.relayered.get(pair.b) {
            (self.relayered_pairs).push((pair.a.min(pair.b), pair.a.max(pair.b)));
        }
    }

    /// Decides whether this update keeps the lists of each proxy's pairs, and makes them again where
    /// it keeps them after one that did not.
    fn pick_listing(&mut self) {
        let changed = self.changed_list.len() + self.freed.len();
        let listed = changed * SCAN_SHARE < self.proxy_count();
        if listed && !self.listed {
            self.first_pair.fill(NULL);
            self.first_pair.resize(self.proxies.len(), NULL);
            self.links.resize(self.pairs.len(), Links::NONE);
            for slot in 0..self.pairs.len() as u32 {
                let pair = self.pairs[slot as usize];
                if !pair.is_free() {
                    self.link(slot, pair);
                }
            }
        }
        self.listed = listed;
    }

    /// Puts the pair in `slot` first in both its proxies' lists.
    fn link(&mut self, slot: u32, pair: Pair) {
        let next = [
            self.first_pair[pair.a as usize],
            self.first_pair[pair.b as usize],
        ];
        self.links[slot as usize] = Links {
            prev: [NULL; 2],
            next,
        };
        for (proxy, head) in [(pair.a, next[0]), (pair.b, next[1])] {
            if head != NULL {
                let at = side(&self.pairs[head as usize], proxy);
                self.links[head as usize].prev[at] = slot;
            }
            self.first_pair[proxy as usize] = slot;
        }
    }

    /// Adds the pair of the proxies `id` and `other` to the pair set and to both proxies' lists.
    fn add_pair(&mut self, id: u32, other: u32) {
        let (a, b) = if self.proxy(id).entity < self.proxy(other).entity {
            (id, other)
        } else {
            (other, id)
        };
        let slot = match self.free_pairs.pop() {
            Some(slot) => {
                self.pairs[slot as usize] = Pair { a, b };
                slot
            }
            None => {
                self.pairs.push(Pair { a, b });
                self.links.push(Links::NONE);
                (self.pairs.len() - 1) as u32
            }
        };
        if self.listed {
            self.link(slot, Pair { a, b });
        }
        self.pair_count += 1;
    }

    /// Takes the pair in `slot` out of the pair set and out of both proxies' lists.
    fn remove_pair(&mut self, slot: u32) {
        let pair = self.pairs[slot as usize];
        let links = self.links[slot as usize];
        for (end, proxy) in [pair.a, pair.b].into_iter().enumerate() {
            if !self.listed {
                break;
            }
            let (prev, next) = (links.prev[end], links.next[end]);
            match prev {
                NULL => self.first_pair[proxy as usize] = next,
                prev => {
                    let at = side(&self.pairs[prev as usize], proxy);
                    self.links[prev as usize].next[at] = next;
                }
            }
            if next != NULL {
                let at = side(&self.pairs[next as usize], proxy);
                self.links[next as usize].prev[at] = prev;
            }
        }
        self.pairs[slot as usize] = Pair::FREE;
        self.pair_count -= 1;
        self.free_pairs.push(slot);
        self.removed_pairs.push(slot);
    }

    /// Queries the structures with the fat AABB of each proxy of the move buffer, and adds the pairs
    /// it finds that are new. Where both proxies moved, the pair is added by the query of the lower id.
    ///
    /// The pair set held exactly the overlapping pairs before this update, so a pair found is new
    /// unless the two proxies' fat AABBs before this update's moves overlapped too: that needs no
    /// look-up in a set of pairs. A proxy whose layers changed has its kept pairs listed instead.
    fn find_new_pairs(&mut self) {
        let buffer = core::mem::take(&mut self.move_buffer);
        for &id in &buffer {
            if !self.is_live(id) {
                continue;
            }
            let proxy = self.proxies[id as usize];
            let Self {
                proxies,
                levels,
                touched,
                relayered_pairs,
                relayered,
                new_pairs,
                ..
            } = self;
            let mut add = |other: u32| {
                let found = &proxies[other as usize];
                let other_moved = touched.get(other);
                if other == id || (other_moved && other < id) || !proxy.pairs_with(found) {
                    return;
                }
                let held = if relayered.get(id) || relayered.get(other) {
                    relayered_pairs
                        .binary_search(&(id.min(other), id.max(other)))
                        .is_ok()
                } else {
                    let other_before = if other_moved {
                        found.old_fat
                    } else {
                        found.fat
                    };
                    proxy.old_fat.intersects(&other_before)
                };
                if !held {
                    new_pairs.push((id, other));
                }
            };
            for level in levels.iter().filter(|level| level.len() > 0) {
                level.query(&proxy.fat, &mut add);
            }
        }
        self.move_buffer = buffer;
        let new_pairs = core::mem::take(&mut self.new_pairs);
        for &(id, other) in &new_pairs {
            self.add_pair(id, other);
        }
        self.new_pairs = new_pairs;
        self.new_pairs.clear();
    }

    /// Checks the broad phase's invariants, panicking with the first broken one: the levels keep
    /// their own rules and hold every proxy once, each in the lowest level that fits it; every proxy's
    /// box lies inside its fat AABB; and the pair set is exactly the set of pairs of proxies whose fat
    /// AABBs overlap and that may pair ([`Proxy::pairs_with`]), found by brute force, each once, the
    /// lower entity first. Takes time quadratic in the proxies: for tests.
    pub(crate) fn validate(&self) {
        let live: Vec<u32> = self.live_ids().collect();
        let placed: usize = self.levels.iter().map(LooseGrid::len).sum();
        assert_eq!(placed, live.len(), "every proxy is placed once");
        for (level, grid) in self.levels.iter().enumerate() {
            grid.validate();
            for (id, fat) in grid.iter() {
                let proxy = &self.proxies[id as usize];
                assert_eq!(
                    (proxy.level, proxy.fat),
                    (level as u32, fat),
                    "proxy {id} in level {level}"
                );
                let below = level.checked_sub(1).map(|below| &self.levels[below]);
                assert!(
                    !below.is_some_and(|below| below.fits(&fat)),
                    "proxy {id} in the lowest level that fits it"
                );
            }
        }
        for &id in &live {
            let proxy = &self.proxies[id as usize];
            let aabb = self.shapes.get(id).aabb();
            assert!(
                proxy.fat.contains(&aabb),
                "proxy {id}'s box lies in its fat AABB"
            );
            assert_eq!(
                self.proxy_id(proxy.entity),
                Some(id),
                "proxy {id} found by its entity"
            );
        }
        let overlapping = |a: &Proxy, b: &Proxy| a.fat.intersects(&b.fat) && a.pairs_with(b);
        let expected: Vec<(u32, u32)> = (live.iter().enumerate())
            .flat_map(|(k, &a)| live[k + 1..].iter().map(move |&b| (a, b)))
            .filter(|&(a, b)| overlapping(self.proxy(a), self.proxy(b)))
            .collect();
        let mut held = Vec::new();
        for pair in self.pairs.iter().filter(|pair| !pair.is_free()) {
            let (a, b) = (self.proxy(pair.a).entity, self.proxy(pair.b).entity);
            assert!(a < b, "pair {pair:?} has the lower entity first");
            held.push((pair.a.min(pair.b), pair.a.max(pair.b)));
        }
        held.sort_unstable();
        if self.listed {
            let mut listed: Vec<(u32, u32)> = (0..self.proxies.len() as u32)
                .flat_map(|id| self.pairs_of(id).map(move |(slot, _)| (slot, id)))
                .collect();
            listed.sort_unstable();
            let ends = (self.pairs.iter().enumerate())
                .filter(|(_, pair)| !pair.is_free())
                .flat_map(|(slot, pair)| [(slot as u32, pair.a), (slot as u32, pair.b)]);
            let mut ends: Vec<(u32, u32)> = ends.collect();
            ends.sort_unstable();
            assert_eq!(
                listed, ends,
                "every pair is listed by its two proxies, once each"
            );
        }
        assert_eq!(
            held, expected,
            "the pair set is the brute-force set of overlapping fat AABBs"
        );
        assert_eq!(self.pair_count, held.len(), "every pair is counted");
    }
}

/// `shape`'s box grown by its margin ([`MARGIN_SHARE`]) and stretched along `displacement`, its last
/// move ([`PREDICTED_MOVES`]).
fn fatten(shape: &WorldShape, displacement: Vec2, widest: f32) -> Aabb2d {
    let aabb = shape.aabb();
    let fat = aabb.grow(Vec2::splat(MARGIN_SHARE * aabb.half_size().max_element()));
    // Stretched ahead along the last move, as Box2D v2's `b2DynamicTree::MoveProxy` does, so that a
    // collider that keeps its course stays in its fat AABB for several moves, however fast it goes
    // (workload `bullets`); but not past the widest box the lowest level holds: a move that would stretch it
    // further is a jump (a teleport, workload W5), which says nothing of the next.
    let stretch = PREDICTED_MOVES * displacement;
    let room = Vec2::splat(widest) - (fat.max - fat.min);
    let stretch = if stretch.abs().cmple(room).all() {
        stretch
    } else {
        Vec2::ZERO
    };
    let (ahead, behind) = (stretch.max(Vec2::ZERO), stretch.min(Vec2::ZERO));
    Aabb2d {
        min: fat.min + behind,
        max: fat.max + ahead,
    }
}

/// The enabled colliders with their world shapes and layers, and those components' change ticks,
/// whether each is swept and teleported, and the tile map of those that are a map's regions.
type ColliderRows<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        Ref<'static, ColliderWorldShape>,
        Ref<'static, CollisionLayers>,
        Has<SweptCollider>,
        Has<Teleported>,
        Option<&'static TileRegionOf>,
    ),
    ActiveColliderFilter,
>;

/// Tells the broad phase of a collider disabled or enabled again ([`ColliderDisabled`]): it takes the
/// proxy out, and its pairs end on its next update, or puts it back.
pub(crate) fn queue_disabled_collider(
    toggled: On<Insert, ColliderDisabled>,
    mut broad_phase: ResMut<BroadPhase>,
) {
    broad_phase.queue(toggled.entity);
}

/// [`queue_disabled_collider`] for the marker's removal.
pub(crate) fn queue_enabled_collider(
    enabled: On<Remove, ColliderDisabled>,
    mut broad_phase: ResMut<BroadPhase>,
) {
    broad_phase.queue(enabled.entity);
}

/// Brings the proxies up to date with the enabled colliders whose world shape or layers changed since
/// the last update, read a table at a time where Bevy's tables allow, and with the colliders that
/// came, went or were disabled; then prunes the pair set and queries the moved proxies for new pairs.
pub(crate) fn update_broad_phase(
    mut broad_phase: ResMut<BroadPhase>,
    rows: ColliderRows,
    colliders: ActiveColliders,
    regions: Query<&TileRegionOf>,
    hooked: Query<Entity, With<ActiveHooks>>,
    mut unhooked: RemovedComponents<ActiveHooks>,
    mut diagnostics: ResMut<CollisionDiagnostics>,
) {
    let timer = StageTimer::start();
    let bp = &mut *broad_phase;
    bp.anything_changed = false;
    bp.removed_pairs.clear();
    bp.relayered_pairs.clear();
    bp.move_buffer.clear();
    bp.changed_list.clear();
    bp.changed.0.fill(false);
    bp.touched.0.fill(false);
    bp.relayered.0.fill(false);
    for k in 0..bp.swept.len() {
        let id = bp.swept[k];
        bp.sweeps[id as usize] = Vec2::ZERO;
    }
    core::mem::swap(&mut bp.swept, &mut bp.swept_before);
    bp.swept.clear();
    let queue = core::mem::take(&mut bp.queue);
    // A collider removed and given a `Collider` again, or disabled and enabled again, since the last
    // update comes back as a new proxy, so that its pairs start anew: their ends were sent at the removal.
    for &entity in &queue {
        if let Some(id) = bp.proxy_id(entity) {
            bp.destroy(id);
        }
    }
    match rows.contiguous_iter() {
        Ok(tables) => {
            for (entities, shapes, layers, swept, teleported, maps) in tables {
                let since = ChangedSince::new(shapes.last_run_tick(), shapes.this_run_tick());
                let (shape_ticks, layer_ticks) =
                    (shapes.changed_ticks_slice(), layers.changed_ticks_slice());
                let (shapes, layers) = (shapes.into_inner(), layers.into_inner());
                let changed =
                    |row: usize| since.holds(shape_ticks[row]) | since.holds(layer_ticks[row]);
                for_each_changed_row(entities.len(), changed, |row| {
                    bp.take_change(
                        entities[row],
                        shapes[row].0,
                        layers[row],
                        group_of(maps.map(|maps| &maps[row])),
                        swept && !teleported,
                    );
                });
            }
        }
        Err(_) => {
            for (entity, shape, layers, swept, teleported, map) in &rows {
                if shape.is_changed() || layers.is_changed() {
                    let group = group_of(map);
                    bp.take_change(entity, shape.0, *layers, group, swept && !teleported);
                }
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
                Some(shape) => {
                    let group = group_of(regions.get(entity).ok());
                    bp.create(entity, shape, *layers, group);
                }
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
    // A proxy swept last update has its pairs tested again, as a pair that touched only on the way
    // must end.
    for k in 0..bp.swept_before.len() {
        let id = bp.swept_before[k];
        if bp.is_live(id) {
            bp.mark_changed(id);
            bp.anything_changed = true;
        }
    }
    // So are the pairs of a collider with hooks, whose answer may change without a move, and of one
    // whose hooks were taken off, whose pairs they may have kept apart.
    for entity in hooked.iter().chain(unhooked.read()) {
        if let Some(id) = bp.proxy_id(entity) {
            bp.mark_changed(id);
            bp.anything_changed = true;
        }
    }
    bp.place_moved();
    bp.pick_listing();
    if bp.anything_changed {
        bp.prune_pairs();
    }
    bp.find_new_pairs();
    bp.anything_changed |= !bp.removed_pairs.is_empty();
    bp.free.append(&mut bp.freed);
    diagnostics.colliders = bp.proxy_count();
    diagnostics.invalid_colliders = bp.invalid.len();
    diagnostics.candidate_pairs = bp.pair_count();
    diagnostics.queried_proxies = bp.move_buffer.len();
    diagnostics.timings.broad_phase = timer.elapsed();
}
