//! [`RectCollisionPlugin`] and [`CollisionSystems`].

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::ecs::system::SystemParamItem;
use bevy::prelude::*;
use bevy::transform::TransformSystems;

use crate::broad_phase::{
    BroadPhase, queue_disabled_collider, queue_enabled_collider, update_broad_phase,
};
use crate::collider::{
    Collider, ColliderDisabled, OneWayPlatform, SweptCollider, Teleported, restore_default_layers,
};
use crate::diagnostics::CollisionDiagnostics;
use crate::entity_set::SpareEntitySets;
use crate::events::{
    CollisionEnded, CollisionEventKeys, CollisionStarted, PendingStarts,
    end_contacts_of_removed_collider, report_collision_changes,
};
use crate::hooks::{ActiveHooks, CollisionHooks, InstalledHooks};
use crate::layers::CollisionLayers;
use crate::narrow_phase::{Contacts, RejectedPairs, filter_pairs, find_contacts};
use crate::prepare::update_world_shapes;
use crate::settings::CollisionSettings;
use crate::tilemap::{TileRegion, TilemapCollider, merge_tilemaps, place_tilemap_regions};

/// Collision detection for every entity with a [`Collider`].
///
/// Runs in [`PostUpdate`] after transform propagation by default, so it sees this frame's
/// `GlobalTransform`s. [`RectCollisionPlugin::new`] picks another schedule (for example
/// `FixedPostUpdate`); there the shapes come from the last propagated `GlobalTransform`.
///
/// ```no_run
/// use bevy::prelude::*;
/// use bevy_rect_collision::prelude::*;
///
/// App::new()
///     .add_plugins((DefaultPlugins, RectCollisionPlugin::default()))
///     .run();
/// ```
pub struct RectCollisionPlugin {
    schedule: Interned<dyn ScheduleLabel>,
    /// Adds the system that asks the game's [`CollisionHooks`], if the game has any.
    hooks: Option<fn(&mut App, Interned<dyn ScheduleLabel>)>,
}

impl Default for RectCollisionPlugin {
    fn default() -> Self {
        Self::new(PostUpdate)
    }
}

impl RectCollisionPlugin {
    /// The plugin running its systems in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
            hooks: None,
        }
    }

    /// The plugin asking `H` about the pairs of colliders with [`ActiveHooks`] in each update
    /// ([`CollisionHooks`]).
    ///
    /// [`ActiveHooks`]: crate::ActiveHooks
    pub fn with_hooks<H: CollisionHooks + 'static>(mut self) -> Self
    where
        for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
    {
        self.hooks = Some(|app, schedule| {
            app.insert_resource(InstalledHooks::of::<H>());
            app.add_systems(
                schedule,
                filter_pairs::<H>
                    .in_set(CollisionSystems::NarrowPhase)
                    .before(find_contacts),
            );
        });
        self
    }
}

impl Plugin for RectCollisionPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<CollisionSettings>()
            .init_resource::<CollisionDiagnostics>()
            .init_resource::<BroadPhase>()
            .init_resource::<Contacts>()
            .init_resource::<SpareEntitySets>()
            .init_resource::<PendingStarts>()
            .init_resource::<RejectedPairs>()
            .add_message::<CollisionStarted>()
            .add_message::<CollisionEnded>()
            .register_type::<Collider>()
            .register_type::<ColliderDisabled>()
            .register_type::<SweptCollider>()
            .register_type::<Teleported>()
            .register_type::<OneWayPlatform>()
            .register_type::<ActiveHooks>()
            .register_type::<CollisionLayers>()
            .register_type::<TilemapCollider>()
            .register_type::<TileRegion>()
            .add_observer(end_contacts_of_removed_collider)
            .add_observer(queue_disabled_collider)
            .add_observer(queue_enabled_collider)
            .add_observer(restore_default_layers);
        let event_keys = CollisionEventKeys::register(app.world_mut());
        app.insert_resource(event_keys);
        CollisionDiagnostics::register(app);

        app.configure_sets(
            self.schedule,
            (
                CollisionSystems::Prepare,
                CollisionSystems::BroadPhase,
                CollisionSystems::NarrowPhase,
                CollisionSystems::Events,
            )
                // No sync point between the stages: only the prepare stage has commands (the rare
                // `InvalidCollider` markers), which no later stage reads. A sync point costs the
                // multi-threaded executor a trip to the main thread and back (the span that
                // `collision_bench` prints shows it).
                .chain_ignore_deferred()
                .run_if(CollisionSettings::is_enabled),
        );
        if self.schedule == PostUpdate.intern() {
            app.configure_sets(
                PostUpdate,
                CollisionSystems::Prepare.after(TransformSystems::Propagate),
            );
            // After propagation, so that a map's regions follow it in the update it moves.
            app.add_systems(
                PostUpdate,
                place_tilemap_regions
                    .after(TransformSystems::Propagate)
                    .before(CollisionSystems::Prepare),
            );
        } else {
            app.add_systems(
                self.schedule,
                place_tilemap_regions.before(CollisionSystems::Prepare),
            );
        }
        app.add_systems(PreUpdate, merge_tilemaps);
        app.add_systems(
            self.schedule,
            (
                update_world_shapes.in_set(CollisionSystems::Prepare),
                update_broad_phase.in_set(CollisionSystems::BroadPhase),
                find_contacts.in_set(CollisionSystems::NarrowPhase),
                (report_collision_changes, forget_teleports).in_set(CollisionSystems::Events),
            ),
        );
        if let Some(add_hooks) = self.hooks {
            add_hooks(app, self.schedule);
        }
    }
}

/// Takes [`Teleported`] off the colliders it spared a sweep in this update.
fn forget_teleports(teleported: Query<Entity, With<Teleported>>, mut commands: Commands) {
    for entity in &teleported {
        commands.entity(entity).remove::<Teleported>();
    }
}

/// The stages of a collision update, in the plugin's schedule ([`PostUpdate`] by default), chained in
/// this order. Schedule your systems `.after(CollisionSystems::Events)` to see this frame's results.
///
/// Bevy applies no commands between the stages themselves: the [`InvalidCollider`] markers the prepare
/// stage adds or removes appear at the next sync point, which Bevy puts before any system of yours
/// ordered after [`CollisionSystems::Prepare`] or a later stage, and at the latest at the end of the
/// schedule.
///
/// [`InvalidCollider`]: crate::InvalidCollider
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollisionSystems {
    /// Rebuilds each changed collider's [`ColliderWorldShape`](crate::ColliderWorldShape) from its
    /// `GlobalTransform`; in `PostUpdate`, after `TransformSystems::Propagate`.
    Prepare,
    /// Brings the broad phase's proxies up to date with the changed colliders and finds the pairs
    /// whose fat AABBs overlap.
    BroadPhase,
    /// Tests exactly the pairs of colliders that changed and keeps the touching ones in [`Contacts`].
    NarrowPhase,
    /// Sends [`CollisionStarted`] and [`CollisionEnded`], triggers them on both entities, and updates
    /// [`CollidingEntities`](crate::CollidingEntities).
    Events,
}

#[cfg(test)]
mod tests {
    use core::any::TypeId;

    use bevy::ecs::schedule::ApplyDeferred;

    use super::*;

    #[test]
    fn the_stages_run_back_to_back_without_a_sync_point_between_them() {
        let mut app = App::new();
        app.add_plugins((
            MinimalPlugins,
            TransformPlugin,
            RectCollisionPlugin::default(),
        ))
        // A system after the last stage puts a sync point after it, where the stages' commands apply.
        .add_systems(PostUpdate, (|| {}).after(CollisionSystems::Events));
        app.update();
        let order: Vec<TypeId> = app
            .get_schedule(PostUpdate)
            .expect("the plugin's schedule")
            .systems()
            .expect("initialized by the update")
            .map(|(_, system)| system.system_type())
            .collect();
        let position = |system: TypeId| {
            order
                .iter()
                .position(|&listed| listed == system)
                .expect("every stage is in the schedule")
        };
        let stages = [
            position(update_world_shapes.system_type_id()),
            position(update_broad_phase.system_type_id()),
            position(find_contacts.system_type_id()),
            position(report_collision_changes.system_type_id()),
        ];
        assert!(stages.is_sorted(), "the stages run in their order");
        let sync_points: Vec<usize> = (0..order.len())
            .filter(|&at| order[at] == TypeId::of::<ApplyDeferred>())
            .collect();
        assert!(
            sync_points
                .iter()
                .all(|&at| at < stages[0] || at > stages[3]),
            "no sync point between the stages: {sync_points:?} among {stages:?}"
        );
        assert!(
            sync_points.iter().any(|&at| at > stages[3]),
            "the commands apply after the last stage"
        );
    }
}
