//! Every shape as a convex polygon grown by a radius, and the tests between any two such shapes: a
//! circle is a point grown by its radius, a capsule a segment grown by its radius, a rectangle or a
//! polygon its vertices grown by nothing. As Box2D's `b2CollidePolygons` and `b2CollideCapsules`
//! do, the cores are tested by the separating axis test on their edge normals ("Rectangle
//! Intersection Test (with C#)" notes it holds for any convex polygon), and where the cores are apart,
//! by the distance between their closest points against the sum of the radii.
//!
//! The pairs of rectangles and circles keep their own tests; these serve every pair with a capsule or
//! a polygon, and the casts of such pairs.

use bevy::math::{Dir2, Ray2d, Rot2, Vec2};

use super::direction::direction_and_length;
use super::ray::{RayHit, ray_cast_box, ray_cast_circle};
use super::shapes::{MAX_POLYGON_VERTICES, hull_into};
use super::{Contact, OverlapMode, WorldShape};

/// The most points a core holds: the Minkowski difference of two polygons of the most vertices.
const MAX_POINTS: usize = 2 * MAX_POLYGON_VERTICES;

/// A convex polygon of one to `N` points, counter-clockwise, grown by `radius`: one point is a
/// disc, two a capsule. A shape's core has room for a polygon's vertices; the Minkowski difference of
/// two shapes' cores, for [`MAX_POINTS`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct RoundedPolygon<const N: usize = MAX_POLYGON_VERTICES> {
    points: [Vec2; N],
    count: usize,
    radius: f32,
}

impl<const N: usize> RoundedPolygon<N> {
    fn new(core: &[Vec2], radius: f32) -> Self {
        let mut points = [Vec2::ZERO; N];
        points[..core.len()].copy_from_slice(core);
        Self {
            points,
            count: core.len(),
            radius,
        }
    }

    /// The core's points.
    pub(crate) fn core(&self) -> &[Vec2] {
        &self.points[..self.count]
    }

    /// The radius the core is grown by.
    pub(crate) fn radius(&self) -> f32 {
        self.radius
    }

    /// Each edge of the core as its start, its end and its unit outward normal: none for a point,
    /// both sides of a segment. An edge of no length has no normal and is left out.
    fn faces(&self) -> impl Iterator<Item = (Vec2, Vec2, Vec2)> + '_ {
        let count = if self.count < 2 { 0 } else { self.count };
        (0..count).filter_map(move |i| {
            let (from, to) = (self.points[i], self.points[(i + 1) % self.count]);
            let edge = to - from;
            // Counter-clockwise, the outside is to the right of each edge.
            let (normal, _) = direction_and_length(Vec2::new(edge.y, -edge.x))?;
            Some((from, to, normal))
        })
    }

    /// Each edge of the core as its two ends: none for a point, one for a segment.
    fn edges(&self) -> impl Iterator<Item = (Vec2, Vec2)> + '_ {
        let count = match self.count {
            0 | 1 => 0,
            2 => 1,
            count => count,
        };
        (0..count).map(move |i| (self.points[i], self.points[(i + 1) % self.count]))
    }
}

impl RoundedPolygon {
    /// The shape as a core and a radius.
    pub(crate) fn of(shape: &WorldShape) -> Self {
        match shape {
            WorldShape::Rect(rect) => Self::new(&rect.corners(), 0.0),
            WorldShape::RotatedRect(rect) => Self::new(&rect.corners(), 0.0),
            WorldShape::Circle(circle) => Self::new(&[circle.center], circle.radius),
            WorldShape::Capsule(capsule) if capsule.half_length > 0.0 => {
                Self::new(&capsule.ends(), capsule.radius)
            }
            WorldShape::Capsule(capsule) => Self::new(&[capsule.center], capsule.radius),
            WorldShape::Polygon(polygon) => Self::new(polygon.vertices(), 0.0),
        }
    }
}

/// The greatest separation of `b`'s core from one of `a`'s core's edges, with that edge's outward
/// normal: negative infinity where `a`'s core has no edge. It stops at the first separation past
/// `beyond`, where the caller knows enough.
fn max_separation(a: &RoundedPolygon, b: &RoundedPolygon, beyond: f32) -> (f32, Vec2) {
    let mut best = (f32::NEG_INFINITY, Vec2::ZERO);
    for (from, _, normal) in a.faces() {
        let nearest = (b.core().iter())
            .map(|point| normal.dot(*point))
            .fold(f32::INFINITY, f32::min);
        let separation = nearest - normal.dot(from);
        if separation > best.0 {
            best = (separation, normal);
            if separation > beyond {
                break;
            }
        }
    }
    best
}

/// The point of the segment from `start` to `end` closest to `point`.
fn closest_on_segment(point: Vec2, start: Vec2, end: Vec2) -> Vec2 {
    let edge = end - start;
    let length_squared = edge.length_squared();
    if length_squared == 0.0 {
        return start;
    }
    start + edge * ((point - start).dot(edge) / length_squared).clamp(0.0, 1.0)
}

/// The closest points of two cores, the first on `a`'s: between convex cores that do not overlap,
/// they are a vertex of one and a point on an edge of the other, or two vertices.
fn closest_points(a: &RoundedPolygon, b: &RoundedPolygon) -> (Vec2, Vec2) {
    let mut best = (
        a.points[0].distance_squared(b.points[0]),
        a.points[0],
        b.points[0],
    );
    let mut offer = |on_a: Vec2, on_b: Vec2| {
        let distance_squared = on_a.distance_squared(on_b);
        if distance_squared < best.0 {
            best = (distance_squared, on_a, on_b);
        }
    };
    for &point in a.core() {
        for (start, end) in b.edges() {
            offer(point, closest_on_segment(point, start, end));
        }
    }
    for &point in b.core() {
        for (start, end) in a.edges() {
            offer(closest_on_segment(point, start, end), point);
        }
    }
    (best.1, best.2)
}

/// The contact of two rounded polygons, the normal from `a` to `b`, or `None` where they do not
/// collide in `mode`.
///
/// The separating axis test on both cores' edge normals gives their greatest separation. Where it is
/// not positive the cores overlap or touch, and that axis is the one of least penetration; the
/// rounding adds the radii to the depth. Where it is positive it is no more than the cores' distance,
/// so beyond the radii the shapes are apart, and within them the closest points decide. Between two
/// cores of at most two points each (points and segments) the edge normals are not every axis that
/// may separate them: unless two segments cross, their closest points decide.
pub(crate) fn contact(
    a: &RoundedPolygon,
    b: &RoundedPolygon,
    mode: OverlapMode,
) -> Option<Contact> {
    // Taken in one order whichever comes first, so that swapping the shapes only flips the normal,
    // down to the rounding of the tiniest shapes.
    if comes_first(b, a) {
        return contact_in_order(b, a, mode).map(Contact::flipped);
    }
    contact_in_order(a, b, mode)
}

/// Whether `a` comes before `b` in an order of rounded polygons: by their numbers of points, then
/// their points, then their radii.
fn comes_first(a: &RoundedPolygon, b: &RoundedPolygon) -> bool {
    if a.count != b.count {
        return a.count < b.count;
    }
    fn numbers(shape: &RoundedPolygon) -> impl Iterator<Item = f32> + '_ {
        let points = shape.core().iter().flat_map(|point| [point.x, point.y]);
        points.chain([shape.radius])
    }
    (numbers(a).zip(numbers(b)))
        .map(|(x, y)| x.total_cmp(&y))
        .find(|order| order.is_ne())
        .is_some_and(core::cmp::Ordering::is_lt)
}

/// [`contact`] with the shapes in the order given.
fn contact_in_order(a: &RoundedPolygon, b: &RoundedPolygon, mode: OverlapMode) -> Option<Contact> {
    let polygons = both_polygons(a, b);
    if polygons && polygons_apart(a, b, mode) {
        return None;
    }
    let radius = a.radius + b.radius;
    let apart = |on_a: Vec2, on_b: Vec2| {
        let (normal, distance) = direction_and_length(on_b - on_a).unwrap_or((Vec2::X, 0.0));
        let depth = radius - distance;
        mode.admits(depth).then(|| Contact {
            normal,
            depth: depth.max(0.0),
        })
    };
    // A separation past the radii settles it: the shapes are apart.
    let (from_a, normal_a) = max_separation(a, b, radius);
    if from_a > radius && !polygons {
        return None;
    }
    let (from_b, normal_b) = max_separation(b, a, radius);
    let (separation, normal) = if from_b > from_a {
        (from_b, -normal_b)
    } else {
        (from_a, normal_a)
    };
    if polygons {
        // Not apart by the signs of the separations: touching or overlapping, whatever the
        // rounding of the unit normals says. Polygons of no area (rectangles of no size) have no
        // edge normal to give.
        if separation == f32::NEG_INFINITY {
            return Some(Contact {
                normal: Vec2::X,
                depth: 0.0,
            });
        }
        let depth = (-separation).max(0.0);
        return Some(Contact { normal, depth });
    }
    if separation == f32::NEG_INFINITY && !polygons {
        // No edge normal on either side: cores of one point each, however many times it is listed
        // (a rectangle of no size, a capsule whose ends round to one point).
        let (on_a, on_b) = closest_points(a, b);
        return apart(on_a, on_b);
    }
    if a.count <= 2 && b.count <= 2 && separation <= 0.0 {
        // Two crossing segments overlap by their normals' test; otherwise points and segments on
        // one line overlap only where their closest points meet.
        let crossing = a.count == 2
            && b.count == 2
            && (a.points[1] - a.points[0]).perp_dot(b.points[1] - b.points[0]) != 0.0;
        let (on_a, on_b) = closest_points(a, b);
        if !crossing && (on_a != on_b || separation == f32::NEG_INFINITY) {
            return apart(on_a, on_b);
        }
    }
    if separation <= 0.0 {
        let depth = radius - separation;
        return mode.admits(depth).then_some(Contact { normal, depth });
    }
    if separation > radius {
        return None;
    }
    let (on_a, on_b) = closest_points(a, b);
    apart(on_a, on_b)
}

/// Whether two polygons grown by nothing are apart in `mode`: separated along an edge's unscaled
/// normal, beyond it or on it where touching does not count. Only the sign of each edge's separation
/// counts, which needs no square root (the `shape_polygon_polygon` group of the `narrow_phase`
/// bench); [`contact`] asks it too, so that the two always agree.
fn polygons_apart(a: &RoundedPolygon, b: &RoundedPolygon, mode: OverlapMode) -> bool {
    let separated = |a: &RoundedPolygon, b: &RoundedPolygon| {
        (0..a.count).any(|i| {
            let (from, to) = (a.points[i], a.points[(i + 1) % a.count]);
            let normal = Vec2::new(to.y - from.y, from.x - to.x);
            let nearest = (b.core().iter())
                .map(|point| normal.dot(*point))
                .fold(f32::INFINITY, f32::min);
            !mode.admits(normal.dot(from) - nearest)
        })
    };
    separated(a, b) || separated(b, a)
}

/// Whether both are polygons grown by nothing, for [`polygons_apart`].
fn both_polygons(a: &RoundedPolygon, b: &RoundedPolygon) -> bool {
    a.radius == 0.0 && b.radius == 0.0 && a.count >= 3 && b.count >= 3
}

/// Whether two rounded polygons collide in `mode`: [`contact`]'s answer.
pub(crate) fn intersects(a: &RoundedPolygon, b: &RoundedPolygon, mode: OverlapMode) -> bool {
    if both_polygons(a, b) {
        return !polygons_apart(a, b, mode);
    }
    contact(a, b, mode).is_some()
}

/// Whether `point` lies in the rounded polygon, boundary included.
fn contains<const N: usize>(shape: &RoundedPolygon<N>, point: Vec2) -> bool {
    let inside_core = shape.count >= 3
        && shape
            .faces()
            .all(|(from, _, normal)| normal.dot(point - from) <= 0.0);
    if inside_core {
        return true;
    }
    let radius_squared = shape.radius * shape.radius;
    shape
        .core()
        .iter()
        .any(|corner| corner.distance_squared(point) <= radius_squared)
        || shape.edges().any(|(start, end)| {
            closest_on_segment(point, start, end).distance_squared(point) <= radius_squared
        })
}

/// Where `ray` first meets the rounded polygon, if it does. From outside, the ray meets the rim
/// before the core: the discs about the core's points and the rectangles over its edges, as deep as
/// the radius, of which the first hit is the shape's.
pub(crate) fn ray_cast<const N: usize>(shape: &RoundedPolygon<N>, ray: Ray2d) -> Option<RayHit> {
    if contains(shape, ray.origin) {
        return Some(RayHit {
            distance: 0.0,
            normal: -*ray.direction,
        });
    }
    if shape.radius == 0.0 {
        return ray_cast_polygon(shape, ray);
    }
    let mut best: Option<RayHit> = None;
    let mut offer = |hit: Option<RayHit>| {
        if let Some(hit) = hit
            && best.is_none_or(|best| hit.distance < best.distance)
        {
            best = Some(hit);
        }
    };
    for &point in shape.core() {
        offer(ray_cast_circle(point, shape.radius, ray));
    }
    for (from, to, normal) in shape.faces() {
        // The rectangle's x axis runs along the edge, its y axis along the normal.
        let along = Vec2::new(-normal.y, normal.x);
        let half_length = 0.5 * from.distance(to);
        let center = 0.5 * (from + to) + normal * (0.5 * shape.radius);
        // From its parts: `Rot2::from_sin_cos` asserts a unit length that rounding may miss.
        let rotation = Rot2 {
            cos: along.x,
            sin: along.y,
        };
        offer(ray_cast_box(
            center,
            Vec2::new(half_length, 0.5 * shape.radius),
            rotation,
            ray,
        ));
    }
    // Where a side's rectangle and a corner's disc are hit at the same distance, within rounding,
    // either may come first: the normal is taken from the closest point of the core instead, and
    // a side's normal wherever the side lies as close as a corner, within rounding, so that a flat
    // contact keeps its side's normal.
    let mut hit = best?;
    let point = ray.origin + *ray.direction * hit.distance;
    let closest = shape
        .edges()
        .map(|(start, end)| closest_on_segment(point, start, end))
        .chain([shape.points[0]])
        .min_by(|a, b| {
            a.distance_squared(point)
                .total_cmp(&b.distance_squared(point))
        })
        .unwrap_or(shape.points[0]);
    let least = closest.distance(point);
    let tolerance = 1e-5 * (1.0 + shape.radius);
    let side = shape.faces().find(|&(from, to, normal)| {
        let along = (point - from).dot(to - from);
        along > 0.0
            && along < (to - from).length_squared()
            && normal.dot(point - from) <= least + tolerance
            && normal.dot(point - from) > 0.0
    });
    if let Some((_, _, normal)) = side {
        hit.normal = normal;
    } else if let Some((normal, _)) = direction_and_length(point - closest) {
        hit.normal = normal;
    }
    Some(hit)
}

/// Where `ray`, from outside, first meets a polygon of three or more points: the Cyrus–Beck clip of
/// the ray against each edge's half-plane.
fn ray_cast_polygon<const N: usize>(shape: &RoundedPolygon<N>, ray: Ray2d) -> Option<RayHit> {
    let direction = *ray.direction;
    let (mut enter, mut exit) = (f32::NEG_INFINITY, f32::INFINITY);
    let mut entry_normal = Vec2::ZERO;
    for (from, _, normal) in shape.faces() {
        // Inside the half-plane where `normal · (origin + t · direction - from) <= 0`.
        let outside = normal.dot(ray.origin - from);
        let closing = normal.dot(direction);
        if closing == 0.0 {
            if outside > 0.0 {
                return None;
            }
            continue;
        }
        let t = -outside / closing;
        if closing < 0.0 {
            if t > enter {
                enter = t;
                entry_normal = normal;
            }
        } else {
            exit = exit.min(t);
        }
    }
    (shape.count >= 3 && enter <= exit && exit >= 0.0).then(|| RayHit {
        distance: enter.max(0.0),
        normal: entry_normal,
    })
}

/// Where two rounded polygons that touch meet, where a radius rounds either: the point of `target`'s
/// rim over the closest point of its core to `other`'s. `None` where the cores overlap, or where
/// neither is rounded and a side may meet a side.
pub(crate) fn touching_point(target: &RoundedPolygon, other: &RoundedPolygon) -> Option<Vec2> {
    if target.radius == 0.0 && other.radius == 0.0 {
        return None;
    }
    let (on_target, on_other) = closest_points(target, other);
    let (normal, _) = direction_and_length(on_other - on_target)?;
    Some(on_target + normal * target.radius)
}

/// Where `moving`, moved along the unit `direction`, first touches `target`, both rounded polygons
/// that are apart at the start: the distance, and `target`'s normal there. The cast is a ray from
/// the origin against the Minkowski difference of the target's core and the moving one's, grown by
/// both radii: the offsets at which the shapes touch or overlap.
pub(crate) fn cast(
    moving: &RoundedPolygon,
    direction: Dir2,
    target: &RoundedPolygon,
) -> Option<(f32, Vec2)> {
    let mut differences = [Vec2::ZERO; MAX_POLYGON_VERTICES * MAX_POLYGON_VERTICES];
    let mut count = 0;
    for &b in target.core() {
        for &a in moving.core() {
            differences[count] = b - a;
            count += 1;
        }
    }
    let mut hull = [Vec2::ZERO; 2 * MAX_POLYGON_VERTICES * MAX_POLYGON_VERTICES + 1];
    let hull_count = hull_into(&mut differences[..count], &mut hull);
    // Sums of two polygons of at most `MAX_POLYGON_VERTICES` vertices have at most `MAX_POINTS`.
    let difference = RoundedPolygon::<MAX_POINTS>::new(
        &hull[..hull_count.min(MAX_POINTS)],
        moving.radius + target.radius,
    );
    let hit = ray_cast(&difference, Ray2d::new(Vec2::ZERO, direction))?;
    Some((hit.distance, hit.normal))
}

#[cfg(test)]
mod tests {
    use bevy::math::Rot2;

    use super::*;
    use crate::geometry::testing::{NEAR, angles, assert_collides};
    use crate::geometry::{ConvexPolygon, WorldCapsule, WorldCircle, WorldRect, WorldRotatedRect};

    /// A regular hexagon of circumradius `radius` about `center`, turned by `turn`.
    fn hexagon(center: Vec2, radius: f32, turn: Rot2) -> WorldShape {
        let corners: Vec<Vec2> = (0..6)
            .map(|k| {
                center + turn * Vec2::from_angle(k as f32 * core::f32::consts::FRAC_PI_3) * radius
            })
            .collect();
        ConvexPolygon::hull(&corners).expect("a hexagon").into()
    }

    /// An octagon 2 across, with flat sides along its turned axes: exact numbers where not turned.
    fn octagon(turn: Rot2) -> WorldShape {
        let corners = [
            (1.0, -0.5),
            (1.0, 0.5),
            (0.5, 1.0),
            (-0.5, 1.0),
            (-1.0, 0.5),
            (-1.0, -0.5),
            (-0.5, -1.0),
            (0.5, -1.0),
        ];
        let corners = corners.map(|(x, y)| turn * Vec2::new(x, y));
        ConvexPolygon::hull(&corners).expect("an octagon").into()
    }

    /// Half the extent of `shape` along the unit `direction`.
    fn reach(shape: &WorldShape, direction: Vec2) -> f32 {
        let extent = shape.extent_along(direction);
        0.5 * (extent.y - extent.x)
    }

    /// A capsule and an octagon, each against every kind placed beyond a flat side, both orders:
    /// apart by a hair, touching (exactly where the numbers are, at 0°), overlapping by a hair and
    /// deeply, and one inside the other, at 0°, 90°, 45° and an angle with no symmetry.
    #[test]
    fn capsules_and_polygons_against_every_kind_at_the_boundaries() {
        for (angle, turn) in angles() {
            let side = turn * Vec2::X;
            let firsts = [
                (
                    "capsule",
                    WorldShape::from(WorldCapsule::new(Vec2::ZERO, 2.0, 1.0, turn)),
                ),
                ("octagon", octagon(turn)),
            ];
            for (first_name, first) in firsts {
                let others = |at: Vec2| -> [(&str, WorldShape); 5] {
                    [
                        ("rect", WorldRect::new(at, Vec2::splat(0.5)).into()),
                        (
                            "rotated rect",
                            WorldRotatedRect::new(at, Vec2::new(0.5, 0.25), turn).into(),
                        ),
                        ("circle", WorldCircle::new(at, 0.5).into()),
                        ("capsule", WorldCapsule::new(at, 0.5, 0.25, turn).into()),
                        ("hexagon", hexagon(at, 0.5, turn)),
                    ]
                };
                for (index, (other_name, other)) in others(Vec2::ZERO).into_iter().enumerate() {
                    let touching_at = reach(&first, side) + reach(&other, side);
                    let case =
                        |what: &str| format!("{first_name} and {other_name} {what} at {angle}");
                    let placed = |distance: f32| others(side * distance)[index].1;
                    assert_collides(
                        first,
                        placed(touching_at + NEAR),
                        OverlapMode::Closed,
                        false,
                        &case("apart"),
                    );
                    if angle == "0°" {
                        assert_collides(
                            first,
                            placed(touching_at),
                            OverlapMode::Closed,
                            true,
                            &case("touching"),
                        );
                        assert_collides(
                            first,
                            placed(touching_at),
                            OverlapMode::InteriorOnly,
                            false,
                            &case("touching, interior only"),
                        );
                    }
                    for (what, distance) in [
                        ("overlapping by a hair", touching_at - NEAR),
                        ("overlapping deeply", 0.5 * touching_at),
                    ] {
                        let contact = assert_collides(
                            first,
                            placed(distance),
                            OverlapMode::Closed,
                            true,
                            &case(what),
                        )
                        .expect("a contact");
                        // The least move may leave a pointed side another way: never deeper.
                        let expected = touching_at - distance;
                        assert!(
                            contact.depth > 0.0 && contact.depth <= expected + 1e-5,
                            "{}: depth {} for at most {expected}",
                            case(what),
                            contact.depth,
                        );
                        assert!(
                            contact.normal.dot(side) > 0.0,
                            "{}: normal {}",
                            case(what),
                            contact.normal
                        );
                    }
                    assert_collides(
                        first,
                        other,
                        OverlapMode::InteriorOnly,
                        true,
                        &case("one inside the other"),
                    );
                }
            }
        }
    }

    /// A ray through a capsule's flat side and one through its rounded end, and a ray along a
    /// polygon's edge line that grazes its vertex.
    #[test]
    fn rays_meet_sides_ends_and_vertices() {
        let capsule =
            RoundedPolygon::of(&WorldCapsule::new(Vec2::ZERO, 2.0, 1.0, Rot2::IDENTITY).into());
        let flat = ray_cast(&capsule, Ray2d::new(Vec2::new(-5.0, 1.0), Dir2::X)).expect("a hit");
        assert_eq!((flat.distance, flat.normal), (4.0, -Vec2::X));
        let end = ray_cast(&capsule, Ray2d::new(Vec2::new(0.0, 10.0), Dir2::NEG_Y)).expect("a hit");
        assert_eq!((end.distance, end.normal), (7.0, Vec2::Y));
        let beside = ray_cast(&capsule, Ray2d::new(Vec2::new(1.0001, 10.0), Dir2::NEG_Y));
        assert!(beside.is_none());
        let inside = ray_cast(&capsule, Ray2d::new(Vec2::ZERO, Dir2::X)).expect("a hit");
        assert_eq!(inside.distance, 0.0);
        let triangle =
            ConvexPolygon::hull(&[Vec2::ZERO, Vec2::new(2.0, 0.0), Vec2::new(0.0, 2.0)]).unwrap();
        let polygon = RoundedPolygon::of(&triangle.into());
        let along_the_base =
            ray_cast(&polygon, Ray2d::new(Vec2::new(-3.0, 0.0), Dir2::X)).expect("a graze");
        assert_eq!(along_the_base.distance, 3.0);
        let past_the_corner = ray_cast(&polygon, Ray2d::new(Vec2::new(-3.0, -0.0001), Dir2::X));
        assert!(past_the_corner.is_none());
    }
}
