//! [`RectCollisionEguiPlugin`]: a collision panel in egui, beside the gizmo overlay.

use std::collections::VecDeque;

use bevy::camera::Camera;
use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_egui::{EguiContexts, EguiPlugin, EguiPrimaryContextPass, egui};

use super::gizmos::{CollisionGizmos, RectCollisionDebugPlugin, SelectedCollider};
use crate::collider::{Collider, ColliderDisabled, ColliderWorldShape, InvalidCollider};
use crate::diagnostics::{CollisionDiagnostics, StageTimings};
use crate::geometry::WorldShape;
use crate::layers::CollisionLayers;
use crate::narrow_phase::Contacts;
use crate::plugin::CollisionSystems;
use crate::query::SpatialQuery;
use crate::tilemap::TileRegion;

/// How many updates of stage timings the panel's plot keeps.
const HISTORY_LENGTH: usize = 240;
/// How many touching pairs the panel lists.
const LISTED_PAIRS: usize = 200;

/// A window with the overlay's switches, the pipeline's counts and stage timings (with a plot of recent
/// updates), the touching pairs, and the selected collider's shape, corners, layers and contacts.
///
/// Click a collider in the world or a pair in the list to select it; the overlay highlights it. Adds
/// [`EguiPlugin`] and [`RectCollisionDebugPlugin`] if they are not added yet.
///
/// ```no_run
/// use bevy::prelude::*;
/// use bevy_rect_collision::debug::RectCollisionEguiPlugin;
/// use bevy_rect_collision::prelude::*;
///
/// App::new()
///     .add_plugins((DefaultPlugins, RectCollisionPlugin::default(), RectCollisionEguiPlugin))
///     .run();
/// ```
pub struct RectCollisionEguiPlugin;

impl Plugin for RectCollisionEguiPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<EguiPlugin>() {
            app.add_plugins(EguiPlugin::default());
        }
        if !app.is_plugin_added::<RectCollisionDebugPlugin>() {
            app.add_plugins(RectCollisionDebugPlugin);
        }
        app.init_resource::<CollisionTimingHistory>()
            .add_systems(PostUpdate, record_timings.after(CollisionSystems::Events))
            .add_systems(
                EguiPrimaryContextPass,
                (collision_panel, select_by_click).chain(),
            );
    }
}

/// What the panel shows of the selected collider.
type InspectedColliders<'w, 's> = Query<
    'w,
    's,
    (
        &'static Collider,
        &'static ColliderWorldShape,
        &'static CollisionLayers,
        Has<ColliderDisabled>,
        Has<InvalidCollider>,
        Option<&'static TileRegion>,
    ),
>;

/// The stage timings of the last updates, oldest first, as the panel plots them.
#[derive(Resource, Debug, Default)]
pub struct CollisionTimingHistory(pub VecDeque<StageTimings>);

fn record_timings(
    diagnostics: Res<CollisionDiagnostics>,
    mut history: ResMut<CollisionTimingHistory>,
) {
    if history.0.len() == HISTORY_LENGTH {
        history.0.pop_front();
    }
    history.0.push_back(diagnostics.timings);
}

fn micros(duration: core::time::Duration) -> f32 {
    duration.as_secs_f32() * 1e6
}

/// A stage's time as the panel shows it: in microseconds natively.
#[cfg(not(target_arch = "wasm32"))]
fn stage_time(duration: core::time::Duration) -> String {
    format!("{:8.1} µs", micros(duration))
}

/// A stage's time as the panel shows it in a browser, whose clock ticks in steps of a tenth of a
/// millisecond or more (coarsened against timing attacks): a stage that took less reads as no tick
/// or one, so both show as below the step.
#[cfg(target_arch = "wasm32")]
fn stage_time(duration: core::time::Duration) -> String {
    if duration <= core::time::Duration::from_micros(100) {
        "< 0.1 ms".to_string()
    } else {
        format!("{:.1} ms", duration.as_secs_f32() * 1e3)
    }
}

fn collision_panel(
    mut contexts: EguiContexts,
    mut store: ResMut<GizmoConfigStore>,
    diagnostics: Res<CollisionDiagnostics>,
    history: Res<CollisionTimingHistory>,
    contacts: Res<Contacts>,
    mut selected: ResMut<SelectedCollider>,
    colliders: InspectedColliders,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    egui::Window::new("Collisions")
        .default_pos([12.0, 12.0])
        .default_width(300.0)
        .show(ctx, |ui| {
            let (config, layers) = store.config_mut::<CollisionGizmos>();
            ui.horizontal(|ui| {
                ui.checkbox(&mut config.enabled, "Overlay");
                ui.weak(format!("({:?} toggles)", layers.toggle_key));
            });
            ui.horizontal_wrapped(|ui| {
                ui.checkbox(&mut layers.colliders, "Colliders");
                ui.checkbox(&mut layers.aabbs, "AABBs");
                ui.checkbox(&mut layers.contacts, "Contacts");
                ui.checkbox(&mut layers.broad_phase, "Broad phase");
                ui.checkbox(&mut layers.sweeps, "Sweeps");
            });
            ui.separator();
            counts(ui, &diagnostics);
            ui.separator();
            timings(ui, &diagnostics.timings, &history);
            ui.separator();
            ui.collapsing(format!("Touching pairs ({})", contacts.len()), |ui| {
                egui::ScrollArea::vertical()
                    .max_height(140.0)
                    .show(ui, |ui| {
                        for pair in contacts.iter().take(LISTED_PAIRS) {
                            let text = format!(
                                "{} – {}   depth {:.2}",
                                pair.collider1, pair.collider2, pair.contact.depth
                            );
                            let chosen = selected.0 == Some(pair.collider1);
                            if ui.selectable_label(chosen, text).clicked() {
                                selected.0 = Some(pair.collider1);
                            }
                        }
                        if contacts.len() > LISTED_PAIRS {
                            ui.weak(format!("… and {} more", contacts.len() - LISTED_PAIRS));
                        }
                    });
            });
            ui.separator();
            selection(ui, &mut selected, &colliders, &contacts);
        });
    Ok(())
}

/// Two columns of labels and monospace values.
fn label_grid(ui: &mut egui::Ui, id: &str, rows: impl IntoIterator<Item = (&'static str, String)>) {
    egui::Grid::new(id).num_columns(2).show(ui, |ui| {
        for (label, value) in rows {
            ui.label(label);
            ui.monospace(value);
            ui.end_row();
        }
    });
}

fn counts(ui: &mut egui::Ui, diagnostics: &CollisionDiagnostics) {
    let rows = [
        ("Colliders", diagnostics.colliders),
        ("Invalid (skipped)", diagnostics.invalid_colliders),
        ("Candidate pairs", diagnostics.candidate_pairs),
        ("Queried proxies", diagnostics.queried_proxies),
        ("Tested pairs", diagnostics.tested_pairs),
        ("Touching pairs", diagnostics.touching_pairs),
        ("Started this update", diagnostics.started),
        ("Ended this update", diagnostics.ended),
    ];
    label_grid(
        ui,
        "collision counts",
        rows.map(|(label, n)| (label, n.to_string())),
    );
}

fn timings(ui: &mut egui::Ui, timings: &StageTimings, history: &CollisionTimingHistory) {
    let rows = [
        ("Prepare", timings.prepare),
        ("Broad phase", timings.broad_phase),
        ("Narrow phase", timings.narrow_phase),
        ("Events", timings.events),
        ("Total", timings.total()),
    ];
    label_grid(
        ui,
        "collision timings",
        rows.map(|(label, d)| (label, stage_time(d))),
    );
    timing_plot(ui, history);
}

/// A small line chart of the total update time over the kept history, scaled to its peak.
fn timing_plot(ui: &mut egui::Ui, history: &CollisionTimingHistory) {
    let (response, painter) =
        ui.allocate_painter(egui::vec2(ui.available_width(), 60.0), egui::Sense::hover());
    let rect = response.rect;
    painter.rect_filled(rect, 2.0, egui::Color32::from_black_alpha(90));
    let totals: Vec<f32> = history.0.iter().map(|t| micros(t.total())).collect();
    let peak = totals.iter().copied().fold(1.0_f32, f32::max);
    if totals.len() >= 2 {
        let step = rect.width() / (HISTORY_LENGTH - 1) as f32;
        let points = totals
            .iter()
            .enumerate()
            .map(|(i, &value)| {
                egui::pos2(
                    rect.left() + i as f32 * step,
                    rect.bottom() - value / peak * (rect.height() - 4.0),
                )
            })
            .collect();
        painter.add(egui::Shape::line(
            points,
            egui::Stroke::new(1.5, egui::Color32::LIGHT_GREEN),
        ));
    }
    painter.text(
        rect.left_top() + egui::vec2(4.0, 2.0),
        egui::Align2::LEFT_TOP,
        format!("total, peak {peak:.0} µs"),
        egui::FontId::monospace(10.0),
        egui::Color32::GRAY,
    );
}

fn selection(
    ui: &mut egui::Ui,
    selected: &mut SelectedCollider,
    colliders: &InspectedColliders,
    contacts: &Contacts,
) {
    let Some(entity) = selected.0 else {
        ui.weak("Click a collider or a pair to inspect it.");
        return;
    };
    let Ok((collider, shape, layers, disabled, invalid, region)) = colliders.get(entity) else {
        selected.0 = None;
        return;
    };
    ui.horizontal(|ui| {
        ui.strong(format!("Selected {entity}"));
        if ui.small_button("clear").clicked() {
            selected.0 = None;
        }
    });
    ui.monospace(format!("{:?}", collider.shape));
    if collider.offset != Vec2::ZERO {
        ui.monospace(format!("offset {:?}", collider.offset));
    }
    if let Some(region) = region {
        ui.monospace(format!(
            "tiles of kind {}: cells {} to {}",
            region.kind,
            region.min,
            region.max - 1
        ));
    }
    if disabled {
        ui.colored_label(egui::Color32::GRAY, "disabled");
    }
    if invalid {
        ui.colored_label(egui::Color32::LIGHT_RED, "invalid: skipped");
    }
    match shape.0 {
        Some(WorldShape::Circle(circle)) => {
            ui.monospace(format!(
                "centre ({:.2}, {:.2}) radius {:.2}",
                circle.center.x, circle.center.y, circle.radius
            ));
        }
        Some(WorldShape::Capsule(capsule)) => {
            ui.monospace(format!(
                "capsule: centre ({:.2}, {:.2}) length {:.2} radius {:.2} angle {:.1}°",
                capsule.center.x,
                capsule.center.y,
                2.0 * capsule.half_length,
                capsule.radius,
                capsule.rotation.as_degrees()
            ));
        }
        Some(WorldShape::Polygon(polygon)) => {
            for vertex in polygon.vertices() {
                ui.monospace(format!("vertex ({:.2}, {:.2})", vertex.x, vertex.y));
            }
        }
        Some(shape) => {
            for corner in shape.corners().into_iter().flatten() {
                ui.monospace(format!("corner ({:.2}, {:.2})", corner.x, corner.y));
            }
        }
        None => {}
    }
    ui.monospace(format!("memberships {:#034b}", layers.memberships));
    ui.monospace(format!("filters     {:#034b}", layers.filters));
    for pair in contacts.iter() {
        let (other, contact) = match pair.key() {
            (a, other) if a == entity => (other, pair.contact),
            (other, b) if b == entity => (other, pair.contact.flipped()),
            _ => continue,
        };
        ui.monospace(format!(
            "touches {other}: normal ({:.2}, {:.2}) depth {:.3}",
            contact.normal.x, contact.normal.y, contact.depth
        ));
        if let Some(time) = pair.time_of_impact {
            ui.monospace(format!(
                "  swept: first touched {:.0}% of the way",
                time * 100.0
            ));
        }
    }
}

/// Selects the collider under the cursor on a left click that egui does not take.
fn select_by_click(
    mut contexts: EguiContexts,
    buttons: Res<ButtonInput<MouseButton>>,
    window: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    query: SpatialQuery,
    mut selected: ResMut<SelectedCollider>,
) -> Result {
    if !buttons.just_pressed(MouseButton::Left) || contexts.ctx_mut()?.egui_wants_pointer_input() {
        return Ok(());
    }
    let Some(cursor) = window.single().ok().and_then(Window::cursor_position) else {
        return Ok(());
    };
    let world = cameras
        .iter()
        .find_map(|(camera, transform)| camera.viewport_to_world_2d(transform, cursor).ok());
    if let Some(point) = world {
        selected.0 = query
            .point_intersections(point, &default())
            .first()
            .copied();
    }
    Ok(())
}
