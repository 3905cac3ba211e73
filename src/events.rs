//! What the plugin reports: [`CollisionStarted`], [`CollisionEnded`] and [`CollidingEntities`].

use bevy::ecs::entity::Entities;
use bevy::ecs::event::EventKey;
use bevy::ecs::system::SystemParam;
use bevy::platform::collections::HashSet;
use bevy::prelude::*;

mod set_changes;

use crate::entity_set::{SmallEntitySet, SpareEntitySets};
use crate::narrow_phase::PairContact;
use set_changes::SetChanges;

/// From this many changes to the colliders' sets in an update (two for each start or end), they are
/// made a table at a time ([`SetChanges`]) rather than one look-up at a time. Below it, in a world of
/// many tables, the two passes over every table that holds sets could be most of the work (not
/// measured); on W1 at 1,000 and 3,000 colliders (16 and 48 changes a frame, one table) either way took
/// the same, 0.003 and 0.007 ms.
const SET_CHANGES_BY_TABLE: usize = 64;

/// Two colliders began touching this frame.
///
/// Sent as a [`Message`] once per pair, read with `MessageReader<CollisionStarted>`, with
/// `collider1 < collider2`. Also triggered as an [`EntityEvent`] on each of the two entities, with
/// `collider1` the entity observed, so `commands.entity(e).observe(|hit: On<CollisionStarted>| ..)`
/// sees `hit.collider1 == e`. It is triggered only while some observer of it exists, global or on any
/// entity: a trigger nobody watches would have no effect but its cost.
///
/// Within a frame, messages come sorted by `(collider1, collider2)`.
///
/// # Guarantees
///
/// Messages and observers tell the same story. For each pair, starts and ends alternate, beginning
/// with a start, and nothing is sent for a pair after its end until it starts again. A start never
/// names an entity that is despawned or has lost its `Collider` at the moment it is sent.
///
/// While some observer watches starts, the starts of an update go out one pair at a time, each as its
/// message and then its two triggers, at the sync point after [`CollisionSystems::Events`]. An
/// observer may despawn a collider, or remove its `Collider`, while later starts of the same update
/// still wait. Any waiting start of that collider is then dropped together with the end its removal
/// would have sent: neither goes out, as messages or as triggers. The pair never started, as far as
/// the game can tell, and [`CollidingEntities`] agrees.
///
/// [`CollisionSystems::Events`]: crate::CollisionSystems::Events
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq)]
pub struct CollisionStarted {
    /// The first collider; the observed entity when triggered as an entity event.
    #[event_target]
    pub collider1: Entity,
    /// The other collider.
    pub collider2: Entity,
    /// Unit contact normal in world space, pointing from `collider1` to `collider2`, at the start.
    pub normal: Vec2,
    /// Penetration depth at the start: the length of the smallest translation that separates them.
    pub depth: f32,
}

/// Two colliders that touched stopped touching this frame: they moved apart, one was despawned, lost
/// its `Collider`, got [`ColliderDisabled`](crate::ColliderDisabled), or a layer change disqualified the
/// pair.
///
/// Every [`CollisionStarted`] is followed by exactly one `CollisionEnded` for the same pair, and no
/// `CollisionEnded` comes without its start. Sent and triggered like [`CollisionStarted`]; for a
/// despawned entity, only global observers see the trigger.
///
/// When a collider loses its `Collider` or is despawned, its ends are sent at once, not at the next
/// update, so no [`CollidingEntities`] ever names a collider that is gone. If that happens inside an
/// observer while a start of one of its pairs still waits to be sent, the start and the end are both
/// dropped (see [`CollisionStarted`], "Guarantees"), so no observer sees an end before its start.
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CollisionEnded {
    /// The first collider; the observed entity when triggered as an entity event.
    #[event_target]
    pub collider1: Entity,
    /// The other collider.
    pub collider2: Entity,
}

impl CollisionStarted {
    /// The same start seen from `collider2`: the entities swapped and the normal negated.
    #[must_use]
    pub fn swapped(self) -> Self {
        Self {
            collider1: self.collider2,
            collider2: self.collider1,
            normal: -self.normal,
            depth: self.depth,
        }
    }
}

impl CollisionEnded {
    /// The same end seen from `collider2`.
    #[must_use]
    pub fn swapped(self) -> Self {
        Self {
            collider1: self.collider2,
            collider2: self.collider1,
        }
    }
}

/// The entities this collider touches now, kept by the plugin in step with the events.
///
/// Added with every [`Collider`](crate::Collider).
///
/// ```
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// fn report(query: Query<(Entity, &CollidingEntities)>) {
///     for (entity, touching) in &query {
///         if !touching.is_empty() {
///             println!("{entity} touches {} colliders", touching.len());
///         }
///     }
/// }
/// # bevy::ecs::system::assert_is_system(report);
/// ```
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
pub struct CollidingEntities(pub(crate) SmallEntitySet);

impl CollidingEntities {
    /// Whether this collider touches `entity`.
    pub fn contains(&self, entity: &Entity) -> bool {
        self.0.contains(*entity)
    }

    /// The entities touched, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = Entity> + '_ {
        self.0.iter()
    }

    /// How many entities are touched.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing is touched.
    pub fn is_empty(&self) -> bool {
        self.0.len() == 0
    }
}

/// Sends [`CollisionStarted`] and [`CollisionEnded`] for the pairs that changed since the last update,
/// as messages (once per pair) and entity events (on both entities), and keeps [`CollidingEntities`] in
/// step. Ends come before starts, each sorted by pair. Last of the pipeline, it hands the broad phase's
/// build in the background over to its thread where that waits for the pipeline's end, and publishes
/// the update's [`CollisionDiagnostics`](crate::CollisionDiagnostics) to Bevy's `DiagnosticsStore`.
pub(crate) fn report_collision_changes(
    mut reported: ContactsToReport,
    mut colliding: CollidingSets,
    mut dispatch: CollisionDispatch,
    mut diagnostics: ResMut<crate::diagnostics::CollisionDiagnostics>,
    mut store: bevy::diagnostic::Diagnostics,
    mut buffers: Local<(Vec<CollisionStarted>, Vec<CollisionEnded>, SetChanges)>,
    mut broad_phase: ResMut<crate::broad_phase::BroadPhase>,
) {
    let timer = crate::diagnostics::StageTimer::start();
    let (started, ended, set_changes) = &mut *buffers;
    started.clear();
    ended.clear();
    diagnostics.compared_pairs = 0;
    // When nothing changed, the narrow phase kept its contacts and nothing started or ended.
    if !reported.contacts.unchanged {
        let (previous, current) = reported.changes();
        diagnostics.compared_pairs = previous.len() + current.len();
        crate::narrow_phase::diff_contacts(
            previous,
            current,
            &reported.contacts.removed,
            |pair| {
                started.push(CollisionStarted {
                    collider1: pair.collider1,
                    collider2: pair.collider2,
                    normal: pair.contact.normal,
                    depth: pair.contact.depth,
                })
            },
            |pair| {
                ended.push(CollisionEnded {
                    collider1: pair.collider1,
                    collider2: pair.collider2,
                })
            },
        );
    }
    let gone_since_tested = reported.drop_starts_of_gone_colliders(started);
    colliding.update(ended, started, set_changes);
    dispatch.end(ended);
    dispatch.start(started);
    reported.forget_removed(gone_since_tested);
    diagnostics.started = started.len();
    diagnostics.ended = ended.len() + core::mem::take(&mut reported.contacts.ended_on_removal);
    // The pipeline ends here: a build in the background kept until its end starts now.
    broad_phase.end_pipeline();
    diagnostics.timings.events = timer.elapsed();
    diagnostics.publish(&mut store);
}

/// The narrow phase's contacts, which the events stage reports, and the entities with a `Collider`,
/// among which a collider removed since the last update is back if its `Collider` was inserted again.
#[derive(SystemParam)]
pub(crate) struct ContactsToReport<'w, 's> {
    pub(crate) contacts: ResMut<'w, crate::narrow_phase::Contacts>,
    colliders: Query<'w, 's, (), With<crate::collider::Collider>>,
}

impl ContactsToReport<'_, '_> {
    /// The pairs to compare ([`Contacts::changes`](crate::narrow_phase::Contacts::changes)), told
    /// whether a removed collider is back.
    fn changes(&self) -> (&[PairContact], &[PairContact]) {
        let removed = &self.contacts.removed;
        let back = removed
            .iter()
            .any(|&entity| self.colliders.contains(entity));
        self.contacts.changes(back)
    }

    /// Drops the starts that name a collider removed after the narrow phase tested it (by a system
    /// between the stages): no start may name a collider that is gone. Returns whether it dropped any.
    fn drop_starts_of_gone_colliders(&self, started: &mut Vec<CollisionStarted>) -> bool {
        if self.contacts.removed.is_empty() {
            return false;
        }
        let before = started.len();
        started.retain(|start| {
            self.colliders.contains(start.collider1) && self.colliders.contains(start.collider2)
        });
        started.len() != before
    }

    /// Clears the colliders removed since the last update, whose pairs this update's diff passed over.
    /// Where a start was dropped for a collider gone since the narrow phase
    /// ([`Self::drop_starts_of_gone_colliders`]), the contacts still hold its pair: the gone colliders
    /// stay one more update, so that the next diff does not end a pair that never started.
    fn forget_removed(&mut self, gone_since_tested: bool) {
        if gone_since_tested {
            let colliders = &self.colliders;
            self.contacts
                .removed
                .retain(|&entity| !colliders.contains(entity));
        } else {
            self.contacts.removed.clear();
        }
    }
}

/// Every collider's [`CollidingEntities`], with the spare overflows their sets pass on (see
/// `entity_set.rs`).
#[derive(SystemParam)]
pub(crate) struct CollidingSets<'w, 's> {
    sets: Query<'w, 's, (Entity, &'static mut CollidingEntities)>,
    entities: &'w Entities,
    spare: ResMut<'w, SpareEntitySets>,
}

impl CollidingSets<'_, '_> {
    /// Takes `ended` out of the sets of both their colliders, then adds `started` to them, the second
    /// after the first so that the overflows the ends emptied serve the starts. Many changes are made a
    /// table at a time through `set_changes` (kept between updates) where the sets can be read as
    /// slices, few one at a time.
    fn update(
        &mut self,
        ended: &[CollisionEnded],
        started: &[CollisionStarted],
        set_changes: &mut SetChanges,
    ) {
        // The loops over both orientations are written out: as one chain of iterators (`chain`,
        // `flat_map`) shared by both paths, the events stage took 0.74 ms on W1 at 100,000 against 0.52
        // to 0.54 ms (two alternating runs each).
        let many = 2 * (ended.len() + started.len()) >= SET_CHANGES_BY_TABLE;
        if many && self.sets.contiguous_iter_mut().is_ok() {
            set_changes.clear();
            for end in ended {
                set_changes.list(self.entities, end.collider1, end.collider2, false);
                set_changes.list(self.entities, end.collider2, end.collider1, false);
            }
            for start in started {
                set_changes.list(self.entities, start.collider1, start.collider2, true);
                set_changes.list(self.entities, start.collider2, start.collider1, true);
            }
            set_changes.apply(&mut self.sets, self.entities, &mut self.spare);
            return;
        }
        for end in ended {
            self.remove(end.collider1, end.collider2);
            self.remove(end.collider2, end.collider1);
        }
        for start in started {
            self.insert(start.collider1, start.collider2);
            self.insert(start.collider2, start.collider1);
        }
    }

    /// Adds `other` to the set of `this`, if `this` has one.
    fn insert(&mut self, this: Entity, other: Entity) {
        if let Ok((_, mut touching)) = self.sets.get_mut(this) {
            touching.0.insert(other, &mut self.spare);
        }
    }

    /// Removes `other` from the set of `this`, if `this` has one.
    fn remove(&mut self, this: Entity, other: Entity) {
        if let Ok((_, mut touching)) = self.sets.get_mut(this) {
            touching.0.remove(other, &mut self.spare);
        }
    }

    /// Moves the members of the set of `this` into `out`; returns whether `this` has a set.
    fn drain(&mut self, this: Entity, out: &mut Vec<Entity>) -> bool {
        let Ok((_, mut own)) = self.sets.get_mut(this) else {
            return false;
        };
        own.0.drain_into(out, &mut self.spare);
        true
    }
}

/// The keys Bevy knows [`CollisionStarted`] and [`CollisionEnded`] by as events, which observers list in
/// their descriptors.
#[derive(Resource, Clone, Copy, Debug)]
pub(crate) struct CollisionEventKeys {
    started: EventKey,
    ended: EventKey,
}

impl CollisionEventKeys {
    /// Registers both events with `world` and keeps their keys.
    pub(crate) fn register(world: &mut World) -> Self {
        Self {
            started: world.register_event_key::<CollisionStarted>(),
            ended: world.register_event_key::<CollisionEnded>(),
        }
    }
}

/// The starts of this update that wait, as commands, to be sent to observers and readers: the pairs,
/// each `(collider1, collider2)`. A collider's removal takes its pairs out, and their starts are then
/// dropped with the ends the removal would have sent ([`CollisionStarted`], "Guarantees").
#[derive(Resource, Default)]
pub(crate) struct PendingStarts(HashSet<(Entity, Entity)>);

/// Sends [`CollisionStarted`] and [`CollisionEnded`]: as messages, and as triggers on both entities
/// where some observer watches them.
#[derive(SystemParam)]
pub(crate) struct CollisionDispatch<'w, 's> {
    commands: Commands<'w, 's>,
    observers: Query<'w, 's, &'static Observer>,
    keys: Res<'w, CollisionEventKeys>,
    pending: ResMut<'w, PendingStarts>,
    started_writer: MessageWriter<'w, CollisionStarted>,
    ended_writer: MessageWriter<'w, CollisionEnded>,
}

impl CollisionDispatch<'_, '_> {
    /// Sends each of `ended`: its message now, its triggers on both entities (seen from each) as
    /// commands, unless no observer watches ends. An end can go out late safely: its pair has left
    /// [`CollidingEntities`] already, so nothing can end it again.
    fn end(&mut self, ended: &[CollisionEnded]) {
        self.ended_writer.write_batch(ended.iter().copied());
        // A trigger costs its command and its run even when no observer sees it (workload W5, with its
        // thousands of starts an update, shows it).
        if !ended.is_empty() && self.watch(self.keys.ended) {
            for &end in ended {
                self.commands.trigger(end);
                self.commands.trigger(end.swapped());
            }
        }
    }

    /// Sends each of `started`. With no observer of starts, their messages go out now. Otherwise
    /// each start waits in [`PendingStarts`] for its own command, which sends its message and its
    /// two triggers together, unless a removal took the pair out meanwhile: so an observer that
    /// despawns a collider can not be handed that collider by a later start.
    fn start(&mut self, started: &[CollisionStarted]) {
        self.pending.0.clear();
        if started.is_empty() {
            return;
        }
        if !self.watch(self.keys.started) {
            self.started_writer.write_batch(started.iter().copied());
            return;
        }
        for &start in started {
            self.pending.0.insert((start.collider1, start.collider2));
            self.commands.queue(move |world: &mut World| {
                let pair = (start.collider1, start.collider2);
                if world.resource_mut::<PendingStarts>().0.remove(&pair) {
                    world.write_message(start);
                    world.trigger(start);
                    world.trigger(start.swapped());
                }
            });
        }
    }

    /// Whether the start of `pair` was still waiting: then it is dropped, and its end must not be
    /// sent either.
    fn drop_pending_start(&mut self, pair: (Entity, Entity)) -> bool {
        self.pending.0.remove(&pair)
    }

    /// Whether some observer watches the event of `key`.
    fn watch(&self, key: EventKey) -> bool {
        self.observers
            .iter()
            .any(|observer| observer.descriptor().event_keys().contains(&key))
    }
}

/// What a collider's removal changes besides its contacts: the broad phase's list of removed colliders
/// and the collider's world shape.
#[derive(SystemParam)]
pub(crate) struct ColliderRemoval<'w, 's> {
    broad_phase: ResMut<'w, crate::broad_phase::BroadPhase>,
    world_shapes: Query<'w, 's, &'static mut crate::collider::ColliderWorldShape>,
}

impl ColliderRemoval<'_, '_> {
    /// Tells the broad phase, which takes `entity` out of its grid on its next update, and sets the
    /// entity's world shape to `None`.
    fn record(&mut self, entity: Entity) {
        self.broad_phase.removed.push(entity);
        if let Ok(mut world_shape) = self.world_shapes.get_mut(entity) {
            world_shape.0 = None;
        }
    }
}

/// Ends every contact of a collider the moment its `Collider` is removed or its entity despawned, even
/// when that happens after this frame's update (in an observer, or a later system): its partners'
/// [`CollidingEntities`] never name a collider that is gone, and every start still gets its end: a
/// message, and the entity events where some observer watches them. A pair whose start still waits to
/// be sent ([`PendingStarts`]) gets neither. The broad phase is told too
/// ([`BroadPhase::removed`](crate::broad_phase::BroadPhase)), and takes the collider out of its grid on
/// its next update, wherever in the schedule the removal came; and the entity's
/// [`ColliderWorldShape`](crate::ColliderWorldShape) becomes `None`, so that a `Collider` inserted
/// again changes it, and the prepare stage hands the collider to the broad phase as new.
pub(crate) fn end_contacts_of_removed_collider(
    removed: On<Remove, crate::collider::Collider>,
    mut removal: ColliderRemoval,
    mut contacts: ResMut<crate::narrow_phase::Contacts>,
    mut colliding: CollidingSets,
    mut dispatch: CollisionDispatch,
    mut buffers: Local<(Vec<Entity>, Vec<CollisionEnded>)>,
) {
    let entity = removed.entity;
    removal.record(entity);
    let (partners, ended) = &mut *buffers;
    partners.clear();
    ended.clear();
    if !colliding.drain(entity, partners) {
        return;
    }
    contacts.removed.insert(entity);
    partners.sort_unstable();
    for &other in partners.iter() {
        colliding.remove(other, entity);
        let pair = (entity.min(other), entity.max(other));
        if !dispatch.drop_pending_start(pair) {
            ended.push(CollisionEnded {
                collider1: pair.0,
                collider2: pair.1,
            });
        }
    }
    contacts.ended_on_removal += ended.len();
    dispatch.end(ended);
}
