//! The narrow phase against independent oracles, on random shapes, poses and scales: every pair of
//! the five kinds (rectangles, rotated rectangles, circles, capsules and convex polygons).
//!
//! - parry2d 0.27 (`intersection_test` and `contact`): at least 100,000 cases per pair kind, with zero
//!   disagreement outside a band of 1e-4 around touching.
//! - The split of each rectangle into two triangles, tested pair by pair in f64: a second,
//!   independent comparator for the rectangle pairs.
//! - parry2d 0.27's `cast_shapes` and `distance`: each kind cast against each, 100,000 cases a
//!   pair, the distance within 1e-4 of the shapes' size, the point on both shapes and the normal
//!   between them.
//! - Properties: symmetry, translation invariance, the boolean test agreeing with the contact query, and
//!   the contact actually separating the shapes.

use bevy::math::{DVec2, Dir2, Rot2, Vec2};
use bevy_rect_collision::geometry::*;
use parry2d::math::Pose;
use parry2d::query;
use parry2d::shape::{Ball, Capsule, ConvexPolygon as ParryPolygon, Cuboid, Segment, Shape};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// Cases within this distance of touching are skipped: f32 rounding decides them, not the algorithm.
const TOUCH_BAND: f32 = 1e-4;
/// Cases per pair kind against parry2d.
const ORACLE_CASES: u32 = 100_000;

#[derive(Clone, Copy, Debug)]
enum Kind {
    Rect,
    RotatedRect,
    Circle,
    Capsule,
    Polygon,
}

/// A random shape of `kind`, built from a random pose with scale (mirroring included) and offset, the
/// way the plugin builds shapes from a `GlobalTransform`.
fn shape(kind: Kind) -> impl Strategy<Value = WorldShape> {
    (
        (-4.0f32..4.0, -4.0f32..4.0),
        -std::f32::consts::PI..std::f32::consts::PI,
        (0.25f32..2.0, 0.25f32..2.0, any::<bool>(), any::<bool>()),
        (0.05f32..3.0, 0.05f32..3.0),
        (-1.0f32..1.0, -1.0f32..1.0),
        prop::collection::vec((-1.0f32..1.0, -1.0f32..1.0), 3..=MAX_POLYGON_VERTICES),
    )
        .prop_map(
            move |((x, y), angle, (sx, sy, flip_x, flip_y), (w, h), (ox, oy), points)| {
                let scale = Vec2::new(if flip_x { -sx } else { sx }, if flip_y { -sy } else { sy });
                let pose = Pose2d::new(Vec2::new(x, y), Rot2::radians(angle), scale);
                let offset = Vec2::new(ox, oy);
                match kind {
                    Kind::Rect => WorldRect::from_pose(&pose, Vec2::new(w, h), offset).into(),
                    Kind::RotatedRect => {
                        WorldRotatedRect::from_pose(&pose, Vec2::new(w, h), offset).into()
                    }
                    Kind::Circle => WorldCircle::from_pose(&pose, w, offset).into(),
                    Kind::Capsule => WorldCapsule::from_pose(&pose, w, h, offset).into(),
                    Kind::Polygon => {
                        let points: Vec<Vec2> = points
                            .iter()
                            .map(|&(px, py)| Vec2::new(px * w, py * h))
                            .collect();
                        // Points nearly on one line give no hull, or a sliver on which parry2d's
                        // distances are off by thousandths: a triangle instead.
                        let side = w.max(h);
                        // A polygon squeezed by the pose as much as a sliver is not one either.
                        let triangle = || {
                            let corners = [
                                Vec2::splat(-side),
                                Vec2::new(side, -side),
                                Vec2::new(0.0, side),
                            ];
                            ConvexPolygon::hull(&corners).expect("a triangle")
                        };
                        // Nor one that barely turns at a vertex: parry2d's distance to the
                        // polygon is off by thousandths there too.
                        let not_a_sliver = |polygon: &ConvexPolygon| {
                            let size = polygon.aabb().max - polygon.aabb().min;
                            let v = polygon.vertices();
                            let turns = (0..v.len()).all(|i| {
                                let (before, after) = (
                                    v[(i + 1) % v.len()] - v[i],
                                    v[(i + 2) % v.len()] - v[(i + 1) % v.len()],
                                );
                                before.normalize().perp_dot(after.normalize()) >= 0.05
                            });
                            turns && area(polygon) >= 0.05 * size.max_element().powi(2)
                        };
                        ConvexPolygon::hull(&points)
                            .map(|hull| hull.placed(&pose, offset))
                            .ok()
                            .filter(not_a_sliver)
                            .unwrap_or_else(|| {
                                let uniform =
                                    Pose2d::new(pose.translation, pose.rotation, Vec2::splat(sx));
                                triangle().placed(&uniform, offset)
                            })
                            .into()
                    }
                }
            },
        )
}

/// The area of a polygon, by the shoelace formula.
fn area(polygon: &ConvexPolygon) -> f32 {
    let vertices = polygon.vertices();
    let twice: f32 = (0..vertices.len())
        .map(|i| vertices[i].perp_dot(vertices[(i + 1) % vertices.len()]))
        .sum();
    0.5 * twice
}

/// The same shape in parry2d, with exactly the same rotation.
fn to_parry(shape: &WorldShape) -> (Pose, Box<dyn Shape>) {
    let pose = |center: Vec2, rotation: Rot2| {
        Pose::from_parts(
            center,
            parry2d::math::Rot2 {
                re: rotation.cos,
                im: rotation.sin,
            },
        )
    };
    match shape {
        WorldShape::Rect(r) => (
            pose(r.center, Rot2::IDENTITY),
            Box::new(Cuboid::new(r.half_size)),
        ),
        WorldShape::RotatedRect(r) => (
            pose(r.center, r.rotation),
            Box::new(Cuboid::new(r.half_size)),
        ),
        WorldShape::Circle(c) => (
            pose(c.center, Rot2::IDENTITY),
            Box::new(Ball::new(c.radius)),
        ),
        WorldShape::Capsule(c) => (
            pose(c.center, c.rotation),
            Box::new(Capsule::new_y(c.half_length, c.radius)),
        ),
        WorldShape::Polygon(p) => (
            pose(Vec2::ZERO, Rot2::IDENTITY),
            Box::new(
                ParryPolygon::from_convex_polyline_unmodified(p.vertices().to_vec())
                    .expect("a convex polygon"),
            ),
        ),
    }
}

/// parry2d's signed distance: positive apart, negative the penetration depth; NaN where parry2d cannot
/// say how deep.
///
/// The gap comes from `distance`, the depth from `contact`. parry2d 0.27's `contact` can report a small
/// gap for a pair that its `distance` and `intersection_test` find overlapping: with the fixed seed, a
/// rotated rectangle whose corner is 1.8e-3 inside a rectangle's edge gets a gap of 1.1e-4. The depth is
/// then unknown, and the caller compares the boolean answer only.
fn parry_signed_distance(a: &WorldShape, b: &WorldShape) -> f32 {
    let (pa, sa) = to_parry(a);
    let (pb, sb) = to_parry(b);
    let gap = parry_gap(a, b);
    if gap > 0.0 {
        return gap;
    }
    match query::contact(&pa, &*sa, &pb, &*sb, 0.0).expect("supported shapes") {
        Some(contact) if contact.dist <= 0.0 => contact.dist,
        _ => f32::NAN,
    }
}

/// parry2d's distance between two shapes. parry2d 0.27's `distance` from a capsule can be zero where
/// the shapes are apart (a capsule 0.0016 from a rectangle, in one order of the two), and from a thin
/// triangle 0.0008 where they touch, so a pair with a capsule or a polygon is measured between the
/// shapes' cores, by the distance from each core's points to the other core (parry2d's, but for a
/// polygon, [`distance_to_polygon`]), less both radii: between convex shapes that do not meet, the
/// closest points are a vertex and a point of the other.
fn parry_gap(a: &WorldShape, b: &WorldShape) -> f32 {
    if !is_new_kind(a) && !is_new_kind(b) {
        let (pa, sa) = to_parry(a);
        let (pb, sb) = to_parry(b);
        return query::distance(&pa, &*sa, &pb, &*sb).expect("supported shapes");
    }
    // A shape's core, its points and its radius: a capsule's segment, a circle's centre.
    let core = |shape: &WorldShape| -> (Option<(Pose, Box<dyn Shape>)>, Vec<Vec2>, f32) {
        match shape {
            WorldShape::Capsule(c) => {
                let [low, high] = c.ends();
                let segment = Segment::new(low, high);
                (
                    Some((Pose::IDENTITY, Box::new(segment))),
                    vec![low, high],
                    c.radius,
                )
            }
            WorldShape::Circle(c) => (None, vec![c.center], c.radius),
            WorldShape::Rect(r) => (Some(to_parry(shape)), r.corners().to_vec(), 0.0),
            WorldShape::RotatedRect(r) => (Some(to_parry(shape)), r.corners().to_vec(), 0.0),
            WorldShape::Polygon(p) => (Some(to_parry(shape)), p.vertices().to_vec(), 0.0),
        }
    };
    let ((shape_a, points_a, radius_a), (shape_b, points_b, radius_b)) = (core(a), core(b));
    let from =
        |core: &Option<(Pose, Box<dyn Shape>)>, polygon: Option<&[Vec2]>, points: &[Vec2]| {
            points
                .iter()
                .map(|point| match (polygon, core) {
                    (Some(vertices), _) => distance_to_polygon(vertices, *point),
                    (None, Some((pose, shape))) => shape.distance_to_point(pose, *point, true),
                    (None, None) => f32::INFINITY,
                })
                .fold(f32::INFINITY, f32::min)
        };
    let polygon = |shape: &WorldShape| match shape {
        WorldShape::Polygon(p) => Some(p.vertices().to_vec()),
        _ => None,
    };
    let (polygon_a, polygon_b) = (polygon(a), polygon(b));
    let cores_meet = match (&shape_a, &shape_b) {
        (Some((pa, sa)), Some((pb, sb))) => {
            query::intersection_test(pa, &**sa, pb, &**sb).expect("supported shapes")
        }
        _ => false,
    };
    let between = if cores_meet {
        0.0
    } else if shape_a.is_none() && shape_b.is_none() {
        points_a[0].distance(points_b[0])
    } else {
        from(&shape_b, polygon_b.as_deref(), &points_a).min(from(
            &shape_a,
            polygon_a.as_deref(),
            &points_b,
        ))
    };
    between - radius_a - radius_b
}

/// How far `point` lies from the convex polygon of `vertices`, counter-clockwise, in f64: zero inside,
/// and otherwise the least distance to an edge. parry2d's distance from a point to a convex polygon
/// is off by up to thousandths (a circle 1.7e-7 from a quadrilateral is 0.003 from it by parry2d).
fn distance_to_polygon(vertices: &[Vec2], point: Vec2) -> f32 {
    let p = point.as_dvec2();
    let edges = (0..vertices.len()).map(|i| {
        (
            vertices[i].as_dvec2(),
            vertices[(i + 1) % vertices.len()].as_dvec2(),
        )
    });
    if edges.clone().all(|(a, b)| (b - a).perp_dot(p - a) >= 0.0) {
        return 0.0;
    }
    edges
        .map(|(a, b)| {
            let t = ((p - a).dot(b - a) / (b - a).length_squared()).clamp(0.0, 1.0);
            (a + (b - a) * t).distance(p)
        })
        .fold(f64::INFINITY, f64::min) as f32
}

/// How far `point` lies outside `shape`, in f64, from the shape's own description: zero or less
/// inside.
fn distance_to(shape: &WorldShape, point: Vec2) -> f64 {
    let p = point.as_dvec2();
    let boxed = |center: Vec2, half: Vec2, cos: f32, sin: f32| {
        let offset = p - center.as_dvec2();
        let (cos, sin) = (f64::from(cos), f64::from(sin));
        let local = DVec2::new(
            cos * offset.x + sin * offset.y,
            -sin * offset.x + cos * offset.y,
        );
        let outside = local.abs() - half.as_dvec2();
        outside.max(DVec2::ZERO).length() + outside.max_element().min(0.0)
    };
    match shape {
        WorldShape::Rect(r) => boxed(r.center, r.half_size, 1.0, 0.0),
        WorldShape::RotatedRect(r) => boxed(r.center, r.half_size, r.rotation.cos, r.rotation.sin),
        WorldShape::Circle(c) => p.distance(c.center.as_dvec2()) - f64::from(c.radius),
        WorldShape::Capsule(c) => {
            let [low, high] = c.ends().map(Vec2::as_dvec2);
            let t = ((p - low).dot(high - low) / (high - low).length_squared().max(1e-300))
                .clamp(0.0, 1.0);
            (low + (high - low) * t).distance(p) - f64::from(c.radius)
        }
        WorldShape::Polygon(polygon) => f64::from(distance_to_polygon(polygon.vertices(), point)),
    }
}

/// Whether the shape is a capsule or a polygon, whose pairs parry2d's distance and intersection
/// tests can get wrong ([`parry_gap`]).
fn is_new_kind(shape: &WorldShape) -> bool {
    matches!(shape, WorldShape::Capsule(_) | WorldShape::Polygon(_))
}

fn parry_intersects(a: &WorldShape, b: &WorldShape) -> bool {
    if is_new_kind(a) || is_new_kind(b) {
        return parry_gap(a, b) <= 0.0;
    }
    let (pa, sa) = to_parry(a);
    let (pb, sb) = to_parry(b);
    query::intersection_test(&pa, &*sa, &pb, &*sb).expect("supported shapes")
}

/// Our answer against parry2d's on one pair; `Ok(())` also for cases in the touching band.
fn agree_with_parry(a: &WorldShape, b: &WorldShape) -> Result<(), TestCaseError> {
    let distance = parry_signed_distance(a, b);
    if distance.abs() < TOUCH_BAND {
        return Ok(());
    }
    let ours = a.intersects(b, OverlapMode::Closed);
    prop_assert_eq!(
        ours,
        parry_intersects(a, b),
        "boolean test disagrees with parry2d (signed distance {})",
        distance
    );
    if distance.is_nan() {
        // parry2d's own queries disagree on the depth; its boolean answer was compared above.
        return Ok(());
    }
    prop_assert_eq!(
        ours,
        distance < 0.0,
        "boolean test disagrees with parry2d's distance"
    );
    if let Some(contact) = a.contact(b, OverlapMode::Closed) {
        let depth = -distance;
        let near = |expected: f32| (contact.depth - expected).abs() <= 1e-3 * (1.0 + expected);
        // parry2d's depth of a capsule can be off by a few thousandths of it (a capsule 2.5198 deep
        // in a rectangle, by the least support sum, is 2.5142 by parry2d): there the least support
        // sum decides.
        prop_assert!(
            near(depth) || near(support_depth(a, b)),
            "depth {} where parry2d finds {} and the least support sum {}",
            contact.depth,
            depth,
            support_depth(a, b)
        );
    }
    Ok(())
}

/// How far `shape` reaches along the unit `direction`, from its corners, vertices, centre or ends.
fn support(shape: &WorldShape, direction: Vec2) -> f32 {
    let furthest = |points: &[Vec2]| {
        points
            .iter()
            .map(|point| point.dot(direction))
            .fold(f32::NEG_INFINITY, f32::max)
    };
    match shape {
        WorldShape::Rect(r) => furthest(&r.corners()),
        WorldShape::RotatedRect(r) => furthest(&r.corners()),
        WorldShape::Circle(c) => c.center.dot(direction) + c.radius,
        WorldShape::Capsule(c) => furthest(&c.ends()) + c.radius,
        WorldShape::Polygon(p) => furthest(p.vertices()),
    }
}

/// The depth of two overlapping convex shapes as the least, over directions, of how far `a`
/// reaches along one plus how far `b` reaches against it: the shortest move of `b` that separates
/// them. The directions are sampled every tenth of a degree, and the best few refined by ternary
/// search.
fn support_depth(a: &WorldShape, b: &WorldShape) -> f32 {
    let sum = |angle: f64| {
        let direction = Vec2::new(angle.cos() as f32, angle.sin() as f32);
        f64::from(support(a, direction) + support(b, -direction))
    };
    let step = std::f64::consts::TAU / 3600.0;
    let mut samples: Vec<(f64, f64)> = (0..3600)
        .map(|k| {
            let angle = k as f64 * step;
            (sum(angle), angle)
        })
        .collect();
    samples.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut best = f64::INFINITY;
    for &(_, angle) in samples.iter().take(8) {
        let (mut low, mut high) = (angle - step, angle + step);
        for _ in 0..60 {
            let (third_low, third_high) = (low + (high - low) / 3.0, high - (high - low) / 3.0);
            if sum(third_low) <= sum(third_high) {
                high = third_high;
            } else {
                low = third_low;
            }
        }
        best = best.min(sum(low)).min(sum(angle));
    }
    best as f32
}

/// `cases` cases from a fixed seed: every run, on every machine, tests the same cases, so CI is
/// reproducible. Change the seed to explore new cases.
fn seeded_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5eed_0ac1e),
        ..ProptestConfig::default()
    }
}

fn oracle_config() -> ProptestConfig {
    seeded_config(ORACLE_CASES)
}

proptest! {
    #![proptest_config(oracle_config())]

    #[test]
    fn rect_rect_agrees_with_parry(a in shape(Kind::Rect), b in shape(Kind::Rect)) {
        agree_with_parry(&a, &b)?;
    }

    #[test]
    fn rotated_rect_rect_agrees_with_parry(a in shape(Kind::RotatedRect), b in shape(Kind::Rect)) {
        agree_with_parry(&a, &b)?;
    }

    #[test]
    fn rotated_rect_rotated_rect_agrees_with_parry(
        a in shape(Kind::RotatedRect),
        b in shape(Kind::RotatedRect),
    ) {
        agree_with_parry(&a, &b)?;
    }

    #[test]
    fn circle_rect_agrees_with_parry(a in shape(Kind::Circle), b in shape(Kind::Rect)) {
        agree_with_parry(&a, &b)?;
    }

    #[test]
    fn circle_rotated_rect_agrees_with_parry(a in shape(Kind::Circle), b in shape(Kind::RotatedRect)) {
        agree_with_parry(&a, &b)?;
    }

    #[test]
    fn circle_circle_agrees_with_parry(a in shape(Kind::Circle), b in shape(Kind::Circle)) {
        agree_with_parry(&a, &b)?;
    }
}

/// A test against parry2d of each pair with a capsule or a polygon, in both argument orders, at
/// [`ORACLE_CASES`] cases each.
macro_rules! rounded_pairs_agree_with_parry {
    ($($name:ident: $a:ident with $b:ident;)*) => {
        proptest! {
            #![proptest_config(oracle_config())]
            $(
                #[test]
                fn $name(a in shape(Kind::$a), b in shape(Kind::$b)) {
                    agree_with_parry(&a, &b)?;
                    agree_with_parry(&b, &a)?;
                }
            )*
        }
    };
}

rounded_pairs_agree_with_parry! {
    capsule_rect_agrees_with_parry: Capsule with Rect;
    capsule_rotated_rect_agrees_with_parry: Capsule with RotatedRect;
    capsule_circle_agrees_with_parry: Capsule with Circle;
    capsule_capsule_agrees_with_parry: Capsule with Capsule;
    capsule_polygon_agrees_with_parry: Capsule with Polygon;
    polygon_rect_agrees_with_parry: Polygon with Rect;
    polygon_rotated_rect_agrees_with_parry: Polygon with RotatedRect;
    polygon_circle_agrees_with_parry: Polygon with Circle;
    polygon_polygon_agrees_with_parry: Polygon with Polygon;
}

/// The alternative of the Unity tutorial "Are two rectangles with orientation in 2D space intersecting?": a rectangle is two triangles, and two rectangles meet when any of the four
/// triangle pairs does. Triangles are tested by separating axes in f64, a different precision and a
/// different decomposition from the crate's code.
mod triangles {
    use super::DVec2;

    fn project(points: &[DVec2], axis: DVec2) -> (f64, f64) {
        points
            .iter()
            .map(|p| p.dot(axis))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    }

    fn separated_by_an_edge_of(first: &[DVec2; 3], second: &[DVec2; 3]) -> bool {
        (0..3).any(|i| {
            let edge = first[(i + 1) % 3] - first[i];
            let axis = DVec2::new(-edge.y, edge.x);
            let (a_lo, a_hi) = project(first, axis);
            let (b_lo, b_hi) = project(second, axis);
            a_hi < b_lo || b_hi < a_lo
        })
    }

    fn triangles_meet(a: &[DVec2; 3], b: &[DVec2; 3]) -> bool {
        !separated_by_an_edge_of(a, b) && !separated_by_an_edge_of(b, a)
    }

    /// Whether two rectangles, given by their corners in order, meet.
    pub fn rectangles_meet(a: [DVec2; 4], b: [DVec2; 4]) -> bool {
        let split = |r: [DVec2; 4]| [[r[0], r[1], r[2]], [r[0], r[2], r[3]]];
        split(a)
            .iter()
            .any(|ta| split(b).iter().any(|tb| triangles_meet(ta, tb)))
    }
}

fn corners_f64(shape: &WorldShape) -> [DVec2; 4] {
    shape.corners().expect("a rectangle").map(|c| c.as_dvec2())
}

fn rectangle(kind_rotated: bool) -> impl Strategy<Value = WorldShape> {
    shape(if kind_rotated {
        Kind::RotatedRect
    } else {
        Kind::Rect
    })
}

proptest! {
    #![proptest_config(seeded_config(20_000))]

    #[test]
    fn rectangle_pairs_agree_with_the_triangle_split(
        a_rotated in any::<bool>(),
        b_rotated in any::<bool>(),
        (a, b) in (rectangle(true), rectangle(true)),
        (c, d) in (rectangle(false), rectangle(false)),
    ) {
        let a = if a_rotated { a } else { c };
        let b = if b_rotated { b } else { d };
        prop_assume!(parry_signed_distance(&a, &b).abs() >= TOUCH_BAND);
        prop_assert_eq!(
            a.intersects(&b, OverlapMode::Closed),
            triangles::rectangles_meet(corners_f64(&a), corners_f64(&b)),
            "SAT and the triangle split disagree"
        );
    }
}

fn any_shape() -> impl Strategy<Value = WorldShape> {
    prop_oneof![
        shape(Kind::Rect),
        shape(Kind::RotatedRect),
        shape(Kind::Circle),
        shape(Kind::Capsule),
        shape(Kind::Polygon),
    ]
}

proptest! {
    #![proptest_config(seeded_config(20_000))]

    #[test]
    fn boolean_test_is_symmetric_and_agrees_with_contact(a in any_shape(), b in any_shape()) {
        for mode in [OverlapMode::Closed, OverlapMode::InteriorOnly] {
            let hit = a.intersects(&b, mode);
            prop_assert_eq!(hit, b.intersects(&a, mode), "not symmetric in {:?}", mode);
            prop_assert_eq!(hit, a.contact(&b, mode).is_some(), "boolean and contact disagree in {:?}", mode);
            prop_assert_eq!(hit, b.contact(&a, mode).is_some(), "boolean and mirrored contact disagree in {:?}", mode);
        }
    }

    #[test]
    fn interior_only_never_collides_where_closed_does_not(a in any_shape(), b in any_shape()) {
        if a.intersects(&b, OverlapMode::InteriorOnly) {
            prop_assert!(a.intersects(&b, OverlapMode::Closed));
        }
    }

    #[test]
    fn translation_does_not_change_the_answer(
        a in any_shape(),
        b in any_shape(),
        (tx, ty) in (-100.0f32..100.0, -100.0f32..100.0),
    ) {
        prop_assume!(parry_signed_distance(&a, &b).abs() >= 1e-3);
        let shift = Vec2::new(tx, ty);
        let moved = |shape: &WorldShape| shape.translated(shift);
        prop_assert_eq!(
            a.intersects(&b, OverlapMode::Closed),
            moved(&a).intersects(&moved(&b), OverlapMode::Closed)
        );
    }

    #[test]
    fn contact_normal_and_depth_separate_the_shapes(a in any_shape(), b in any_shape()) {
        let Some(contact) = a.contact(&b, OverlapMode::Closed) else {
            return Ok(());
        };
        prop_assert!((contact.normal.length() - 1.0).abs() < 1e-4, "normal not unit: {:?}", contact.normal);
        prop_assert!(contact.depth >= 0.0);
        let shifted = |distance: f32| b.translated(contact.normal * distance);
        // Moved by the depth, they touch: no overlap left beyond rounding.
        let touching = shifted(contact.depth);
        let remaining = a.contact(&touching, OverlapMode::Closed).map_or(0.0, |c| c.depth);
        prop_assert!(remaining <= 1e-3, "still {} deep after moving by the depth", remaining);
        // Moved a little further, they are apart.
        let apart = shifted(contact.depth + 1e-2);
        prop_assert!(!a.intersects(&apart, OverlapMode::Closed), "not apart after moving past the depth");
    }
}

/// Shape casts against parry2d's `cast_shapes`: the moving shape cast along a unit direction, so that
/// parry2d's time of impact is our distance.
mod casts {
    use super::*;
    use parry2d::query::{ShapeCastHit, ShapeCastOptions};

    /// How far `shape` reaches along the unit `direction`.
    fn reach(shape: &WorldShape, direction: Vec2) -> f32 {
        shape.extent_along(direction).y
    }

    /// How far apart the two answers may lie, for shapes of this size: 1e-4 of it.
    fn tolerance(a: &WorldShape, b: &WorldShape) -> f32 {
        let size = |shape: &WorldShape| {
            let aabb = shape.aabb();
            (aabb.max - aabb.min).length()
        };
        1e-4 * (1.0 + size(a) + size(b))
    }

    /// parry2d's cast of `moving` along `direction` against `target`, `moving` shrunk by `inset`
    /// on every side.
    fn parry_cast(
        moving: &WorldShape,
        direction: Dir2,
        max_distance: f32,
        target: &WorldShape,
        inset: f32,
    ) -> Option<ShapeCastHit> {
        let (target_pose, target_shape) = to_parry(target);
        let (moving_pose, _) = to_parry(moving);
        let moving_shape: Box<dyn Shape> = match moving {
            WorldShape::Circle(c) => Box::new(Ball::new(c.radius - inset)),
            WorldShape::Rect(r) => Box::new(Cuboid::new(r.half_size - inset)),
            WorldShape::RotatedRect(r) => Box::new(Cuboid::new(r.half_size - inset)),
            WorldShape::Capsule(c) => Box::new(Capsule::new_y(c.half_length, c.radius - inset)),
            WorldShape::Polygon(p) => {
                // Each vertex drawn toward the centre by the inset: inside the polygon, within
                // the inset of it.
                let center = p.center();
                let shrunk = p
                    .vertices()
                    .iter()
                    .map(|v| *v - (*v - center).normalize_or_zero() * inset)
                    .collect();
                Box::new(ParryPolygon::from_convex_polyline_unmodified(shrunk).expect("convex"))
            }
        };
        // The target still, the cast shape second: parry2d moves the second relative to the first.
        query::cast_shapes(
            &target_pose,
            Vec2::ZERO,
            &*target_shape,
            &moving_pose,
            *direction,
            &*moving_shape,
            ShapeCastOptions::with_max_time_of_impact(max_distance),
        )
        .expect("supported shapes")
    }

    /// How far apart parry2d finds `moving`, moved by `distance` along `direction`, and `target`:
    /// zero where they touch or overlap. parry2d 0.27's `distance` between two cuboids can depend on
    /// their order (a box 0.65 below another is 1.71 from it in one order), so for two boxes this is
    /// the least of both orders and of `contact`'s distance; other pairs are measured by
    /// [`parry_gap`].
    fn gap_at(moving: &WorldShape, direction: Dir2, distance: f32, target: &WorldShape) -> f32 {
        let moved = moving.translated(*direction * distance);
        let boxes =
            |shape: &WorldShape| matches!(shape, WorldShape::Rect(_) | WorldShape::RotatedRect(_));
        if !(boxes(moving) && boxes(target)) {
            return parry_gap(&moved, target)
                .min(parry_gap(target, &moved))
                .max(0.0);
        }
        let (a_pose, a) = to_parry(&moved);
        let (b_pose, b) = to_parry(target);
        let ab = query::distance(&a_pose, &*a, &b_pose, &*b).expect("supported shapes");
        let ba = query::distance(&b_pose, &*b, &a_pose, &*a).expect("supported shapes");
        let contact = query::contact(&a_pose, &*a, &b_pose, &*b, ab.min(ba))
            .expect("supported shapes")
            .map_or(f32::INFINITY, |contact| contact.dist.max(0.0));
        ab.min(ba).min(contact)
    }

    /// How far `point` lies from `shape`, by parry2d.
    fn parry_distance_to(shape: &WorldShape, point: Vec2) -> f32 {
        let (pose, parry_shape) = to_parry(shape);
        parry_shape.distance_to_point(&pose, point, true)
    }

    /// Our cast against parry2d on one case. parry2d's cast stops short of contact, by up to about
    /// 1e-3 on these shapes, so our distance is checked by parry2d's distance query: the shapes touch
    /// there, within the tolerance, and are apart the tolerance before, so that no earlier contact
    /// was missed (the distances at which two convex shapes moving in a line touch form one
    /// interval). Where parry2d's cast hits and ours does not, the cast must graze, or touch only
    /// past the reach.
    pub fn agree(
        moving: &WorldShape,
        direction: Dir2,
        max_distance: f32,
        target: &WorldShape,
    ) -> Result<(), TestCaseError> {
        let band = tolerance(moving, target);
        let theirs = parry_cast(moving, direction, max_distance, target, 0.0);
        let Some(hit) = shape_cast(moving, direction, max_distance, target) else {
            if let Some(theirs) = theirs {
                let grazes = parry_cast(moving, direction, max_distance, target, band).is_none();
                let past_the_reach = theirs.time_of_impact >= max_distance - 100.0 * band
                    && gap_at(moving, direction, max_distance, target) > 0.0;
                prop_assert!(
                    grazes || past_the_reach,
                    "no hit where parry2d finds one at {}, deeper than a graze",
                    theirs.time_of_impact
                );
            }
            return Ok(());
        };
        let gap = gap_at(moving, direction, hit.distance, target);
        prop_assert!(
            gap <= band,
            "a hit at {} where the shapes are {} apart",
            hit.distance,
            gap
        );
        prop_assert!((hit.normal.length() - 1.0).abs() <= 1e-4, "a unit normal");
        if hit.distance > band {
            let before = gap_at(moving, direction, hit.distance - band, target);
            prop_assert!(
                before > 0.0,
                "the shapes touch before the hit at {} (gap {} at {})",
                hit.distance,
                before,
                hit.distance - band
            );
            let moved = moving.translated(*direction * hit.distance);
            for shape in [target, &moved] {
                let off = parry_distance_to(shape, hit.point);
                prop_assert!(
                    off <= band,
                    "the point {:?} lies {} off a shape",
                    hit.point,
                    off
                );
            }
            // At first contact the normal faces the motion, and the line through the point across
            // it lies between the shapes: the target behind it, the cast shape ahead.
            prop_assert!(
                hit.normal.dot(*direction) <= 1e-4,
                "the normal faces the cast"
            );
            let at = hit.point.dot(hit.normal);
            prop_assert!(
                reach(target, hit.normal) <= at + band,
                "the target behind the line"
            );
            prop_assert!(
                -reach(&moved, -hit.normal) >= at - band,
                "the cast shape ahead of it"
            );
        }
        Ok(())
    }
}

/// A random unit direction; one case in three along a multiple of 45°, where sides run parallel.
fn direction() -> impl Strategy<Value = Dir2> {
    (
        0u32..3,
        0u32..8,
        -std::f32::consts::PI..std::f32::consts::PI,
    )
        .prop_map(|(snap, k, angle)| {
            let angle = if snap == 0 {
                k as f32 * std::f32::consts::FRAC_PI_4
            } else {
                angle
            };
            Dir2::from_xy(angle.cos(), angle.sin()).expect("a unit direction")
        })
}

/// A random shape of `kind`; one rectangle or capsule in three turned by a multiple of 45°, as
/// `direction` is.
fn cast_shape(kind: Kind) -> impl Strategy<Value = WorldShape> {
    (shape(kind), 0u32..3, 0u32..8).prop_map(|(shape, snap, k)| match shape {
        WorldShape::RotatedRect(r) if snap == 0 => WorldRotatedRect::new(
            r.center,
            r.half_size,
            Rot2::radians(k as f32 * std::f32::consts::FRAC_PI_4),
        )
        .into(),
        WorldShape::Capsule(c) if snap == 0 => WorldCapsule::new(
            c.center,
            c.half_length,
            c.radius,
            Rot2::radians(k as f32 * std::f32::consts::FRAC_PI_4),
        )
        .into(),
        other => other,
    })
}

/// A test against parry2d of each kind cast against each, at [`ORACLE_CASES`] cases each.
macro_rules! casts_agree_with_parry {
    ($($name:ident: $moving:ident against $target:ident;)*) => {
        proptest! {
            #![proptest_config(oracle_config())]
            $(
                #[test]
                fn $name(
                    moving in cast_shape(Kind::$moving),
                    target in cast_shape(Kind::$target),
                    direction in direction(),
                    max_distance in 0.0f32..12.0,
                ) {
                    casts::agree(&moving, direction, max_distance, &target)?;
                }
            )*
        }
    };
}

casts_agree_with_parry! {
    rect_cast_at_rect_agrees_with_parry: Rect against Rect;
    rect_cast_at_rotated_rect_agrees_with_parry: Rect against RotatedRect;
    rect_cast_at_circle_agrees_with_parry: Rect against Circle;
    rotated_rect_cast_at_rect_agrees_with_parry: RotatedRect against Rect;
    rotated_rect_cast_at_rotated_rect_agrees_with_parry: RotatedRect against RotatedRect;
    rotated_rect_cast_at_circle_agrees_with_parry: RotatedRect against Circle;
    circle_cast_at_rect_agrees_with_parry: Circle against Rect;
    circle_cast_at_rotated_rect_agrees_with_parry: Circle against RotatedRect;
    circle_cast_at_circle_agrees_with_parry: Circle against Circle;
    capsule_cast_at_rect_agrees_with_parry: Capsule against Rect;
    capsule_cast_at_rotated_rect_agrees_with_parry: Capsule against RotatedRect;
    capsule_cast_at_circle_agrees_with_parry: Capsule against Circle;
    capsule_cast_at_capsule_agrees_with_parry: Capsule against Capsule;
    capsule_cast_at_polygon_agrees_with_parry: Capsule against Polygon;
    polygon_cast_at_rect_agrees_with_parry: Polygon against Rect;
    polygon_cast_at_rotated_rect_agrees_with_parry: Polygon against RotatedRect;
    polygon_cast_at_circle_agrees_with_parry: Polygon against Circle;
    polygon_cast_at_capsule_agrees_with_parry: Polygon against Capsule;
    polygon_cast_at_polygon_agrees_with_parry: Polygon against Polygon;
    rect_cast_at_capsule_agrees_with_parry: Rect against Capsule;
    rect_cast_at_polygon_agrees_with_parry: Rect against Polygon;
    rotated_rect_cast_at_capsule_agrees_with_parry: RotatedRect against Capsule;
    rotated_rect_cast_at_polygon_agrees_with_parry: RotatedRect against Polygon;
    circle_cast_at_capsule_agrees_with_parry: Circle against Capsule;
    circle_cast_at_polygon_agrees_with_parry: Circle against Polygon;
}

/// Rays against parry2d's `cast_ray`, every kind: where both hit, at the same distance; where one
/// hits and the other does not, the ray grazes the shape (rays beside it, a tolerance either way,
/// do not agree with each other by parry2d) or meets it at its reach.
mod rays {
    use super::*;
    use parry2d::query::Ray;

    /// parry2d's distance along `ray` to `shape` within `reach`, `origin` moved by `offset`.
    fn parry_ray(shape: &WorldShape, origin: Vec2, direction: Dir2, reach: f32) -> Option<f32> {
        let (pose, parry_shape) = to_parry(shape);
        parry_shape.cast_ray(&pose, &Ray::new(origin, *direction), reach, true)
    }

    pub fn agree(
        shape: &WorldShape,
        origin: Vec2,
        direction: Dir2,
        reach: f32,
    ) -> Result<(), TestCaseError> {
        let size = (shape.aabb().max - shape.aabb().min).length();
        let band = 1e-4 * (1.0 + size + origin.length());
        let ours = ray_cast(shape, bevy::math::Ray2d::new(origin, direction), reach);
        let theirs = parry_ray(shape, origin, direction, reach);
        match (ours, theirs) {
            (Some(hit), Some(distance)) => {
                // parry2d's ray against a capsule can be off by thousandths (1.9115 for 1.9146):
                // where it disagrees, the ray must reach the surface at our distance and not a
                // tolerance before, by the point's distance to the shape.
                let point = |t: f32| origin + *direction * t;
                let touches_there = hit.distance == 0.0
                    || (distance_to(shape, point(hit.distance)).abs() <= f64::from(band)
                        && distance_to(shape, point(hit.distance - band)) > 0.0);
                prop_assert!(
                    (hit.distance - distance).abs() <= band || touches_there,
                    "a hit at {} where parry2d finds {}",
                    hit.distance,
                    distance
                );
                prop_assert!((hit.normal.length() - 1.0).abs() <= 1e-4, "a unit normal");
                prop_assert!(
                    hit.normal.dot(*direction) <= 1e-4,
                    "the normal faces the ray"
                );
            }
            (None, None) => {}
            (ours, theirs) => {
                let beside = direction.perp() * band;
                let left = parry_ray(shape, origin + beside, direction, reach + band).is_some();
                let right = parry_ray(shape, origin - beside, direction, reach + band).is_some();
                let at_the_reach = ours
                    .map_or(f32::INFINITY, |hit| hit.distance)
                    .min(theirs.unwrap_or(f32::INFINITY))
                    >= reach - band;
                prop_assert!(
                    left != right
                        || at_the_reach
                        || parry_ray(shape, origin, direction, reach + band).is_some()
                            != theirs.is_some(),
                    "ours {:?}, parry2d's {:?}, and the ray does not graze",
                    ours,
                    theirs
                );
            }
        }
        Ok(())
    }
}

/// A test against parry2d of rays against each kind.
macro_rules! rays_agree_with_parry {
    ($($name:ident: $kind:ident;)*) => {
        proptest! {
            #![proptest_config(seeded_config(20_000))]
            $(
                #[test]
                fn $name(
                    shape in cast_shape(Kind::$kind),
                    (x, y) in (-8.0f32..8.0, -8.0f32..8.0),
                    direction in direction(),
                    reach in 0.0f32..16.0,
                ) {
                    rays::agree(&shape, Vec2::new(x, y), direction, reach)?;
                }
            )*
        }
    };
}

rays_agree_with_parry! {
    rays_at_rects_agree_with_parry: Rect;
    rays_at_rotated_rects_agree_with_parry: RotatedRect;
    rays_at_circles_agree_with_parry: Circle;
    rays_at_capsules_agree_with_parry: Capsule;
    rays_at_polygons_agree_with_parry: Polygon;
}
