//! [`SpatialQuery::move_and_slide`]: moving a kinematic character without passing through walls.

use bevy::ecs::system::SystemParamItem;
use bevy::prelude::*;
use core::f32::consts::{FRAC_PI_2, FRAC_PI_4};

use crate::geometry::{ShapeHit, WorldShape};
use crate::hooks::CollisionHooks;
use crate::layers::CollisionLayers;
use crate::query::SpatialQuery;

/// How [`SpatialQuery::move_and_slide`] moves a collider.
#[derive(Clone, Copy, Debug, PartialEq, Reflect)]
pub struct MoveAndSlideConfig {
    /// The gap, in world units, kept between the collider and whatever it slides along, so that it
    /// rests near surfaces without touching them: a seam between two flush tiles is then below it,
    /// not in its way. Default 0.01.
    pub skin_width: f32,
    /// How many times a move may be stopped by a surface and go on along it, and how many pushes
    /// may take the collider out of what it overlaps at the start. Default 4.
    pub max_iterations: usize,
    /// Which way is up, for [`MoveAndSlideOutput::ground`]. Default `Dir2::Y`.
    pub up: Dir2,
    /// The steepest surface, in radians from level, that counts as ground. Default 45°.
    pub max_ground_angle: f32,
    /// The layers to move on; the collider's own [`CollisionLayers`] when `None` (the default).
    pub layers: Option<CollisionLayers>,
    /// Whether this move passes every [`OneWayPlatform`](crate::OneWayPlatform), as a character
    /// dropping through the platform it stands on. Default `false`.
    pub drop_through: bool,
}

impl Default for MoveAndSlideConfig {
    fn default() -> Self {
        Self {
            skin_width: 0.01,
            max_iterations: 4,
            up: Dir2::Y,
            max_ground_angle: FRAC_PI_4,
            layers: None,
            drop_through: false,
        }
    }
}

/// Where [`SpatialQuery::move_and_slide`] takes a collider.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveAndSlideOutput {
    /// The displacement to apply, in world space: add it to the translation of an entity without a
    /// parent.
    pub motion: Vec2,
    /// What stopped the collider on the way, in order, each with where it touched at the time.
    pub hits: Vec<(Entity, ShapeHit)>,
    /// What the collider stands on at the end, within [`MoveAndSlideConfig::max_ground_angle`] of
    /// level and twice the skin width below it, if anything.
    pub ground: Option<(Entity, ShapeHit)>,
    /// The config's up, and the least that a ground surface's normal points up: what
    /// [`wall`](Self::wall) and [`ceiling`](Self::ceiling) tell surfaces apart by.
    up: Dir2,
    least_upness: f32,
}

impl MoveAndSlideOutput {
    /// Whether the collider stands on ground at the end of the move.
    pub fn grounded(&self) -> bool {
        self.ground.is_some()
    }

    /// The last wall that stopped the move, if any: a hit whose surface is steeper than
    /// [`MoveAndSlideConfig::max_ground_angle`] from level, either way up.
    pub fn wall(&self) -> Option<(Entity, ShapeHit)> {
        self.last_hit(|upness| upness.abs() < self.least_upness)
    }

    /// The last ceiling that stopped the move, if any: a hit whose surface faces down, within
    /// [`MoveAndSlideConfig::max_ground_angle`] of straight down, as a head bumped in a jump.
    pub fn ceiling(&self) -> Option<(Entity, ShapeHit)> {
        self.last_hit(|upness| upness <= -self.least_upness)
    }

    /// The last hit whose normal's share along up passes `kind`.
    fn last_hit(&self, kind: impl Fn(f32) -> bool) -> Option<(Entity, ShapeHit)> {
        (self.hits.iter().rev())
            .find(|(_, hit)| kind(hit.normal.dot(*self.up)))
            .copied()
    }
}

impl<H: CollisionHooks> SpatialQuery<'_, '_, H>
where
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    /// Moves `entity`'s own collider by `motion` from where it was at the last collision update,
    /// sliding along what it meets, and says where it ends up; `None` if `entity` has no enabled,
    /// valid collider. Also known as collide-and-slide.
    ///
    /// - A collider that starts inside or against something is first pushed out, deepest overlap
    ///   first, to a skin width away from it.
    /// - Then it is cast along the motion and stops a skin width short of the first surface it meets.
    ///   What is left of the motion loses its part into that surface and goes on along it, up to
    ///   [`max_iterations`](MoveAndSlideConfig::max_iterations) times. Between two surfaces that both
    ///   block it, as in a corner, it stops. A surface steeper than
    ///   [`max_ground_angle`](MoveAndSlideConfig::max_ground_angle) is a wall: sliding along it never
    ///   lifts the collider higher than the motion does.
    /// - It never meets itself, moves on its own layers unless the config says otherwise, and asks
    ///   the game's hooks about its pairs ([`CollisionHooks`]). A
    ///   [`OneWayPlatform`](crate::OneWayPlatform) stops it only where it starts wholly above the
    ///   platform and moves down into it, unless [`drop_through`](MoveAndSlideConfig::drop_through).
    /// - A collider spawned since the last collision update is moved from where its
    ///   `GlobalTransform` puts it, so a character moves from its first frame (in `Update`, the
    ///   `GlobalTransform` of an entity spawned in `Startup` is propagated already).
    ///
    /// Call it in `Update`, or anywhere before transform propagation, and add
    /// [`MoveAndSlideOutput::motion`] to the entity's `Transform`: this frame's collision update and
    /// rendering then see the collider where it was moved. Call it once per entity and frame: a
    /// second call starts again from the last collision update.
    ///
    /// ```
    /// use bevy::prelude::*;
    /// use bevy_rect_collision::prelude::*;
    ///
    /// #[derive(Component)]
    /// struct Player {
    ///     velocity: Vec2,
    /// }
    ///
    /// fn move_player(
    ///     query: SpatialQuery,
    ///     player: Single<(Entity, &mut Player, &mut Transform)>,
    ///     time: Res<Time>,
    /// ) {
    ///     let (entity, mut player, mut transform) = player.into_inner();
    ///     player.velocity.y -= 900.0 * time.delta_secs();
    ///     let motion = player.velocity * time.delta_secs();
    ///     let config = MoveAndSlideConfig::default();
    ///     if let Some(moved) = query.move_and_slide(entity, motion, &config) {
    ///         transform.translation += moved.motion.extend(0.0);
    ///         if moved.grounded() {
    ///             player.velocity.y = 0.0;
    ///         }
    ///     }
    /// }
    /// # bevy::ecs::system::assert_is_system(move_player);
    /// ```
    pub fn move_and_slide(
        &self,
        entity: Entity,
        motion: Vec2,
        config: &MoveAndSlideConfig,
    ) -> Option<MoveAndSlideOutput> {
        self.warn_if_hooks_differ();
        let (start, own_layers) = self.collider_of(entity)?;
        let layers = config.layers.unwrap_or(own_layers);
        let one_way = !config.drop_through;
        let skin = if config.skin_width.is_finite() {
            config.skin_width.max(0.0)
        } else {
            0.0
        };
        // The displacement so far, summed as it is made so that a free move is exactly `motion`.
        let mut moved = Vec2::ZERO;
        let at = |moved: Vec2| start.translated(moved);
        for _ in 0..config.max_iterations {
            let shape = at(moved);
            let mover = one_way.then_some(&shape);
            let Some((_, contact)) = self.deepest_overlap(entity, &shape, layers, mover) else {
                break;
            };
            moved -= contact.normal * (contact.depth + skin);
        }
        let motion = if motion.is_finite() {
            motion
        } else {
            Vec2::ZERO
        };
        let mut remaining = motion;
        let mut hits = Vec::new();
        let least_upness = least_upness(config);
        for _ in 0..config.max_iterations {
            let Ok((direction, length)) = Dir2::new_and_length(remaining) else {
                break;
            };
            // Only a surface the motion goes into stops it: one it touches and leaves, or slides
            // along, does not.
            let into = |hit: &ShapeHit| hit.normal.dot(*direction) < 0.0;
            let reach = length + skin;
            let shape = at(moved);
            let way = (direction, reach);
            let Some((other, hit)) = self.cast_for(entity, &shape, layers, way, one_way, into)
            else {
                moved += remaining;
                break;
            };
            // A skin width short of the surface, measured along its normal.
            let approach = -hit.normal.dot(*direction);
            let advance = (hit.distance - skin / approach).clamp(0.0, length);
            moved += *direction * advance;
            hits.push((other, hit));
            remaining = *direction * (length - advance);
            let before = remaining;
            remaining -= hit.normal * remaining.dot(hit.normal);
            // A surface too steep for ground does not lift the collider higher than it was going.
            let upness = hit.normal.dot(*config.up);
            if upness > 0.0 && upness < least_upness {
                let lift = remaining.dot(*config.up) - before.dot(*config.up).max(0.0);
                remaining -= *config.up * lift.max(0.0);
            }
            // In a plane, the way along one surface goes into any other that also blocks; and a
            // surface that turns the slide back against the motion, as the second side of a V does,
            // would only rock the collider between the two.
            let earlier = &hits[..hits.len() - 1];
            if remaining.dot(motion) <= 0.0
                || earlier
                    .iter()
                    .any(|(_, hit)| remaining.dot(hit.normal) < 0.0)
            {
                break;
            }
        }
        // The cast reaches a skin width past the motion, so a move that grazes a surface can end
        // nearer to it than that: it is lifted back to the skin width, where that touches nothing.
        let end = at(moved);
        let mover = one_way.then_some(&end);
        if let Some((_, contact)) = self.deepest_overlap(entity, &grown(&end, skin), layers, mover)
            && let Ok(toward) = Dir2::new(contact.normal)
            && let Some((_, hit)) =
                self.cast_for(entity, &end, layers, (toward, skin), one_way, |_| true)
            && hit.distance < skin
        {
            let lifted = moved - *toward * (skin - hit.distance);
            let shape = at(lifted);
            let mover = one_way.then_some(&shape);
            if self
                .deepest_overlap(entity, &shape, layers, mover)
                .is_none()
            {
                moved = lifted;
            }
        }
        let ground = self.ground_under(entity, &at(moved), layers, skin, config);
        Some(MoveAndSlideOutput {
            motion: moved,
            hits,
            ground,
            up: config.up,
            least_upness,
        })
    }

    /// What `shape` stands on: the first surface below it within the ground angle of level, and
    /// within twice the skin width of it, measured along the surface's normal.
    fn ground_under(
        &self,
        entity: Entity,
        shape: &WorldShape,
        layers: CollisionLayers,
        skin: f32,
        config: &MoveAndSlideConfig,
    ) -> Option<(Entity, ShapeHit)> {
        let least_upness = least_upness(config);
        let gap = 2.0 * skin;
        let is_ground = |hit: &ShapeHit| {
            let upness = hit.normal.dot(*config.up);
            upness >= least_upness && upness > 0.0 && hit.distance * upness <= gap
        };
        let reach = gap / least_upness.max(0.1);
        let one_way = !config.drop_through;
        self.cast_for(
            entity,
            shape,
            layers,
            (-config.up, reach),
            one_way,
            is_ground,
        )
    }
}

/// `shape` grown by `margin` on every side.
fn grown(shape: &WorldShape, margin: f32) -> WorldShape {
    let mut shape = *shape;
    match &mut shape {
        WorldShape::Rect(rect) => rect.half_size += margin,
        WorldShape::RotatedRect(rect) => rect.half_size += margin,
        WorldShape::Circle(circle) => circle.radius += margin,
        WorldShape::Capsule(capsule) => capsule.radius += margin,
        WorldShape::Polygon(polygon) => *polygon = polygon.grown(margin),
    }
    shape
}

/// The cosine of the steepest ground ([`MoveAndSlideConfig::max_ground_angle`]): the least a ground
/// surface's normal points up.
fn least_upness(config: &MoveAndSlideConfig) -> f32 {
    config.max_ground_angle.clamp(0.0, FRAC_PI_2).cos()
}
