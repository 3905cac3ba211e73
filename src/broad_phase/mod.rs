//! The broad phase: which pairs of colliders are worth an exact test.
//!
//! A uniform grid over the bounding boxes (`grid.rs`); cost grows with the colliders and the pairs that
//! share cells, not with N². A build brought by moves alone grows every box by a margin (a tenth of a
//! typical collider's size, `DRIFT_MARGIN_SHARE`) and keeps the pairs of the grown boxes. The grid is
//! built anew when a collider was disabled or enabled or changed layers, or the settings changed, or
//! when more than one collider in `MOVED_SHARE` has moved since the last build: left its grown box,
//! or came or went (spawned or despawned, its `Collider` inserted or removed). Until then:
//! - when only a few moved (at most one in `MOVED_SHARE` since the build), only pairs involving a
//!   collider that moved since the build are looked for (`moved.rs`): colliders that stay still cost
//!   nothing after the build;
//! - when many moved but stayed within their grown boxes (every collider drifting a little, as in a
//!   game where everything walks), the build's pairs whose boxes overlap now hold every pair of two such
//!   colliders, and only those that left their boxes are looked for as moved ones. The sort by cell
//!   and the search of the cells, two thirds of a build's instructions, are left out. In worlds of
//!   512 colliders or more the build they would make due is made beside the update before, on a
//!   thread of the plugin's own, and taken in by the update (`background.rs`). Colliders that come
//!   and go meanwhile are found in Bevy's tables by entity (`drift.rs`); where the update gathers the
//!   colliders instead (beyond eight tables, or beyond the cache), one that went builds the grid anew.
//!
//! When nothing moved or changed, the broad and narrow phases keep their results.

mod background;
mod build_thread;
mod cell_sort;
mod drift;
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "tested on its own; the broad phase's large proxies and the spatial queries move onto it"
    )
)]
mod dynamic_tree;
mod gather;
mod grid;
mod moved;
mod step_sample;

use std::sync::Arc;

use bevy::math::Vec4Swizzles;
use bevy::math::bounding::Aabb2d;
use bevy::prelude::*;

use crate::collider::{ActiveColliders, Collider, ColliderDisabled};
use crate::diagnostics::{CollisionDiagnostics, StageTimer};
use crate::geometry::WorldShape;
use crate::kept::for_each_kept;
use crate::layers::CollisionLayers;
use crate::narrow_phase::KindGroups;
use crate::parallel::{gather_in_order, pool_for};
use crate::plugin::CollisionSettings;
use crate::prefetch::{worth_prefetching, worth_prefetching_as_many};
use background::BackgroundBuild;
use drift::{
    Drift, DriftSource, DriftTarget, EscapeChecks, NewRow, RowsTaken, TableRows, take_drifted,
    take_rows,
};
use gather::{GatherTarget, Gathered, GatheredCollider, NO_ROW, gather_colliders};
use grid::{Bounds, UniformGrid};
use moved::MovedSinceBuild;
use step_sample::StepSample;

/// The grid is kept while at most one collider in this many has moved since it was built.
pub(crate) const MOVED_SHARE: usize = 8;

/// Below this many colliders a full build reorders the entries on one thread (see the grid's sort).
const REORDER_PARALLEL_THRESHOLD: usize = 32_768;

/// One collider as the pipeline sees it this frame, packed for the pair loops. Its layers are kept
/// apart ([`BroadPhase`]'s `layers`), and only when some collider has other than the default ones:
/// 40 bytes an entry instead of 48 for every pass that moves or reads entries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColliderEntry {
    pub entity: Entity,
    pub shape: WorldShape,
}

/// The colliders taking part this frame and the candidate pairs the broad phase found among them.
///
/// Filled in [`CollisionSystems::BroadPhase`](crate::CollisionSystems::BroadPhase); the debug overlay
/// reads it.
#[derive(Resource, Debug, Default)]
pub struct BroadPhase {
    /// The last build of the grid, with the colliders taking part ([`GridBuild::entries`]), and this
    /// update's gathered colliders.
    pub(crate) build: GridBuild,
    /// Pairs of slots in the entries for the exact tests.
    pub(crate) candidates: Vec<(u32, u32)>,
    /// The candidates grouped by their kinds already, for the narrow phase
    /// ([`Self::candidates_to_group`]).
    grouped: GroupedCandidates,
    /// Whether nothing changed since the last update, so its pairs and contacts still hold.
    pub(crate) unchanged: bool,
    /// Whether `candidates` holds only the pairs involving a collider that moved since the last full
    /// build: the pairs of two other colliders keep last update's result.
    pub(crate) incremental: bool,
    /// The enabled colliders whose world shape changed since the broad phase last ran, with their new
    /// shape (`None` when invalid): filled by
    /// [`CollisionSystems::Prepare`](crate::CollisionSystems::Prepare), which sees every such change, so
    /// the broad phase need not look for them. Only until they are too many to look for their pairs one
    /// by one (see [`Self::rebuild_due`]): the broad phase then gathers every collider, which needs no
    /// list of them.
    pub(crate) moved_entities: Vec<(Entity, Option<WorldShape>)>,
    /// Whether a collider's [`CollisionLayers`] changed since the broad phase last ran: set by
    /// [`CollisionSystems::Prepare`](crate::CollisionSystems::Prepare), which reads the colliders' change
    /// ticks a table at a time (`prepare.rs`), so that the broad phase need not read them again. Not
    /// for a new collider's layers, which the broad phase reads where it takes the collider in.
    pub(crate) layers_changed: bool,
    /// The entities whose `Collider` was removed (or that were despawned) since the broad phase last
    /// ran: recorded by the observer that ends their contacts
    /// ([`end_contacts_of_removed_collider`](crate::events::end_contacts_of_removed_collider)).
    pub(crate) removed: Vec<Entity>,
    /// Whether this update gathered every collider (see [`CollisionDiagnostics::colliders_gathered`]).
    gathered_this_update: bool,
    /// This update's moved colliders: their slots and new shapes.
    moved_shapes: Vec<(usize, WorldShape)>,
    /// This update's colliders new since the build, with their shapes and layers.
    new_colliders: Vec<(Entity, WorldShape, CollisionLayers)>,
    /// What an update that read the colliders in their tables found besides their shapes.
    rows_taken: RowsTaken,
    /// The colliders moved since the build that are not gone: those whose pairs are looked for.
    live_moved: Vec<u32>,
    /// The grid of the colliders moved since the build, rebuilt each update.
    moved_grid: UniformGrid,
    /// The slots that left their grown box of the build this update, and the same for each task of a
    /// split update.
    escaped: Vec<u32>,
    task_escaped: Vec<Vec<u32>>,
    /// Each entry's padded bounding box as of this update, packed, in the entries' order;
    /// [`Bounds::NOWHERE`] for the colliders moved since the build, whose pairs are found apart.
    slot_bounds: Vec<Bounds>,
    /// The order of the grid of the colliders moved since the build.
    moved_order: Vec<u32>,
    /// Whether the last build grew its boxes (see [`Self::build_grid`]).
    grown: bool,
    /// How many updates kept the grid since the last build, and how many kept the one before it.
    kept_since_build: usize,
    kept_build_before: usize,
    /// Whether the build running in the background started late, once its wave of escapes had begun
    /// ([`background::started_late`]).
    started_late: bool,
    /// How many builds to come leave their boxes as they are, unless `step_sample` tells otherwise.
    plain_builds_left: usize,
    /// A sample of the last plain build's boxes, which tells the next build whether to grow its boxes.
    step_sample: StepSample,
    /// Whether this update's attempt to keep the grid found too many colliders out of their grown boxes
    /// (rather than colliders it could not take, or other layers).
    too_many_escaped: bool,
    invalid: usize,
    /// Whether some collider has layers other than [`CollisionLayers::ALL`], so that pairs must be
    /// filtered by layers; as of the last gather (the last build's is whether it kept layers).
    layered: bool,
    /// The build running in the background, or its buffers at rest (`background.rs`).
    background: BackgroundBuild,
}

impl BroadPhase {
    /// The pairs handed to the exact tests this update: their bounding boxes overlap and their layers
    /// allow them. On an update where few colliders moved, only the pairs involving one of those: the
    /// others keep last update's result untested. On an update where no enabled collider moved and
    /// nothing else changed, nothing is tested and these are the last tested update's pairs.
    pub fn candidate_pairs(&self) -> impl Iterator<Item = (Entity, Entity)> + '_ {
        self.candidates.iter().map(|&(i, j)| {
            (
                self.build.entries[i as usize].entity,
                self.build.entries[j as usize].entity,
            )
        })
    }

    /// The candidates, as slots of the entries: those the narrow phase groups by their kinds, and those
    /// laid out in groups already, with their layout.
    pub(crate) fn candidates_to_group(
        &self,
    ) -> (&[(u32, u32)], Option<(&[(u32, u32)], &KindGroups)>) {
        match self.grouped.from {
            Some(from) => {
                let (to_group, grouped) = self.candidates.split_at(from);
                (to_group, Some((grouped, &self.grouped.layout)))
            }
            None => (&self.candidates, None),
        }
    }

    /// How many pairs [`Self::candidate_pairs`] gives.
    pub fn candidate_count(&self) -> usize {
        self.candidates.len()
    }

    /// The bounding boxes of the colliders taking part this frame.
    pub fn aabbs(&self) -> impl Iterator<Item = (Entity, Aabb2d)> + '_ {
        (self.build.entries.iter().enumerate())
            .filter(|&(slot, _)| !self.build.moved.is_gone(slot))
            .map(|(_, entry)| (entry.entity, entry.shape.aabb()))
    }

    /// The colliders moved since the last full build, in the order they first moved: on an update that
    /// tests only their pairs ([`Self::incremental`]), the pairs of the others keep last update's
    /// result. Between two builds the list only grows.
    pub(crate) fn moved_since_build(&self) -> impl ExactSizeIterator<Item = Entity> + '_ {
        (self.build.moved.slots().iter()).map(|&slot| self.build.entries[slot as usize].entity)
    }

    /// Whether, with `moved_now` colliders moved this update besides those moved since the last build,
    /// too many have moved to look for their pairs one by one: the broad phase gathers every collider,
    /// then keeps the grid if few left their grown boxes, or builds it anew.
    #[inline]
    pub(crate) fn rebuild_due(&self, moved_now: usize) -> bool {
        self.moved_room().is_none_or(|room| moved_now > room)
    }

    /// How many colliders may move this update, besides those moved since the last build, with the grid
    /// kept: at most one in [`MOVED_SHARE`] of the entries in all. `None` when the grid is built anew
    /// whatever moves.
    #[inline]
    pub(crate) fn moved_room(&self) -> Option<usize> {
        moved_room(self.build.entries.len(), self.build.moved.slots().len())
    }

    /// Keeps the grid of the last build when only moves, and colliders that came or went, brought the
    /// update here (`moves_alone`: too many for [`Self::update_moved`], and nothing else changed) and
    /// [`Self::update_drifted`] allows it, or gathers every enabled, valid collider and builds the grid
    /// anew. Returns whether it built the grid.
    ///
    /// The update that keeps the grid reads the colliders where they are when it can
    /// ([`Self::rows_in_place`]), and gathers them first otherwise, where it cannot take them in once
    /// a collider went.
    fn update_all(
        &mut self,
        colliders: &ActiveColliders,
        moves_alone: bool,
        layers_changed: bool,
    ) -> bool {
        self.too_many_escaped = false;
        let removed = !self.removed.is_empty();
        let drifted = moves_alone
            && self.grown
            && match self.rows_in_place(colliders, layers_changed) {
                Some(rows) => self.update_drifted(DriftFrom::Table(&rows), colliders),
                // The gathered colliders are taken in the build's order of their gathered indices,
                // which colliders that went since shifted.
                None if removed => false,
                None => {
                    self.gather(colliders);
                    self.update_drifted(DriftFrom::Gathered, colliders)
                }
            };
        if !drifted {
            if !self.gathered_this_update {
                self.gather(colliders);
            }
            // Where the next update would gather the colliders, which it cannot take in where some
            // went, an update on which some went builds the grid with the boxes as they are, as it
            // did before updates read colliders that came and went in their tables.
            self.build_grid(moves_alone && (!removed || self.rows_readable_after_build()));
        }
        !drifted
    }

    /// Whether the next update could read the colliders in their tables ([`Self::rows_in_place`]),
    /// after a build over this update's gathered colliders that grows the boxes.
    fn rows_readable_after_build(&self) -> bool {
        let count = self.build.gathered.len();
        self.build.gathered_rows
            && pool_for(count, drift::PARALLEL_THRESHOLD).is_none()
            && !worth_prefetching_as_many::<ColliderEntry>(count)
    }

    /// The rows of the tables that hold every collider, for an update that keeps the grid to read in
    /// place of a gather (`drift.rs`, [`TableRows`]): where the build's gathered indices were those
    /// rows and its entries fit the cache ([`GridBuild::order_indexes_rows`]), no collider's layers
    /// changed since the last update (`layers_changed`), and the entries are taken on one thread. An
    /// update on which some layers changed gathers, and builds the grid anew where they differ from the
    /// build's, so that the layers of the colliders the build holds are the build's until then.
    ///
    /// Beyond the cache the rows' slots, written out of order, cost more than the gather saves: on
    /// workload W1 at 1,000,000 colliders the broad phase took 47 and 50 ms against 30 and 32 ms (two
    /// alternating runs each).
    fn rows_in_place<'a>(
        &self,
        colliders: &'a ActiveColliders,
        layers_changed: bool,
    ) -> Option<TableRows<'a>> {
        let entries = &self.build.entries;
        let one_thread = pool_for(entries.len(), drift::PARALLEL_THRESHOLD).is_none();
        (self.build.order_indexes_rows && !layers_changed && one_thread)
            .then(|| tables_in_place(colliders))
            .flatten()
    }

    /// Gathers every enabled, valid collider into the build's gathered colliders, in the order of
    /// Bevy's tables.
    fn gather(&mut self, colliders: &ActiveColliders) {
        Gathered {
            invalid: self.invalid,
            layered: self.layered,
            rows: self.build.gathered_rows,
        } = gather_colliders(
            colliders,
            GatherTarget {
                colliders: &mut self.build.gathered,
                layers: &mut self.build.gathered_layers,
            },
        );
        self.gathered_this_update = true;
    }

    /// Builds the grid over the gathered colliders and finds the pairs. A build brought by moves alone
    /// (`after_moves`) grows each box by [`drift_margin`], keeps the pairs of the grown boxes, and
    /// hands over those whose boxes overlap; other builds (the first, after a collider changed, or
    /// after one went where the next update could not take that in, see [`Self::update_all`]) leave the
    /// boxes as they are, and keep nothing. When the last grown build was not kept for a single update
    /// because too many colliders left their boxes (everything teleports every update), the builds
    /// brought by moves leave the boxes as they are too (not when a collider changed layers, see
    /// [`Self::update_drifted`]), until a sample of the colliders shows them staying within grown boxes
    /// from one update to the next ([`StepSample`]). Where the sample cannot tell, a build grows its
    /// boxes after [`PLAIN_BUILDS`] plain ones.
    fn build_grid(&mut self, after_moves: bool) {
        if self.grown && self.kept_since_build == 0 && self.too_many_escaped {
            self.plain_builds_left = PLAIN_BUILDS;
        }
        if after_moves && self.plain_builds_left > 0 {
            match self.step_sample.stayed_within(&self.build.gathered) {
                Some(true) => self.plain_builds_left = 0,
                Some(false) => self.plain_builds_left = PLAIN_BUILDS,
                None => {}
            }
        }
        self.grown = after_moves && self.plain_builds_left == 0;
        if after_moves {
            self.plain_builds_left = self.plain_builds_left.saturating_sub(1);
        }
        if self.plain_builds_left > 0 {
            self.step_sample.record(&self.build.gathered);
        } else {
            self.step_sample.clear();
        }
        self.kept_build_before = core::mem::take(&mut self.kept_since_build);
        let Self {
            build,
            candidates,
            grouped,
            layered,
            slot_bounds,
            grown,
            ..
        } = self;
        build.run(*grown, *layered);
        if *grown {
            hand_over_grown_pairs(build, slot_bounds, candidates, grouped);
        } else {
            // The pairs of a build that kept nothing go to the exact tests as they are, to be grouped
            // there (no plain build lays them out).
            core::mem::swap(candidates, &mut build.pairs);
        }
    }

    /// Takes this update's colliders (`from`) into the entries when they are the entries of the last
    /// build with the same layers, and few have left their grown boxes of the build: at most one in
    /// [`MOVED_SHARE`] with those moved since the build, which these join. Finds the pairs: the
    /// build's pairs of two colliders still in their boxes, where the boxes overlap now, and the pairs
    /// of the moved ones. Returns `false` when a build is due instead.
    ///
    /// Gathered colliders are taken in the build's order (`drift.rs`), which reads them where the
    /// build's reorder read them and their grown boxes in sequence, and must be the build's colliders
    /// in the build's order of the gather. The tables' rows are taken in their order ([`take_rows`]),
    /// each written to its slot; colliders that came, went or changed tables since the build count as
    /// moved, or are looked up in their new rows, as in [`Self::update_moved`]: the removed ones are
    /// marked gone, the new ones appended ([`Self::append_new_rows`]). On workload W6 at 10,000
    /// colliders (100 despawned and 100 spawned a frame among colliders that all drift), which built
    /// the grid on every update, the broad phase took 0.173 to 0.176 ms against 0.277 to 0.278 ms, and
    /// the pipeline 0.414 to 0.421 ms against 0.591 to 0.598 ms (three alternating runs of 300
    /// frames, a quiet stretch); with one despawned and one spawned a frame (`--workload w1 --churn
    /// 1`), 0.305 and 0.307 ms against 0.515 and 0.517 ms (a slower one).
    fn update_drifted(&mut self, from: DriftFrom, colliders: &ActiveColliders) -> bool {
        let count = self.build.entries.len();
        if count == 0 {
            return false;
        }
        match from {
            // Gathered colliders are taken by their gathered indices, in the build's order: entries
            // that came or went since the build, or colliders found in other rows, shifted them.
            DriftFrom::Gathered => {
                let build = &self.build;
                if build.gathered.len() != count
                    || build.moved.membership_changed()
                    || build.rows_relocated
                {
                    return false;
                }
                self.build.moved.index(&self.build.entries);
            }
            // The rows are taken by entity where they moved (`take_rows`), and the colliders that
            // went since the last update are marked gone first.
            DriftFrom::Table(..) => self.mark_removed_gone(colliders),
        }
        let Some(room) = moved_room(count, self.build.moved.slots().len()) else {
            return false;
        };
        // The build's is whether it kept the layers; a gather's whether some collider has others than
        // the default ones now. Read from the tables, the layers are those of the last gather, which
        // found the same colliders in the same rows.
        let built_layered = !self.build.layers.is_empty();
        if let DriftFrom::Table(..) = from {
            self.layered = built_layered;
        }
        if self.layered != built_layered {
            return false;
        }
        if self.layered
            && matches!(from, DriftFrom::Gathered)
            && (self.build.layers.iter().zip(&self.build.order))
                .any(|(layers, &gathered)| self.build.gathered_layers[gathered as usize] != *layers)
        {
            return false;
        }
        self.slot_bounds.resize(count, Bounds::default());
        let GridBuild {
            gathered,
            grid,
            order,
            row_slots,
            entries,
            moved,
            ..
        } = &mut self.build;
        let target = DriftTarget {
            entries: Arc::make_mut(entries).as_mut_slice(),
            slot_bounds: &mut self.slot_bounds,
            order,
        };
        let checks = EscapeChecks { grid, moved, room };
        let drift = match from {
            DriftFrom::Gathered => {
                let source = DriftSource { gathered, checks };
                let pool = pool_for(count, drift::PARALLEL_THRESHOLD);
                take_drifted(
                    pool,
                    source,
                    target,
                    &mut self.escaped,
                    &mut self.task_escaped,
                )
            }
            DriftFrom::Table(rows) => {
                let (escaped, taken) = (&mut self.escaped, &mut self.rows_taken);
                take_rows(rows, row_slots, checks, target, escaped, taken)
            }
        };
        match drift {
            Drift::Taken => {}
            Drift::TooManyEscaped => {
                self.too_many_escaped = true;
                return false;
            }
            Drift::NotTaken => return false,
        }
        for &slot in &self.escaped {
            self.build.moved.mark(slot as usize);
        }
        if let DriftFrom::Table(..) = from
            && !self.append_new_rows()
        {
            return false;
        }
        // The pairs of moved colliders are found apart (`find_moved_pairs`): their boxes overlap
        // nothing in the filter of the build's pairs, which then need not look up whether either of
        // the two moved.
        for &slot in self.build.moved.slots() {
            self.slot_bounds[slot as usize] = Bounds::NOWHERE;
        }
        // Started before the rest of the update's work, which it runs beside.
        let came_or_went = self.build.moved.came_or_went();
        let escaped = self.build.moved.slots().len() - came_or_went;
        let (kept, build) = (self.kept_since_build, &self.build);
        let leaving_soon = || {
            let grown = |slot| (!build.moved.is_gone(slot)).then(|| build.grid.sorted_bounds(slot));
            // The build's slots: those appended since have no grown box.
            let now = &self.slot_bounds[..build.order.len()];
            // The updates since the positions the build grew its boxes around: one more than those
            // before this one that kept it, whether it was built in an update or beside one.
            background::sample_shows_leaving_soon(now, grown, build.margin, kept + 1)
        };
        if background::should_start(
            count,
            escaped,
            came_or_went,
            kept,
            self.kept_build_before,
            leaving_soon,
        ) {
            self.started_late = background::started_late(count, escaped);
            match from {
                DriftFrom::Gathered => self.start_background_build(),
                // The colliders read in their table: the build gathers them from the entries.
                DriftFrom::Table(..) => self
                    .background
                    .start_from_entries(self.layered, &self.build),
            }
        }
        self.find_moved_pairs();
        let build = &self.build;
        let (boxes, out, grouped) = (&self.slot_bounds, &mut self.candidates, &mut self.grouped);
        push_overlapping_of_build(build, boxes, out, grouped);
        true
    }

    /// Marks gone the slots of the colliders removed since the last update ([`Self::removed`]) that are
    /// not active now in `colliders`, having indexed the entries. One active again (its `Collider`
    /// inserted anew) keeps its slot.
    fn mark_removed_gone(&mut self, colliders: &ActiveColliders) {
        let moved = &mut self.build.moved;
        moved.index(&self.build.entries);
        for &entity in &self.removed {
            if !colliders.contains(entity)
                && let Some(slot) = moved.slot(entity, &self.build.entries)
            {
                moved.remove(slot);
            }
        }
    }

    /// Appends to the entries, as moved, the colliders [`take_rows`] found new since the build, with
    /// their layers where the build kept layers, and gives their rows their slots. Returns `false`
    /// where one has other layers than the default ones and the build kept none: a build is due
    /// instead.
    fn append_new_rows(&mut self) -> bool {
        let RowsTaken {
            new_rows,
            relocated,
        } = &self.rows_taken;
        let build = &mut self.build;
        build.rows_relocated |= *relocated || !new_rows.is_empty();
        if new_rows.is_empty() {
            return true;
        }
        let layered = !build.layers.is_empty();
        if !layered
            && new_rows
                .iter()
                .any(|new| new.layers != CollisionLayers::ALL)
        {
            return false;
        }
        let entries = Arc::make_mut(&mut build.entries);
        for &NewRow {
            entity,
            shape,
            layers,
            row,
        } in new_rows
        {
            if layered {
                build.layers.push(layers);
            }
            let slot = entries.len();
            build.moved.append(entity, slot);
            build.row_slots[row as usize] = RowSlot {
                grown: Bounds::NOWHERE,
                entity,
                slot: slot as u32,
            };
            entries.push(ColliderEntry { entity, shape });
        }
        self.slot_bounds.resize(entries.len(), Bounds::NOWHERE);
        true
    }

    /// Starts a build over this update's gathered colliders in the background (`background.rs`),
    /// lending it their buffers: the next update's gather fills others.
    fn start_background_build(&mut self) {
        let (build, layered) = (&mut self.build, self.layered);
        self.background.start(layered, |job| {
            core::mem::swap(&mut job.gathered, &mut build.gathered);
            core::mem::swap(&mut job.gathered_layers, &mut build.gathered_layers);
            job.gathered_rows = build.gathered_rows;
        });
    }

    /// Marks the end of the update's pipeline, for the build in the background this update started
    /// (`background.rs`): one kept until now goes to its thread, to run beside the rest of the frame.
    pub(crate) fn end_pipeline(&mut self) {
        self.background.hand_over();
    }

    /// Waits for the build running in the background, if any has begun (one not begun is dropped, see
    /// `background.rs`), and takes it in as the last build when `take` (the update keeps the grid if the
    /// colliders only drifted); otherwise its buffers wait for the next. Returns whether it took it in.
    fn settle_background_build(&mut self, take: bool) -> bool {
        let Some(job) = self.background.finish() else {
            return false;
        };
        if !take {
            return false;
        }
        // The update's gathered colliders go with the rest: the gather fills them anew.
        core::mem::swap(&mut self.build, job);
        self.grown = true;
        // A build that started late counts as kept an update less, so that the next starts an update
        // before its wave rather than on it.
        let kept = core::mem::take(&mut self.kept_since_build);
        self.kept_build_before = kept.saturating_sub(usize::from(self.started_late));
        true
    }

    /// Takes this update's moved colliders into the entries and finds the pairs that involve a collider
    /// moved since the last build. Returns `false` when a full build is due instead, having changed
    /// nothing the build keeps: too many moved, or one of them became invalid.
    ///
    /// Colliders that came or went count as moved, so that a game that spawns and despawns a few
    /// colliders a frame (shots in a level of walls) keeps its grid: a new collider is appended to the
    /// entries ([`MovedSinceBuild::append`]), with its layers, read from `colliders`, where the build
    /// kept layers (one with other layers than the default ones where it kept none brings a build,
    /// which sets up the filter); a removed one (in [`Self::removed`], and no active collider now in
    /// `colliders`) keeps its slot, marked gone ([`MovedSinceBuild::remove`]). Workload W3 at 100,000
    /// colliders (1,000 of them moving) with one moving collider despawned and one spawned a frame
    /// (`collision_bench --workload w3 --n 100000 --churn 1`) built its grid on every update, and its
    /// pipeline took 8.64 and 8.89 ms; now 0.424 and 0.435 ms (two alternating runs of 200 frames, a
    /// slow stretch).
    fn update_moved(&mut self, colliders: &ActiveColliders) -> bool {
        if self.rebuild_due(self.moved_entities.len() + self.removed.len()) {
            return false;
        }
        let keeps_layers = !self.build.layers.is_empty();
        // The removed colliders first, as a new collider may take the index of a gone one's entity. One
        // active again keeps its slot: it moved if its shape changed, like any other. Where a build
        // comes instead (below), it forgets these marks.
        self.mark_removed_gone(colliders);
        let moved = &mut self.build.moved;
        // Check every other change before making any.
        self.moved_shapes.clear();
        self.new_colliders.clear();
        for &(entity, shape) in &self.moved_entities {
            match (moved.slot(entity, &self.build.entries), shape) {
                (Some(slot), Some(shape)) if !moved.is_gone(slot) => {
                    self.moved_shapes.push((slot, shape))
                }
                // Gone since the prepare stage saw it move, or before it ever took part.
                (_, Some(_)) if !colliders.contains(entity) => {}
                // New since the build, or back after its `Collider` was removed on an earlier update
                // (whose world shape the removal set to `None`, so that the prepare stage hands it on
                // as changed): a slot of its own.
                (_, Some(shape)) => {
                    let layers = colliders.get(entity).map(|(_, _, layers)| *layers);
                    match layers {
                        Ok(layers) if keeps_layers => {
                            self.new_colliders.push((entity, shape, layers));
                        }
                        Ok(CollisionLayers::ALL) if !self.layered => {
                            self.new_colliders
                                .push((entity, shape, CollisionLayers::ALL));
                        }
                        _ => return false,
                    }
                }
                _ => return false,
            }
        }
        let entries = Arc::make_mut(&mut self.build.entries);
        for &(slot, shape) in &self.moved_shapes {
            entries[slot].shape = shape;
            moved.mark(slot);
        }
        for &(entity, shape, layers) in &self.new_colliders {
            moved.append(entity, entries.len());
            entries.push(ColliderEntry { entity, shape });
            if keeps_layers {
                self.build.layers.push(layers);
            }
        }
        self.find_moved_pairs();
        true
    }

    /// The pairs that involve a collider moved since the last build: moved against moved in a grid of
    /// their own, moved against the others in the grid of the build (whose order is the entries').
    fn find_moved_pairs(&mut self) {
        let Self {
            build:
                GridBuild {
                    entries,
                    moved,
                    grid,
                    aabbs,
                    layers,
                    ..
                },
            candidates,
            moved_grid,
            moved_order: order,
            layered,
            live_moved,
            ..
        } = self;
        // A gone collider's slot counts as moved, so that no pair of the build's has it, and has no
        // pairs of its own. Copied only where some are gone: the drifting colliders' updates, which
        // take this path with up to one collider in eight moved, never have any.
        let slots = if moved.gone_count() == 0 {
            moved.slots()
        } else {
            let live = |&&slot: &&u32| !moved.is_gone(slot as usize);
            live_moved.clear();
            live_moved.extend(moved.slots().iter().filter(live));
            &live_moved[..]
        };
        aabbs.clear();
        aabbs.extend(
            slots
                .iter()
                .map(|&slot| padded(entries[slot as usize].shape.aabb())),
        );
        moved_grid.fit(aabbs);
        moved_grid.sort(aabbs, order);
        let slot = |k: usize| slots[order[k] as usize] as usize;
        moved_grid.find_pairs(candidates);
        for (i, j) in candidates.iter_mut() {
            (*i, *j) = (slot(*i as usize) as u32, slot(*j as usize) as u32);
        }
        let interact = |i: usize, j: usize| !*layered || layers[i].interacts_with(&layers[j]);
        if *layered {
            candidates.retain(|&(i, j)| interact(i as usize, j as usize));
        }
        let mut push_if_still = |slot: usize, other: usize| {
            if !moved.is_moved(other) && interact(slot, other) {
                candidates.push((slot as u32, other as u32));
            }
        };
        // The build's boxes that fit its cells, looked up from each moved box...
        let boxes = &aabbs[..slots.len()];
        let mut look_up = |k: usize| {
            let slot = slots[k] as usize;
            grid.for_each_overlapping_in_cells(&boxes[k], |other| push_if_still(slot, other));
        };
        if grid.worth_prefetching() {
            // ...asking for where each box's runs are two steps ahead, and for the runs' boxes one step
            // ahead, once the first ask has brought in where they are.
            let ahead = MOVED_LOOKUP_AHEAD;
            for k in 0..boxes.len() {
                if let Some(aabb) = boxes.get(k + 2 * ahead) {
                    grid.prefetch_runs(aabb);
                }
                if let Some(aabb) = boxes.get(k + ahead) {
                    grid.prefetch_runs_boxes(aabb);
                }
                look_up(k);
            }
        } else {
            (0..boxes.len()).for_each(look_up);
        }
        // ...and its boxes too large for a cell (a few in a hundred), the other way round: each looks
        // up the moved boxes, few and in a grid of their own.
        for other in grid.large() {
            moved_grid.for_each_overlapping(&grid.sorted_aabb(other), |k| {
                push_if_still(slot(k), other);
            });
        }
    }
}

/// A build of the grid: the gathered colliders it reads, and the grid, order, entries, layers, pairs
/// and record of moves it makes. [`BroadPhase`] keeps the last one, its gathered colliders this
/// update's; a build in the background (`background.rs`) fills one of its own, which the update that
/// takes it in swaps with the broad phase's.
#[derive(Debug, Default)]
pub(crate) struct GridBuild {
    /// The gathered colliders with their padded boxes and, when layered, their layers, in the order of
    /// Bevy's tables.
    gathered: Vec<GatheredCollider>,
    gathered_layers: Vec<CollisionLayers>,
    /// Whether the gathered colliders' indices are the rows of the tables that hold them, one table
    /// after another: the gather read at most [`drift::MAX_TABLES_IN_PLACE`] tables with rows as
    /// slices, and left no invalid collider out.
    gathered_rows: bool,
    /// The build's boxes: the gathered ones, packed for the grid and grown by a build that grows them;
    /// after the build or the attempt to keep it, the moved colliders' boxes, as `find_moved_pairs`'
    /// buffer.
    aabbs: Vec<Aabb2d>,
    /// [`drift_margin`]'s buffer.
    margin_sample: Vec<f32>,
    /// How far the build grew every box ([`drift_margin`]); zero for a build that did not grow them.
    margin: f32,
    grid: UniformGrid,
    /// The grid's order of the gathered colliders (`order[slot]` is the gathered index in that slot).
    order: Vec<u32>,
    /// Whether the build's gathered indices were table rows ([`Self::gathered_rows`] when it ran), for
    /// a build that grew its boxes and whose entries fit the cache.
    order_indexes_rows: bool,
    /// When [`Self::order_indexes_rows`], for each row: its slot (the inverse of `order`), and the
    /// entity and grown box the build put in that slot. The updates that read the rows since keep it
    /// so: where colliders came or went, or changed tables, they moved the others' rows, and the rows
    /// are those of the last update (see [`Self::rows_relocated`]).
    row_slots: Vec<RowSlot>,
    /// Whether an update found colliders in other rows than the build's since the build, so that
    /// `order` no longer gives each slot's row ([`Self::entry_rows`]).
    rows_relocated: bool,
    /// The colliders taking part, in the grid's order; their shapes are this update's. Shared with a
    /// build in the background that starts from them (`background.rs`) until it has gathered them: a
    /// change meanwhile, where that build is dropped unbegun and begins after all, copies them first.
    pub(crate) entries: Arc<Vec<ColliderEntry>>,
    /// Each entry's layers, in the entries' order; empty unless layered.
    layers: Vec<CollisionLayers>,
    /// The pairs whose boxes overlap and whose layers allow them, as slots of the entries: those of the
    /// grown boxes after a build that grew them (see [`drift_margin`]).
    pairs: Vec<(u32, u32)>,
    /// Which entries moved since the build.
    moved: MovedSinceBuild,
    /// The layout of `pairs` by their kinds, when `pairs_grouped`: where the entries fit the cache
    /// (see [`GridBuild::run`]).
    pair_groups: KindGroups,
    pairs_grouped: bool,
}

impl GridBuild {
    /// Grows the gathered boxes by [`drift_margin`] when `grow`, sizes and sorts the grid, puts the
    /// colliders (and their layers, when `layered`) in its order, finds the pairs, and forgets every
    /// move.
    fn run(&mut self, grow: bool, layered: bool) {
        self.order_indexes_rows = self.gathered_rows;
        self.rows_relocated = false;
        let Self {
            gathered,
            gathered_layers,
            aabbs,
            margin_sample,
            margin: grown_by,
            grid,
            order,
            order_indexes_rows,
            row_slots,
            entries,
            layers,
            pairs,
            moved,
            pair_groups,
            pairs_grouped,
            ..
        } = self;
        aabbs.clear();
        aabbs.extend(gathered.iter().map(|collider| collider.aabb));
        *grown_by = 0.0;
        if grow {
            let margin = drift_margin(aabbs.iter(), margin_sample);
            for aabb in aabbs.iter_mut() {
                aabb.min -= margin;
                aabb.max += margin;
            }
            *grown_by = margin;
        }
        // Colliders near each other in the world go near each other in memory.
        grid.fit(aabbs);
        grid.sort(aabbs, order);
        let pool = pool_for(gathered.len(), REORDER_PARALLEL_THRESHOLD);
        let entries = Arc::make_mut(entries);
        gather_in_order(pool, gathered, order, entries, |collider| collider.entry);
        if layered {
            gather_in_order(pool, gathered_layers, order, layers, |&layers| layers);
        } else {
            layers.clear();
        }
        // Only a grown build's grid is kept while colliders drift. On workload W6 (colliders spawned
        // and despawned every frame, a plain build every update) the broad phase took 0.417 and 0.430
        // ms with the slots of every build's rows and a second look at the tables in each gather,
        // against 0.387 and 0.410 ms before either (two alternating runs each). Beyond the cache the
        // rows are never read in place ([`BroadPhase::rows_in_place`]), and their slots are not kept.
        *order_indexes_rows &= grow && !worth_prefetching(entries);
        if *order_indexes_rows {
            row_slots.resize(order.len(), RowSlot::UNSET);
            for (slot, &row) in order.iter().enumerate() {
                row_slots[row as usize] = RowSlot {
                    grown: grid.sorted_bounds(slot),
                    entity: entries[slot].entity,
                    slot: slot as u32,
                };
            }
        }
        grid.find_pairs(pairs);
        if layered {
            pairs.retain(|&(i, j)| layers[i as usize].interacts_with(&layers[j as usize]));
        }
        // A grown build's pairs are grouped here, once, rather than by the narrow phase on every update
        // that keeps the grid; in worlds whose grown builds run in the background (`background.rs`),
        // where the grouping costs the update nothing. Elsewhere the narrow phase groups them as
        // before: a plain build's pairs are tested once, and its grouping a block at a time leaves the
        // block's colliders in the cache for their tests; in smaller worlds the build's grouping
        // lengthens the updates that build, which make the p99; beyond the cache the narrow phase's
        // grouping asks for each block's colliders ahead (`prefetch.rs`), which a loop over a group
        // cannot.
        *pairs_grouped =
            grow && background::SIZES.contains(&entries.len()) && !worth_prefetching(entries);
        if *pairs_grouped {
            pair_groups.arrange(pairs, entries);
        }
        moved.reset();
    }

    /// Each entry's row in the tables that hold the colliders, when [`Self::order_indexes_rows`], as of
    /// the last update that read them there: [`NO_ROW`] for an entry whose collider is gone.
    fn entry_rows(&self, rows: &mut Vec<u32>) {
        if !self.rows_relocated && !self.moved.membership_changed() {
            rows.clone_from(&self.order);
            return;
        }
        rows.clear();
        rows.resize(self.entries.len(), NO_ROW);
        for (row, row_slot) in self.row_slots.iter().enumerate() {
            rows[row_slot.slot as usize] = row as u32;
        }
    }
}

/// A row of the table a grown build's colliders came from, as the build left it: the slot it went to,
/// and the entity and grown box of that slot.
#[derive(Clone, Copy, Debug)]
pub(super) struct RowSlot {
    /// The slot's grown box of the build.
    grown: Bounds,
    /// The slot's entity.
    entity: Entity,
    /// The slot the row went to.
    slot: u32,
}

impl RowSlot {
    /// A row whose slot is not known: its entity is no collider's.
    const UNSET: Self = Self {
        grown: Bounds::NOWHERE,
        entity: Entity::PLACEHOLDER,
        slot: 0,
    };
}

/// After a build that grew the boxes, the packed boxes of its entries as they are (`slot_bounds`) and
/// the pairs of the build's pairs whose boxes overlap, in `candidates`, laid out in `grouped` when the
/// build's pairs are.
fn hand_over_grown_pairs(
    build: &GridBuild,
    slot_bounds: &mut Vec<Bounds>,
    candidates: &mut Vec<(u32, u32)>,
    grouped: &mut GroupedCandidates,
) {
    slot_bounds.clear();
    let bounds = (build.entries.iter()).map(|entry| Bounds::of(&padded(entry.shape.aabb())));
    slot_bounds.extend(bounds);
    candidates.clear();
    push_overlapping_of_build(build, slot_bounds, candidates, grouped);
}

/// The candidates grouped by their kinds already: those from `from` on, when some are, in `layout`.
#[derive(Debug, Default)]
struct GroupedCandidates {
    from: Option<usize>,
    layout: KindGroups,
}

/// Pushes to `out` the build's pairs whose boxes (`boxes` by slot) overlap: through the layout's
/// filter when they are laid out in groups ([`GridBuild::pairs_grouped`]), which keeps their groups and
/// ranks, the pushed pairs then being the grouped candidates (`grouped`); through [`push_overlapping`]
/// otherwise.
#[inline(always)]
fn push_overlapping_of_build(
    build: &GridBuild,
    boxes: &[Bounds],
    out: &mut Vec<(u32, u32)>,
    grouped: &mut GroupedCandidates,
) {
    if build.pairs_grouped {
        grouped.from = Some(out.len());
        (build.pair_groups).filter(&build.pairs, out, &mut grouped.layout, |i, j| {
            slots_overlap(boxes, i, j)
        });
    } else {
        push_overlapping(&build.pairs, boxes, out);
    }
}

/// Whether the boxes of slots `i` and `j` overlap now: the test both filters of a build's pairs make.
#[inline(always)]
fn slots_overlap(boxes: &[Bounds], i: u32, j: u32) -> bool {
    boxes[i as usize].overlaps(boxes[j as usize].reach())
}

/// Pushes to `out` the pairs of `pairs` whose boxes (`boxes` by slot) overlap.
#[inline(always)]
fn push_overlapping(pairs: &[(u32, u32)], boxes: &[Bounds], out: &mut Vec<(u32, u32)>) {
    let start = out.len();
    out.resize(start + pairs.len(), (0, 0));
    let (room, mut len) = (&mut out[start..], 0);
    let overlap = |k: usize| {
        let (i, j) = pairs[k];
        slots_overlap(boxes, i, j)
    };
    for_each_kept(pairs.len(), overlap, |k| {
        room[len] = pairs[k];
        len += 1;
    });
    out.truncate(start + len);
}

/// How far each box of a build is grown, so that the grid holds while colliders drift within it: a
/// share ([`DRIFT_MARGIN_SHARE`]) of the median size of a sample of `aabbs`; `sample` is a buffer kept
/// between calls.
fn drift_margin<'a>(
    aabbs: impl ExactSizeIterator<Item = &'a Aabb2d>,
    sample: &mut Vec<f32>,
) -> f32 {
    let stride = (aabbs.len() / MARGIN_SAMPLES).max(1);
    sample.clear();
    sample.extend(
        (aabbs.step_by(stride))
            .map(|aabb| (aabb.max - aabb.min).max_element())
            .filter(|size| size.is_finite()),
    );
    if sample.is_empty() {
        return 0.0;
    }
    let middle = sample.len() / 2;
    *sample.select_nth_unstable_by(middle, f32::total_cmp).1 * DRIFT_MARGIN_SHARE
}

/// How many boxes [`drift_margin`] samples.
const MARGIN_SAMPLES: usize = 64;

/// The share of a typical collider's size by which a build grows every box (see [`drift_margin`]).
const DRIFT_MARGIN_SHARE: f32 = 0.1;

/// How many builds leave their boxes as they are after a build that grew them was not kept for a single
/// update: on workload W5 (every collider teleported every update) grown builds with the attempt to keep
/// them took the broad phase 0.35 to 0.43 ms against 0.24 to 0.39 ms for plain ones (five runs each).
const PLAIN_BUILDS: usize = 16;

/// How many moved colliders ahead [`BroadPhase::find_moved_pairs`] asks for the cells of a large grid
/// (`prefetch.rs`), and twice as many ahead for where those cells are. Each look-up reads a few rows of
/// cells, so fewer steps than the plain loops' [`AHEAD`](crate::prefetch::AHEAD) cover the memory's
/// wait: on workload W3 (100,000 still colliders, 1,000 moving) the broad phase took 0.192 to 0.239 ms
/// asking 8 ahead against 0.210 to 0.330 ms without asking (six alternating runs each, a slow stretch).
const MOVED_LOOKUP_AHEAD: usize = 8;

/// Where an update that keeps the grid reads this update's colliders.
#[derive(Clone, Copy)]
enum DriftFrom<'a> {
    /// From this update's gather.
    Gathered,
    /// From the rows of the tables that hold them.
    Table(&'a TableRows<'a>),
}

/// The rows of the tables that hold the colliders of `colliders`, one table after another as a gather
/// reads them, if the tables can be read as slices and at most [`drift::MAX_TABLES_IN_PLACE`] have
/// rows.
fn tables_in_place<'a>(colliders: &'a ActiveColliders) -> Option<TableRows<'a>> {
    let mut rows = TableRows::default();
    for (entities, shapes, layers) in colliders.contiguous_iter().ok()? {
        if !rows.push(entities, shapes, layers) {
            return None;
        }
    }
    Some(rows)
}

/// How many colliders of `entries` may move, besides `moved_since_build`, with at most one in
/// [`MOVED_SHARE`] moved in all: `None` when more than that have moved already.
#[inline]
fn moved_room(entries: usize, moved_since_build: usize) -> Option<usize> {
    (entries / MOVED_SHARE).checked_sub(moved_since_build)
}

/// `aabb` grown by a few units in the last place of its coordinates (and at least the smallest normal
/// float), so that the box test never rejects a pair the exact test accepts. The exact tests compute
/// with other formulas and can round the other way where shapes just touch: fuzzing found a long
/// rectangle whose box ended one unit in the last place short of a square that the exact test,
/// rightly for closed sets, found touching. The few extra candidates cost one exact test each.
#[inline]
pub(super) fn padded(aabb: Aabb2d) -> Aabb2d {
    // Both corners in one vector: the operations of two `Vec2`s (`min - pad` and `max + pad`, with
    // `pad` from the larger magnitude of each axis), the same bits for inputs without NaN, in fewer
    // instructions: 2.1 million fewer in the broad phase's build over 70 updates of W1 at 10,000
    // (callgrind).
    let corners = Vec4::new(aabb.min.x, aabb.min.y, aabb.max.x, aabb.max.y);
    let magnitude = corners.abs();
    let pad = magnitude.max(magnitude.zwxy()) * (8.0 * f32::EPSILON) + f32::MIN_POSITIVE;
    let padded = corners + pad * Vec4::new(-1.0, -1.0, 1.0, 1.0);
    Aabb2d {
        min: padded.xy(),
        max: padded.zw(),
    }
}

/// Whether anything that decides the pairs changed since the last update, besides world shapes and
/// layers (which the prepare stage reports in [`BroadPhase::moved_entities`] and
/// [`BroadPhase::layers_changed`]).
#[derive(bevy::ecs::system::SystemParam)]
pub(crate) struct ColliderChanges<'w, 's> {
    /// The colliders disabled since the last update: it reads only the tables of disabled colliders.
    disabled: Query<'w, 's, (), (With<Collider>, Added<ColliderDisabled>)>,
    enabled: RemovedComponents<'w, 's, ColliderDisabled>,
    settings: Res<'w, CollisionSettings>,
}

impl ColliderChanges<'_, '_> {
    /// Whether a collider was enabled or the settings changed since the last update: what a build is
    /// due for whatever the colliders' tables hold. (Colliders removed count as moved, see
    /// [`BroadPhase::update_moved`].)
    fn settings_changed_or_collider_enabled(&mut self) -> bool {
        // Every reader is drained so that old removals do not count next time.
        let enabled = self.enabled.read().count() > 0;
        enabled || self.settings.is_changed()
    }

    /// Whether a collider was disabled since the last update. Reads the disabled colliders' ticks.
    fn collider_disabled(&self) -> bool {
        !self.disabled.is_empty()
    }
}

/// Finds the candidate pairs: all of them over a new grid, or only those of the colliders that moved
/// since the last build, or none when nothing changed.
pub(crate) fn find_candidate_pairs(
    colliders: ActiveColliders,
    mut changes: ColliderChanges,
    mut broad_phase: ResMut<BroadPhase>,
    mut diagnostics: ResMut<CollisionDiagnostics>,
    mut updated_once: Local<bool>,
) {
    let timer = StageTimer::start();
    let broad_phase = &mut *broad_phase;
    broad_phase.gathered_this_update = false;
    broad_phase.grouped.from = None;
    // Too many moved colliders make the build due as well; removed ones count as moved.
    let removed = !broad_phase.removed.is_empty();
    let too_many_moved =
        broad_phase.rebuild_due(broad_phase.moved_entities.len() + broad_phase.removed.len());
    let build_due = !*updated_once || changes.settings_changed_or_collider_enabled();
    let taken_in = broad_phase.settle_background_build(too_many_moved && !build_due);
    let builds_started = broad_phase.background.started_count();
    // Disabled colliders are looked for in the change ticks only where the grid may be kept as it is;
    // when many colliders moved, the gather finds them.
    let layers_changed = core::mem::take(&mut broad_phase.layers_changed);
    let rebuild = build_due || too_many_moved || layers_changed || changes.collider_disabled();
    *updated_once = true;
    broad_phase.unchanged = !rebuild && broad_phase.moved_entities.is_empty() && !removed;
    broad_phase.incremental =
        !rebuild && !broad_phase.unchanged && broad_phase.update_moved(&colliders);
    diagnostics.grid_built = !broad_phase.unchanged
        && !broad_phase.incremental
        && broad_phase.update_all(&colliders, too_many_moved && !build_due, layers_changed);
    // A grid taken in can still be built anew, when a collider changed layers or tables.
    diagnostics.grid_built_in_background = taken_in && !diagnostics.grid_built;
    diagnostics.build_started_in_background =
        broad_phase.background.started_count() != builds_started;
    diagnostics.colliders_gathered = broad_phase.gathered_this_update;
    if !diagnostics.grid_built {
        broad_phase.kept_since_build += 1;
    }
    broad_phase.moved_entities.clear();
    broad_phase.removed.clear();
    diagnostics.colliders = broad_phase.build.entries.len() - broad_phase.build.moved.gone_count();
    diagnostics.invalid_colliders = broad_phase.invalid;
    diagnostics.candidate_pairs = broad_phase.candidates.len();
    diagnostics.timings.broad_phase = timer.elapsed();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::WorldCircle;
    use bevy::math::bounding::IntersectsVolume;

    #[test]
    fn moved_room_keeps_the_grid_exactly_while_one_collider_in_eight_has_moved() {
        // The rule as first written: a build is due once (moved since the build + moved now) times
        // `MOVED_SHARE` exceeds the entries.
        for entries in 0..100 {
            for moved_since_build in 0..20 {
                for moved_now in 0..20 {
                    let due = (moved_since_build + moved_now) * MOVED_SHARE > entries;
                    let room = moved_room(entries, moved_since_build);
                    assert_eq!(
                        room.is_none_or(|room| moved_now > room),
                        due,
                        "{entries} entries, {moved_since_build} moved since the build, {moved_now} now"
                    );
                }
            }
        }
    }

    #[test]
    fn drift_margin_is_a_share_of_the_median_finite_size() {
        let square = |size: f32| Aabb2d {
            min: Vec2::ZERO,
            max: Vec2::new(size, size * 0.5),
        };
        let mut sample = Vec::new();
        // Sizes 1 to 5 and two non-finite boxes, which are left out: the median is 3.
        let aabbs: Vec<Aabb2d> = [5.0, f32::NAN, 1.0, 4.0, f32::INFINITY, 2.0, 3.0]
            .map(square)
            .to_vec();
        assert_eq!(
            drift_margin(aabbs.iter(), &mut sample),
            3.0 * DRIFT_MARGIN_SHARE
        );
        // Of many boxes, a sample: sizes 0 to 999 give a median near 500.
        let many: Vec<Aabb2d> = (0..1000).map(|size| square(size as f32)).collect();
        let margin = drift_margin(many.iter(), &mut sample) / DRIFT_MARGIN_SHARE;
        assert!((450.0..550.0).contains(&margin), "median size {margin}");
        assert_eq!(
            drift_margin([].iter(), &mut sample),
            0.0,
            "no boxes, no margin"
        );
        assert_eq!(drift_margin([square(f32::NAN)].iter(), &mut sample), 0.0);
    }

    /// How many colliders the tests of the builds' pace in the background drift: a world whose updates
    /// take long enough, in a debug build beside the other tests, for the building thread to begin each
    /// build before the next update needs it. In a world of [`background::SIZES`]' smallest size the
    /// updates follow each other so fast that, with both cores busy, some builds have not begun in
    /// time: they are dropped and the update builds (as it should), which the pace cannot foresee.
    const PACE_TEST_COLLIDERS: usize = 4_196;

    /// An app with `count` rectangles of side 2 in a row, 3 apart, and their entities; the k-th in the
    /// (k mod `tables`)-th of `tables` tables (up to 16), told apart by their [`Marked`] bits.
    fn row_of_rects(count: usize, tables: usize) -> (App, Vec<Entity>) {
        let mut app = App::new();
        app.add_plugins((
            MinimalPlugins,
            TransformPlugin,
            crate::RectCollisionPlugin::default(),
        ));
        let colliders = (0..count)
            .map(|k| {
                let transform = Transform::from_xyz(k as f32 * 3.0, 0.0, 0.0);
                let mut collider = app.world_mut().spawn((transform, Collider::rect(2.0, 2.0)));
                let table = k % tables;
                if table & 1 != 0 {
                    collider.insert(Marked::<0>);
                }
                if table & 2 != 0 {
                    collider.insert(Marked::<1>);
                }
                if table & 4 != 0 {
                    collider.insert(Marked::<2>);
                }
                if table & 8 != 0 {
                    collider.insert(Marked::<3>);
                }
                collider.id()
            })
            .collect();
        (app, colliders)
    }

    /// Puts the colliders that have it in other tables than those without (see [`row_of_rects`]).
    #[derive(Component)]
    struct Marked<const BIT: u8>;

    /// Moves each of `colliders` to `place(k)` and updates: whether the update built the grid, and
    /// whether the last build grew its boxes.
    fn place_and_update(
        app: &mut App,
        colliders: &[Entity],
        place: &dyn Fn(usize) -> Vec2,
    ) -> (bool, bool) {
        for (k, &collider) in colliders.iter().enumerate() {
            let mut transform = app.world_mut().get_mut::<Transform>(collider).unwrap();
            transform.translation = place(k).extend(0.0);
        }
        app.update();
        let grid_built = app.world().resource::<CollisionDiagnostics>().grid_built;
        (grid_built, app.world().resource::<BroadPhase>().grown)
    }

    /// Updates `app` with every collider jumping along the row every update, and returns the frames
    /// (from 1) whose builds grew their boxes.
    fn grown_builds_of_jumps(app: &mut App, colliders: &[Entity], frames: usize) -> Vec<usize> {
        let count = colliders.len();
        let (built, grown) = place_and_update(app, colliders, &|k| Vec2::new(k as f32 * 3.0, 0.0));
        assert!(
            built && !grown,
            "the first build is brought by new colliders, not by moves"
        );
        let mut grown_builds = Vec::new();
        for frame in 1..=frames {
            let jump = |k: usize| Vec2::new(((k * 7 + frame * 13) % count) as f32 * 3.0, 0.0);
            let (built, grown) = place_and_update(app, colliders, &jump);
            assert!(built, "frame {frame}: everything jumped");
            if grown {
                grown_builds.push(frame);
            }
        }
        grown_builds
    }

    #[test]
    fn builds_leave_boxes_as_they_are_after_a_grown_build_that_was_never_kept() {
        let (mut app, colliders) = row_of_rects(200, 1);
        let update =
            |app: &mut App, place: &dyn Fn(usize) -> Vec2| place_and_update(app, &colliders, place);
        // Every collider jumps every update: no grown build is kept. The first build brought by the
        // jumps grows its boxes; the others do not, as the colliders keep jumping beyond them.
        assert_eq!(grown_builds_of_jumps(&mut app, &colliders, 40), [1]);
        // Drifting from there: the first update still finds them far from where they were, the second
        // finds them near and grows the boxes, and the updates after keep that build.
        let drift =
            |frame: usize| move |k: usize| Vec2::new(k as f32 * 3.0 + frame as f32 * 0.01, 0.0);
        assert_eq!(update(&mut app, &drift(0)), (true, false));
        assert_eq!(update(&mut app, &drift(1)), (true, true));
        for frame in 2..10 {
            assert_eq!(
                update(&mut app, &drift(frame)),
                (false, true),
                "frame {frame}"
            );
        }
        // Where the sample cannot tell, as the colliders change tables every update, a build grows its
        // boxes after 16 plain ones.
        let mut grown_builds = Vec::new();
        for frame in 1..=40 {
            for (k, &collider) in colliders.iter().enumerate() {
                let mut collider = app.world_mut().entity_mut(collider);
                if (k + frame) % 2 == 0 {
                    collider.insert(Marked::<0>);
                } else {
                    collider.remove::<Marked<0>>();
                }
            }
            let jump = |k: usize| Vec2::new(((k * 7 + frame * 13) % 200) as f32 * 3.0, 0.0);
            if update(&mut app, &jump).1 {
                grown_builds.push(frame);
            }
        }
        assert_eq!(grown_builds, [1, 18, 35]);
    }

    #[test]
    fn jumps_found_by_the_pass_leave_boxes_as_they_are_where_builds_run_in_the_background() {
        // No sample comes before the pass in such worlds (`drift::worth_sampling`): the pass itself
        // finds too many escaped, in the tables' rows (up to eight tables) or in the gathered colliders
        // (more).
        let count = PACE_TEST_COLLIDERS;
        for tables in [1, 2, drift::MAX_TABLES_IN_PLACE + 1] {
            let (mut app, colliders) = row_of_rects(count, tables);
            assert_eq!(
                grown_builds_of_jumps(&mut app, &colliders, 8),
                [1],
                "{tables} tables"
            );
        }
    }

    /// Updates a row of `count` rectangles for 80 frames, one in `fast_every` drifting fast enough to
    /// leave its grown box (0.1 of the rectangles' size) on the fifth update after a build's positions,
    /// the others too slowly to leave it between builds; returns how many builds were taken in from the
    /// background and the frames on which every fast collider had left its box since the build: the
    /// updates that met a wave of escapes.
    fn waves_of_escapes(count: usize, fast_every: usize) -> (usize, Vec<usize>) {
        let (mut app, colliders) = row_of_rects(count, 1);
        let fast = count.div_ceil(fast_every);
        let mut waves = Vec::new();
        let mut taken_in = 0;
        for frame in 0..80 {
            let speed = |k: usize| {
                if k.is_multiple_of(fast_every) {
                    0.045
                } else {
                    0.01
                }
            };
            let drift = |k: usize| Vec2::new(k as f32 * 3.0 + frame as f32 * speed(k), 0.0);
            let (built, _) = place_and_update(&mut app, &colliders, &drift);
            // The first update builds for the new colliders and the second for the first moves; every
            // build after them runs in the background.
            assert_eq!(built, frame < 2, "frame {frame}: built in the update");
            let world = app.world();
            world.resource::<BroadPhase>().background.wait_until_begun();
            taken_in += usize::from(
                world
                    .resource::<CollisionDiagnostics>()
                    .grid_built_in_background,
            );
            if world.resource::<BroadPhase>().build.moved.slots().len() >= fast {
                waves.push(frame);
            }
        }
        (taken_in, waves)
    }

    #[test]
    fn a_build_started_on_its_wave_of_escapes_brings_the_next_one_an_update_earlier() {
        // None has left on the update before the wave, so the first build in the background starts on
        // the wave itself, late: 420 left, more than an eighth of the room for moves. The build after
        // it starts an update earlier, and so does every build after that.
        let (taken_in, waves) = waves_of_escapes(PACE_TEST_COLLIDERS, 10);
        assert!(taken_in >= 15, "builds in the background: {taken_in}");
        assert_eq!(
            waves.len(),
            1,
            "updates that met a wave of escapes: {waves:?}"
        );
    }

    #[test]
    fn a_small_worlds_build_started_on_its_wave_of_25_escapes_came_late_too() {
        // At 1,000 colliders a wave of 25 of them, one in forty, takes a fifth of the room for moves
        // (125): more than the 16 that start a build at the first sign of a wave, less than a quarter
        // of the room. With builds late only from a quarter, every build started on its wave.
        let (taken_in, waves) = waves_of_escapes(1_000, 40);
        assert!(taken_in >= 15, "builds in the background: {taken_in}");
        assert_eq!(
            waves.len(),
            1,
            "updates that met a wave of escapes: {waves:?}"
        );
    }

    #[test]
    fn builds_in_the_background_slow_their_pace_as_the_colliders_slow_down_and_quicken_it_again() {
        // The colliders drift at 1 to 1.3 times a common pace: 0.05 an update, 0.005 from the 60th
        // update, 0.05 again from the 210th. The builds keep the pace of the fast stretch where only
        // the last build's age started them (one in three updates, 50 builds in the slow stretch).
        let count = PACE_TEST_COLLIDERS;
        let (mut app, colliders) = row_of_rects(count, 1);
        let mut went = 0.0;
        let mut builds: [Vec<(usize, bool)>; 3] = Default::default();
        for frame in 0..300 {
            let stretch = match frame {
                0..60 => 0,
                60..210 => 1,
                _ => 2,
            };
            went += if stretch == 1 { 0.005 } else { 0.05 };
            let drift = |k: usize| {
                let pace = 1.0 + (k % 7) as f32 * 0.05;
                Vec2::new(k as f32 * 3.0 + went * pace, 0.0)
            };
            let (built, _) = place_and_update(&mut app, &colliders, &drift);
            let diagnostics = app.world().resource::<CollisionDiagnostics>();
            if built || diagnostics.grid_built_in_background {
                builds[stretch].push((frame, built));
            }
        }
        let [fast, slow, fast_again] = builds;
        assert!(fast.len() >= 18, "fast: {fast:?}");
        // The slow stretch's builds run in the background, the colliders' pace ten times slower.
        assert!(slow.len() <= 8, "slow: {slow:?}");
        assert!(slow.iter().all(|&(_, built)| !built), "slow: {slow:?}");
        // Quick again, colliders leave their boxes before a build comes: the updates build the grid
        // until the pace is found again, then the builds run in the background as before.
        let built_in_update = fast_again.iter().filter(|&&(_, built)| built).count();
        assert!(
            built_in_update <= 3 && fast_again.len() >= 25,
            "fast again: {fast_again:?}"
        );
    }

    fn circle_box(x: f32, y: f32, radius: f32) -> Aabb2d {
        WorldCircle::new(Vec2::new(x, y), radius).aabb()
    }

    /// The grid's pairs as the pipeline gets them (boxes in spatial order), mapped back to the input's
    /// indices and sorted.
    fn pairs(aabbs: &[Aabb2d], accept: impl Fn(usize, usize) -> bool + Sync) -> Vec<(u32, u32)> {
        let mut grid = UniformGrid::default();
        grid.fit(aabbs);
        let mut order = Vec::new();
        grid.sort(aabbs, &mut order);
        let mut found = Vec::new();
        grid.find_pairs(&mut found);
        let mut found: Vec<_> = found
            .into_iter()
            .map(|(i, j)| (order[i as usize], order[j as usize]))
            .filter(|&(i, j)| accept(i as usize, j as usize))
            .map(|(i, j)| (i.min(j), i.max(j)))
            .collect();
        found.sort_unstable();
        found
    }

    fn brute_force(aabbs: &[Aabb2d]) -> Vec<(u32, u32)> {
        let mut expected = Vec::new();
        for (i, a) in aabbs.iter().enumerate() {
            for (j, b) in aabbs.iter().enumerate().skip(i + 1) {
                if a.min.cmple(b.max).all() && b.min.cmple(a.max).all() {
                    expected.push((i as u32, j as u32));
                }
            }
        }
        expected
    }

    #[test]
    fn padded_gives_the_bits_of_the_formula_corner_by_corner() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.3,
            -2.5e-3,
            1e-40,
            -1e-40,
            1e30,
            -1e30,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        let mut compared = 0;
        for &a in &values {
            for &b in &values {
                for &c in &values {
                    for &d in &values {
                        let aabb = Aabb2d {
                            min: Vec2::new(a, b),
                            max: Vec2::new(c, d),
                        };
                        let pad = aabb.min.abs().max(aabb.max.abs()) * (8.0 * f32::EPSILON)
                            + f32::MIN_POSITIVE;
                        let (min, max) = (aabb.min - pad, aabb.max + pad);
                        let got = padded(aabb);
                        assert!(
                            same(got.min.x, min.x)
                                && same(got.min.y, min.y)
                                && same(got.max.x, max.x)
                                && same(got.max.y, max.y),
                            "{aabb:?}: {got:?} against {min:?}, {max:?}"
                        );
                        compared += 1;
                    }
                }
            }
        }
        assert_eq!(compared, values.len().pow(4));
    }

    #[test]
    fn touching_boxes_are_candidates() {
        let aabbs = [
            circle_box(0.0, 0.0, 1.0),
            circle_box(2.0, 2.0, 1.0),
            circle_box(4.1, 0.0, 1.0),
        ];
        assert_eq!(
            pairs(&aabbs, |_, _| true),
            vec![(0, 1)],
            "only the corner-touching boxes pair"
        );
    }

    #[test]
    fn matches_brute_force_on_a_crowd() {
        let aabbs: Vec<Aabb2d> = (0..3000)
            .map(|i| {
                let t = i as f32;
                circle_box(
                    (t * 7.31).sin() * 60.0,
                    (t * 3.17).cos() * 60.0,
                    0.5 + (t * 0.37).sin().abs(),
                )
            })
            .collect();
        let expected = brute_force(&aabbs);
        assert!(
            expected.len() > 1000,
            "the crowd must have overlaps to test: {}",
            expected.len()
        );
        assert_eq!(
            pairs(&aabbs, |_, _| true),
            expected,
            "the grid differs from brute force"
        );
    }

    #[test]
    fn outliers_and_huge_boxes_do_not_lose_pairs() {
        let mut aabbs: Vec<Aabb2d> = (0..500)
            .map(|i| {
                let t = i as f32;
                circle_box((t * 1.91).sin() * 20.0, (t * 2.73).cos() * 20.0, 1.0)
            })
            .collect();
        // Far away, huge, and infinite-extent boxes.
        aabbs.push(circle_box(1e30, -1e30, 1.0));
        aabbs.push(circle_box(1e30, -1e30, 2.0));
        aabbs.push(circle_box(0.0, 0.0, 500.0));
        aabbs.push(Aabb2d {
            min: Vec2::new(-5.0, -5.0),
            max: Vec2::new(f32::INFINITY, 5.0),
        });
        assert_eq!(
            pairs(&aabbs, |_, _| true),
            brute_force(&aabbs),
            "the grid differs from brute force"
        );
    }

    #[test]
    fn many_boxes_too_large_for_a_cell_pair_like_brute_force() {
        // One box in eleven is large: under the tenth the grid sizes its cells for, so they all go
        // to the grid's large list and meet each other in its sweep.
        let mut aabbs: Vec<Aabb2d> = (0..5000)
            .map(|i| {
                let t = i as f32;
                let size = if i % 11 == 0 {
                    6.0 + (t * 0.37).sin() * 3.0
                } else {
                    1.0
                };
                let min = Vec2::new((t * 7.31).sin() * 80.0, (t * 3.17).cos() * 80.0);
                Aabb2d {
                    min,
                    max: min + size,
                }
            })
            .collect();
        aabbs.push(Aabb2d {
            min: Vec2::new(f32::NAN, 0.0),
            max: Vec2::new(50.0, 50.0),
        });
        aabbs.push(Aabb2d {
            min: Vec2::new(-40.0, -1.0),
            max: Vec2::new(f32::INFINITY, 1.0),
        });
        let mut grid = UniformGrid::default();
        grid.fit(&aabbs);
        grid.sort(&aabbs, &mut Vec::new());
        assert!(
            grid.large().len() > 300,
            "{} large boxes",
            grid.large().len()
        );
        let expected = brute_force(&aabbs);
        let large_pairs = expected
            .iter()
            .filter(|&&(i, j)| i % 11 == 0 && j % 11 == 0 && j < 5000)
            .count();
        assert!(large_pairs > 50, "{large_pairs} pairs of large boxes");
        assert_eq!(
            pairs(&aabbs, |_, _| true),
            expected,
            "the grid differs from brute force"
        );
    }

    #[test]
    fn box_queries_match_brute_force() {
        let mut aabbs: Vec<Aabb2d> = (0..2000)
            .map(|i| {
                let t = i as f32;
                circle_box(
                    (t * 5.13).sin() * 40.0,
                    (t * 2.29).cos() * 40.0,
                    0.3 + (t * 0.71).sin().abs() * 2.0,
                )
            })
            .collect();
        aabbs.push(circle_box(0.0, 0.0, 30.0));
        aabbs.push(circle_box(1e30, 0.0, 1.0));
        let mut grid = UniformGrid::default();
        grid.fit(&aabbs);
        let mut order = Vec::new();
        grid.sort(&aabbs, &mut order);
        let queries = [
            circle_box(3.0, -2.0, 1.0),
            circle_box(-39.0, 39.0, 4.0),
            circle_box(0.0, 0.0, 60.0),
            circle_box(1e30, 0.0, 0.5),
            Aabb2d {
                min: Vec2::new(10.0, f32::NEG_INFINITY),
                max: Vec2::new(11.0, f32::INFINITY),
            },
        ];
        for query in queries {
            let mut found = Vec::new();
            grid.for_each_overlapping(&query, |k| found.push(order[k]));
            found.sort_unstable();
            let expected: Vec<u32> = (0..aabbs.len() as u32)
                .filter(|&i| aabbs[i as usize].intersects(&query))
                .collect();
            assert!(!expected.is_empty(), "{query:?} must hit something");
            assert_eq!(found, expected, "boxes overlapping {query:?}");
            let mut in_cells = Vec::new();
            grid.for_each_overlapping_in_cells(&query, |k| in_cells.push(k));
            let mut large: Vec<usize> = grid
                .large()
                .filter(|&k| grid.sorted_aabb(k).intersects(&query))
                .collect();
            large.append(&mut in_cells);
            assert_eq!(
                large.len(),
                found.len(),
                "cells and large boxes split the hits"
            );
        }
    }

    #[test]
    fn accept_filters_candidates() {
        let aabbs = [
            circle_box(0.0, 0.0, 1.0),
            circle_box(0.5, 0.0, 1.0),
            circle_box(1.0, 0.0, 1.0),
        ];
        assert_eq!(
            pairs(&aabbs, |i, j| i.min(j) == 0 && i.max(j) == 1),
            vec![(0, 1)],
            "only the accepted pair"
        );
    }
}
