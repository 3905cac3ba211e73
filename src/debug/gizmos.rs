//! [`RectCollisionDebugPlugin`]: every collider drawn with gizmos, coloured by state.

use bevy::color::palettes::css;
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;

use crate::broad_phase::BroadPhase;
use crate::collider::CollidingEntities;
use crate::collider::{ColliderDisabled, ColliderWorldShape, InvalidCollider};
use crate::geometry::{MAX_POLYGON_VERTICES, WorldShape, contact_point};
use crate::narrow_phase::Contacts;
use crate::plugin::CollisionSystems;

/// Draws the colliders with Bevy gizmos, after each collision update.
///
/// Configure it through its gizmo group, [`CollisionGizmos`]: one switch per layer, the colours, and the
/// key that toggles the whole overlay (`F9` by default).
///
/// ```no_run
/// use bevy::prelude::*;
/// use bevy_rect_collision::debug::{CollisionGizmos, RectCollisionDebugPlugin};
/// use bevy_rect_collision::prelude::*;
///
/// App::new()
///     .add_plugins((DefaultPlugins, RectCollisionPlugin::default(), RectCollisionDebugPlugin))
///     .add_systems(Startup, |mut store: ResMut<GizmoConfigStore>| {
///         store.config_mut::<CollisionGizmos>().1.aabbs = true;
///     })
///     .run();
/// ```
pub struct RectCollisionDebugPlugin;

impl Plugin for RectCollisionDebugPlugin {
    fn build(&self, app: &mut App) {
        app.init_gizmo_group::<CollisionGizmos>()
            .init_resource::<SelectedCollider>()
            .register_type::<ColliderGizmo>()
            .add_systems(
                PostUpdate,
                (
                    toggle_overlay,
                    (
                        draw_colliders,
                        draw_aabbs.run_if(layer_enabled(|c| c.aabbs)),
                        draw_contacts.run_if(layer_enabled(|c| c.contacts)),
                        draw_broad_phase.run_if(layer_enabled(|c| c.broad_phase)),
                        draw_sweeps.run_if(layer_enabled(|c| c.sweeps)),
                    ),
                )
                    .chain()
                    .after(CollisionSystems::Events),
            );
    }
}

/// The collision overlay's gizmo group: which layers are drawn, in which colours, and the toggle key.
///
/// The group's own [`GizmoConfig`] (`store.config_mut::<CollisionGizmos>().0`) switches the whole overlay
/// on and off and sets line width and depth bias.
#[derive(Clone, Reflect, GizmoConfigGroup)]
#[reflect(Clone, Default)]
pub struct CollisionGizmos {
    /// Draw every collider's outline. Colliders marked [`ColliderGizmo::Shown`] are drawn either way.
    /// Defaults to `true`.
    pub colliders: bool,
    /// Draw the outlines of colliders that stood still since the overlay's last frame, such as the
    /// tiles of a level, which are most of what there is to draw. Turned off, a still collider is
    /// drawn only while it touches something, or is selected or [`ColliderGizmo::Shown`]. Defaults to
    /// `true`.
    pub still_colliders: bool,
    /// Draw every collider's axis-aligned bounding box. Defaults to `false`.
    pub aabbs: bool,
    /// Draw each touching pair's contact normal (an arrow from the first collider towards the second,
    /// at their [`contact_point`]) and its depth (a double segment). Defaults to `true`.
    pub contacts: bool,
    /// Draw the candidate pairs, those of the broad phase's pair set (their fat AABBs overlap and
    /// their layers interact), as lines between their centres. Defaults to `false`.
    pub broad_phase: bool,
    /// Draw each swept collider's way in the last update: its outline where the move began, and the
    /// lines its corners, or its circle's sides, ran along. Defaults to `true`.
    pub sweeps: bool,
    /// Length of the contact normal arrows, in world units. Defaults to `24.0`.
    pub normal_length: f32,
    /// The key that toggles the whole overlay. Defaults to [`KeyCode::F9`], which no Bevy plugin uses.
    pub toggle_key: KeyCode,
    /// Outline of a collider touching nothing. Defaults to a light green.
    pub idle_color: Color,
    /// Outline of a collider touching something. Defaults to orange red.
    pub touching_color: Color,
    /// Outline of a disabled or invalid collider. Defaults to a translucent grey.
    pub inactive_color: Color,
    /// Outline of the [`SelectedCollider`]. Defaults to yellow.
    pub selected_color: Color,
    /// Bounding boxes. Defaults to a translucent blue.
    pub aabb_color: Color,
    /// Contact normals and depths. Defaults to magenta.
    pub contact_color: Color,
    /// Broad-phase candidate pairs. Defaults to a translucent cyan.
    pub broad_phase_color: Color,
    /// Swept colliders' ways. Defaults to a translucent gold.
    pub sweep_color: Color,
}

impl Default for CollisionGizmos {
    fn default() -> Self {
        Self {
            colliders: true,
            still_colliders: true,
            aabbs: false,
            contacts: true,
            broad_phase: false,
            sweeps: true,
            normal_length: 24.0,
            toggle_key: KeyCode::F9,
            idle_color: css::LIGHT_GREEN.into(),
            touching_color: css::ORANGE_RED.into(),
            inactive_color: css::GRAY.with_alpha(0.5).into(),
            selected_color: css::YELLOW.into(),
            aabb_color: css::DODGER_BLUE.with_alpha(0.6).into(),
            contact_color: css::MAGENTA.into(),
            broad_phase_color: css::AQUA.with_alpha(0.35).into(),
            sweep_color: css::GOLD.with_alpha(0.6).into(),
        }
    }
}

/// Overrides [`CollisionGizmos::colliders`] for one entity.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Reflect)]
#[reflect(Component, Debug, PartialEq)]
pub enum ColliderGizmo {
    /// Never draw this collider.
    Hidden,
    /// Draw this collider even when the colliders layer is off.
    Shown,
}

/// The collider the overlay highlights; the egui panel sets it when a collider is clicked.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SelectedCollider(pub Option<Entity>);

fn layer_enabled(
    layer: impl Fn(&CollisionGizmos) -> bool + Send + Sync + 'static,
) -> impl Fn(Res<GizmoConfigStore>) -> bool + Send + Sync + 'static {
    move |store: Res<GizmoConfigStore>| layer(store.config::<CollisionGizmos>().1)
}

fn toggle_overlay(keys: Option<Res<ButtonInput<KeyCode>>>, mut store: ResMut<GizmoConfigStore>) {
    let (config, gizmos) = store.config_mut::<CollisionGizmos>();
    if keys.is_some_and(|keys| keys.just_pressed(gizmos.toggle_key)) {
        config.enabled = !config.enabled;
    }
}

/// Draws a shape's outline: the closed loop of a rectangle's corners or a polygon's vertices, a
/// circle, or a capsule.
pub(crate) fn draw_shape(gizmos: &mut Gizmos<CollisionGizmos>, shape: &WorldShape, color: Color) {
    match shape {
        WorldShape::Circle(circle) => {
            gizmos.circle_2d(
                Isometry2d::from_translation(circle.center),
                circle.radius,
                color,
            );
        }
        WorldShape::Capsule(capsule) => {
            gizmos.primitive_2d(
                &Capsule2d::new(capsule.radius, 2.0 * capsule.half_length),
                Isometry2d::new(capsule.center, capsule.rotation),
                color,
            );
        }
        WorldShape::Polygon(polygon) => {
            let vertices = polygon.vertices();
            gizmos.linestrip_2d(vertices.iter().chain(&vertices[..1]).copied(), color);
        }
        WorldShape::Rect(_) | WorldShape::RotatedRect(_) => {
            if let Some(corners) = shape.corners() {
                gizmos.linestrip_2d(corners.into_iter().chain([corners[0]]), color);
            }
        }
    }
}

fn draw_colliders(
    mut gizmos: Gizmos<CollisionGizmos>,
    colliders: Query<(
        Entity,
        Ref<ColliderWorldShape>,
        &CollidingEntities,
        Option<&ColliderGizmo>,
        Has<ColliderDisabled>,
        Has<InvalidCollider>,
    )>,
    selected: Res<SelectedCollider>,
    broad_phase: Res<BroadPhase>,
    contacts: Res<Contacts>,
    mut first_contacts: Local<EntityHashMap<(Vec2, f32)>>,
) {
    let config = gizmos.config_ext.clone();
    find_first_contacts(&broad_phase, &contacts, &mut first_contacts);
    for (entity, shape, touching, visibility, disabled, invalid) in &colliders {
        let Some(mut outline) = shape.0 else { continue };
        let is_selected = selected.0 == Some(entity);
        let drawn = match visibility {
            Some(ColliderGizmo::Hidden) => false,
            Some(ColliderGizmo::Shown) => true,
            None => {
                config.colliders
                    && (config.still_colliders
                        || shape.is_changed()
                        || !touching.is_empty()
                        || is_selected)
            }
        };
        if !drawn {
            continue;
        }
        if let Some(&(motion, time)) = first_contacts.get(&entity)
            && time <= 1.0
        {
            outline = outline.translated(-motion * (1.0 - time));
        }
        let shape = outline;
        let color = if is_selected {
            config.selected_color
        } else if disabled || invalid {
            config.inactive_color
        } else if touching.is_empty() {
            config.idle_color
        } else {
            config.touching_color
        };
        draw_shape(&mut gizmos, &shape, color);
    }
}

/// Each swept collider's motion in the last update, with the earliest time of impact of its pairs
/// (infinite where it met nothing): drawn at its end pose, a bullet would seem to have passed the
/// wall it hit, so it is drawn where it met it first.
fn find_first_contacts(
    broad_phase: &BroadPhase,
    contacts: &Contacts,
    first_contacts: &mut EntityHashMap<(Vec2, f32)>,
) {
    first_contacts.clear();
    first_contacts.extend(
        (broad_phase.sweeps()).map(|(entity, _, motion)| (entity, (motion, f32::INFINITY))),
    );
    if first_contacts.is_empty() {
        return;
    }
    for pair in contacts.iter() {
        let Some(time) = pair.time_of_impact else {
            continue;
        };
        for entity in [pair.collider1, pair.collider2] {
            if let Some((_, first)) = first_contacts.get_mut(&entity) {
                *first = first.min(time);
            }
        }
    }
}

fn draw_aabbs(mut gizmos: Gizmos<CollisionGizmos>, broad_phase: Res<BroadPhase>) {
    let color = gizmos.config_ext.aabb_color;
    for (_, aabb) in broad_phase.aabbs() {
        let center = (aabb.min + aabb.max) * 0.5;
        gizmos.rect_2d(
            Isometry2d::from_translation(center),
            aabb.max - aabb.min,
            color,
        );
    }
}

fn draw_contacts(
    mut gizmos: Gizmos<CollisionGizmos>,
    contacts: Res<Contacts>,
    shapes: Query<&ColliderWorldShape>,
) {
    let (color, length) = (
        gizmos.config_ext.contact_color,
        gizmos.config_ext.normal_length,
    );
    for pair in contacts.iter() {
        let (Ok(a), Ok(b)) = (shapes.get(pair.collider1), shapes.get(pair.collider2)) else {
            continue;
        };
        let (Some(a), Some(b)) = (a.0, b.0) else {
            continue;
        };
        // The arrow shows the normal; the double segment across the contact point, the depth.
        let normal = pair.contact.normal;
        let point = contact_point(&a, &b, &pair.contact);
        gizmos.arrow_2d(point, point + normal * length, color);
        let half_depth = normal * pair.contact.depth * 0.5;
        let side = normal.perp() * 1.5;
        for offset in [side, -side] {
            gizmos.line_2d(
                point - half_depth + offset,
                point + half_depth + offset,
                color,
            );
        }
    }
}

fn draw_broad_phase(
    mut gizmos: Gizmos<CollisionGizmos>,
    broad_phase: Res<BroadPhase>,
    shapes: Query<&ColliderWorldShape>,
) {
    let color = gizmos.config_ext.broad_phase_color;
    for (a, b) in broad_phase.pair_entities() {
        if let (Ok(ColliderWorldShape(Some(a))), Ok(ColliderWorldShape(Some(b)))) =
            (shapes.get(a), shapes.get(b))
        {
            gizmos.line_2d(a.center(), b.center(), color);
        }
    }
}

fn draw_sweeps(mut gizmos: Gizmos<CollisionGizmos>, broad_phase: Res<BroadPhase>) {
    let color = gizmos.config_ext.sweep_color;
    for (_, shape, motion) in broad_phase.sweeps() {
        let start = shape.translated(-motion);
        draw_shape(&mut gizmos, &start, color);
        // The way's outline: each corner's or vertex's track, or a round shape's two sides', kept
        // in an array so that the overlay allocates nothing a frame.
        let across = motion.normalize_or_zero().perp();
        let mut tracks = [Vec2::ZERO; MAX_POLYGON_VERTICES];
        let count = match shape {
            WorldShape::Circle(circle) => {
                let side = across * circle.radius;
                tracks[..2].copy_from_slice(&[circle.center + side, circle.center - side]);
                2
            }
            WorldShape::Capsule(capsule) => {
                let side = across * capsule.radius;
                let [low, high] = capsule.ends();
                tracks[..4].copy_from_slice(&[low + side, low - side, high + side, high - side]);
                4
            }
            WorldShape::Polygon(polygon) => {
                let vertices = polygon.vertices();
                tracks[..vertices.len()].copy_from_slice(vertices);
                vertices.len()
            }
            WorldShape::Rect(_) | WorldShape::RotatedRect(_) => {
                let corners = shape.corners().unwrap_or_default();
                tracks[..4].copy_from_slice(&corners);
                4
            }
        };
        for &end in &tracks[..count] {
            gizmos.line_2d(end - motion, end, color);
        }
    }
}
