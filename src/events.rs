//! What the plugin reports: [`CollisionStarted`] and [`CollisionEnded`], and the
//! [`CollidingEntities`] it keeps in step with them.

use bevy::ecs::event::EventKey;
use bevy::ecs::system::SystemParam;
use bevy::platform::collections::HashSet;
use bevy::prelude::*;

use crate::collider::CollidingEntities;
use crate::entity_set::SpareEntitySets;

/// Two colliders began touching this frame.
///
/// Sent as a [`Message`] once per pair, read with `MessageReader<CollisionStarted>`, with
/// `collider1 < collider2`. Also triggered as an [`EntityEvent`] on each of the two entities, with
/// `collider1` the entity observed, so `commands.entity(e).observe(|hit: On<CollisionStarted>| ..)`
/// sees `hit.collider1 == e`. It is triggered only while some observer of it exists, global or on any
/// entity: a trigger nobody watches would have no effect but its cost.
///
/// # Order
///
/// Within an update, every [`CollisionEnded`] comes before every start, and the starts come in the
/// order they happened: by [`time_of_impact`](Self::time_of_impact), a pair found only where the
/// update left it counting as time 1, then by `(collider1, collider2)`. So a swept bullet's first
/// start is the nearest thing it hit. Messages and observers see the same order, and it is the same
/// from run to run. Entity order is Bevy's order of [`Entity`] values, which is not spawn order:
/// despawned entities' indices are reused.
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
    /// Unit contact normal in world space, pointing from `collider1` to `collider2`, at first
    /// contact.
    pub normal: Vec2,
    /// Penetration depth at the end of the update: the length of the smallest translation that
    /// separates them; zero for a pair that touched only on the way of a sweep.
    pub depth: f32,
    /// Where they touch at first contact, in world space: for sparks or decals.
    pub point: Vec2,
    /// For a pair with a [`SweptCollider`](crate::SweptCollider), the share of the update's motion
    /// at which they first touched, from 0 to 1; `None` for a pair found where the colliders ended
    /// up.
    pub time_of_impact: Option<f32>,
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
            ..self
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

/// Sends [`CollisionStarted`] and [`CollisionEnded`] for the pairs the narrow phase found to have
/// begun or stopped touching, as messages (once per pair) and entity events (on both entities), and
/// keeps [`CollidingEntities`] in step. Ends come before starts; ends sorted by pair, starts by time of
/// impact and then by pair. Publishes the
/// update's [`CollisionDiagnostics`](crate::CollisionDiagnostics) to Bevy's `DiagnosticsStore`.
///
/// [`CollidingEntities`] is the record of what was started and not yet ended, so it settles what goes
/// out: an end only for a pair it holds (a collider's removal ends its pairs at once, and the narrow
/// phase's end of them comes later, see [`CollidingSets::open`]), a start only for two colliders that
/// still have their `Collider` (one may have gone since the narrow phase, by a system of the game's in
/// between).
pub(crate) fn report_collision_changes(
    contacts: Res<crate::narrow_phase::Contacts>,
    colliders: Query<(), With<crate::collider::Collider>>,
    mut colliding: CollidingSets,
    mut dispatch: CollisionDispatch,
    mut diagnostics: ResMut<crate::diagnostics::CollisionDiagnostics>,
    mut store: bevy::diagnostic::Diagnostics,
    mut buffers: Local<(Vec<CollisionStarted>, Vec<CollisionEnded>)>,
) {
    let timer = crate::diagnostics::StageTimer::start();
    let (started, ended) = &mut *buffers;
    started.clear();
    ended.clear();
    ended.extend(
        (contacts.ended.iter())
            .filter(|&&(a, b)| colliding.open(a, b, &colliders))
            .map(|&(collider1, collider2)| CollisionEnded {
                collider1,
                collider2,
            }),
    );
    ended.sort_unstable_by_key(|end| (end.collider1, end.collider2));
    started.extend(
        (contacts.started.iter())
            .filter(|start| {
                colliders.contains(start.pair.collider1) && colliders.contains(start.pair.collider2)
            })
            .map(|start| CollisionStarted {
                collider1: start.pair.collider1,
                collider2: start.pair.collider2,
                normal: start.pair.contact.normal,
                depth: start.pair.contact.depth,
                point: start.point,
                time_of_impact: start.time_of_impact,
            }),
    );
    // In the order they happened: a bullet that crosses several walls in one update meets the
    // nearest first, whatever the entities.
    started.sort_unstable_by(|a, b| {
        let time = |start: &CollisionStarted| start.time_of_impact.unwrap_or(1.0);
        (time(a).total_cmp(&time(b)))
            .then((a.collider1, a.collider2).cmp(&(b.collider1, b.collider2)))
    });
    colliding.update(ended, started);
    dispatch.end(ended);
    dispatch.start(started);
    diagnostics.started = started.len();
    diagnostics.ended = ended.len();
    diagnostics.timings.events = timer.elapsed();
    diagnostics.publish(&mut store);
}

/// Every collider's [`CollidingEntities`], with the spare overflows their sets pass on (see
/// `entity_set.rs`).
#[derive(SystemParam)]
pub(crate) struct CollidingSets<'w, 's> {
    sets: Query<'w, 's, (Entity, &'static mut CollidingEntities)>,
    spare: ResMut<'w, SpareEntitySets>,
}

impl CollidingSets<'_, '_> {
    /// Takes `ended` out of the sets of both their colliders, then adds `started` to them, the second
    /// after the first so that the overflows the ends emptied serve the starts.
    fn update(&mut self, ended: &[CollisionEnded], started: &[CollisionStarted]) {
        for end in ended {
            self.remove(end.collider1, end.collider2);
            self.remove(end.collider2, end.collider1);
        }
        for start in started {
            self.insert(start.collider1, start.collider2);
            self.insert(start.collider2, start.collider1);
        }
    }

    /// Whether the pair of `a` and `b` started and has not ended: whether the set of either holds the
    /// other. Where neither has a set (a game removed them), whether both still have their `Collider`:
    /// a removal ends the pairs of a collider that has a set only.
    fn open(
        &self,
        a: Entity,
        b: Entity,
        colliders: &Query<(), With<crate::collider::Collider>>,
    ) -> bool {
        match (self.sets.get(a), self.sets.get(b)) {
            (Ok((_, set)), _) => set.contains(&b),
            (_, Ok((_, set))) => set.contains(&a),
            _ => colliders.contains(a) && colliders.contains(b),
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

/// What a collider's removal changes besides its contacts: the broad phase's queue of colliders that
/// came or went, and the collider's world shape.
#[derive(SystemParam)]
pub(crate) struct ColliderRemoval<'w, 's> {
    broad_phase: ResMut<'w, crate::broad_phase::BroadPhase>,
    world_shapes: Query<'w, 's, &'static mut crate::collider::ColliderWorldShape>,
}

impl ColliderRemoval<'_, '_> {
    /// Tells the broad phase, which takes `entity`'s proxy out on its next update, and sets the
    /// entity's world shape to `None`.
    fn record(&mut self, entity: Entity) {
        self.broad_phase.queue(entity);
        if let Ok(mut world_shape) = self.world_shapes.get_mut(entity) {
            world_shape.0 = None;
        }
    }
}

/// Ends every contact of a collider the moment its `Collider` is removed or its entity despawned, even
/// when that happens after this frame's update (in an observer, or a later system): its partners'
/// [`CollidingEntities`] never name a collider that is gone, and every start still gets its end: a
/// message, and the entity events where some observer watches them. A pair whose start still waits to
/// be sent ([`PendingStarts`]) gets neither. The broad phase is told too, and takes the collider's
/// proxy out on its next update, wherever in the schedule the removal came; and the entity's
/// [`ColliderWorldShape`](crate::ColliderWorldShape) becomes `None`, so that a `Collider` inserted
/// again changes it, and the prepare stage hands the collider to the broad phase as new.
pub(crate) fn end_contacts_of_removed_collider(
    removed: On<Remove, crate::collider::Collider>,
    mut removal: ColliderRemoval,
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
    dispatch.end(ended);
}
