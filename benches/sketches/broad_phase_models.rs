//! Three broad phases for the boxes of W1 (`collision_bench`), on one thread, with std alone and
//! outside the crate, for what each costs an update on a machine: rows of sort and sweep refreshed
//! in place each update; a grid by counting sort of the boxes' lower corners; and fat AABBs whose
//! pairs are kept until one box in eight has left its fat AABB, then built anew.
//!
//! `rustc -O benches/sketches/broad_phase_models.rs -o /tmp/models && /tmp/models 10000`
//!
//! Not built by cargo: the figures it gives are in `docs/benchmarks.md`.

use std::time::Instant;
#[derive(Clone, Copy, Debug, Default)]
struct Aabb {
    min: [f32; 2],
    max: [f32; 2],
}
/// As large as the crate's entries in a row, whose id, flag and layers a sweep carries along.
#[derive(Clone, Copy, Debug, Default)]
#[allow(dead_code)]
struct Entry {
    aabb: Aabb,
    proxy: u32,
    changed: bool,
    layers: [u32; 2],
}
struct Rng(u64);
impl Rng {
    fn f(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
    fn r(&mut self, a: f32, b: f32) -> f32 {
        a + (b - a) * self.f()
    }
}
fn ov(a: &Aabb, b: &Aabb) -> bool {
    a.min[0] <= b.max[0] && b.min[0] <= a.max[0] && a.min[1] <= b.max[1] && b.min[1] <= a.max[1]
}
fn floor_row(s: f32) -> i32 {
    let t = s as i32;
    t.saturating_sub(i32::from(s < t as f32))
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(10000);
    let side = 4.0 * (n as f32).sqrt();
    let mut rng = Rng(0x1234_5678_9abc);
    let pos: Vec<[f32; 2]> = (0..n)
        .map(|_| [rng.r(-side / 2., side / 2.), rng.r(-side / 2., side / 2.)])
        .collect();
    let half: Vec<[f32; 2]> = (0..n)
        .map(|_| {
            let (w, h) = (rng.r(1., 3.), rng.r(1., 3.));
            let e = (w * w + h * h).sqrt() * 0.5;
            if rng.f() < 0.4 {
                [w / 2., h / 2.]
            } else {
                [e, e]
            }
        })
        .collect();
    let vel: Vec<[f32; 2]> = (0..n)
        .map(|_| [rng.r(-3., 3.) / 60., rng.r(-3., 3.) / 60.])
        .collect();
    let boxes = |pos: &Vec<[f32; 2]>| -> Vec<Aabb> {
        (0..n)
            .map(|i| Aabb {
                min: [pos[i][0] - half[i][0], pos[i][1] - half[i][1]],
                max: [pos[i][0] + half[i][0], pos[i][1] + half[i][1]],
            })
            .collect()
    };
    let step = |pos: &mut Vec<[f32; 2]>| {
        for i in 0..n {
            for k in 0..2 {
                pos[i][k] += vel[i][k];
                if pos[i][k].abs() > side / 2. {
                    pos[i][k] = -pos[i][k].signum() * side / 2. + pos[i][k] % 0.1;
                }
            }
        }
    };
    let frames = 200;
    // A: rows of sort and sweep, each row keeping its order from one update to the next.
    {
        let mut pos = pos.clone();
        let b = boxes(&pos);
        let mean_h: f32 = b.iter().map(|a| a.max[1] - a.min[1]).sum::<f32>() / n as f32;
        let height = 2.0 * mean_h;
        let inv = 1.0 / height;
        let first = floor_row((-side / 2. - 3.) * inv);
        let last = floor_row((side / 2. + 3.) * inv);
        let nrows = (last - first + 1) as usize;
        let mut rows: Vec<Vec<Entry>> = vec![Vec::new(); nrows];
        for (i, a) in b.iter().enumerate() {
            for r in floor_row(a.min[1] * inv)..=floor_row(a.max[1] * inv) {
                rows[(r - first) as usize].push(Entry {
                    aabb: *a,
                    proxy: i as u32,
                    changed: true,
                    layers: [1, 1],
                });
            }
        }
        for r in rows.iter_mut() {
            r.sort_by(|a, b| a.aabb.min[0].total_cmp(&b.aabb.min[0]));
        }
        let (mut t_ref, mut t_pairs, mut pairs_total, mut t_sort) = (0.0, 0.0, 0, 0.0);
        let mut arrivals: Vec<(u32, Entry)> = Vec::new();
        for f in 0..frames {
            step(&mut pos);
            let cur = boxes(&pos);
            let t = Instant::now();
            arrivals.clear();
            for (ri, row) in rows.iter_mut().enumerate() {
                let rr = first + ri as i32;
                row.retain_mut(|e| {
                    let now = cur[e.proxy as usize];
                    let (fr, to) = (floor_row(now.min[1] * inv), floor_row(now.max[1] * inv));
                    let (wf, wt) = (
                        floor_row(e.aabb.min[1] * inv),
                        floor_row(e.aabb.max[1] * inv),
                    );
                    if rr == wf {
                        for nr in fr..=to {
                            if nr < wf || nr > wt {
                                arrivals.push(((nr - first) as u32, *e));
                            }
                        }
                    }
                    let kept = fr <= rr && rr <= to;
                    if kept {
                        e.aabb = now;
                    }
                    kept
                });
            }
            let ts = Instant::now();
            for row in rows.iter_mut() {
                for k in 1..row.len() {
                    let x = row[k];
                    let mut at = k;
                    while at > 0 && row[at - 1].aabb.min[0] > x.aabb.min[0] {
                        row[at] = row[at - 1];
                        at -= 1;
                    }
                    row[at] = x;
                }
            }
            for (r, mut e) in arrivals.drain(..) {
                e.aabb = cur[e.proxy as usize];
                let row = &mut rows[r as usize];
                let at = row.partition_point(|x| x.aabb.min[0] < e.aabb.min[0]);
                row.insert(at, e);
            }
            let t2 = Instant::now();
            let mut pairs = 0;
            for (ri, row) in rows.iter().enumerate() {
                let rr = first + ri as i32;
                for (k, a) in row.iter().enumerate() {
                    for b in &row[k + 1..] {
                        if b.aabb.min[0] > a.aabb.max[0] {
                            break;
                        }
                        if a.aabb.min[1] <= b.aabb.max[1]
                            && b.aabb.min[1] <= a.aabb.max[1]
                            && floor_row(a.aabb.min[1].max(b.aabb.min[1]) * inv) == rr
                        {
                            pairs += 1;
                        }
                    }
                }
            }
            if f >= 20 {
                t_sort += (t2 - ts).as_secs_f64();
                t_ref += (t2 - t).as_secs_f64();
                t_pairs += t2.elapsed().as_secs_f64();
                pairs_total += pairs;
            }
        }
        let k = (frames - 20) as f64;
        println!(
            "rows: refresh {:.1} us (its sort {:.1} us), sweep {:.1} us, pairs a frame {:.0}",
            t_ref / k * 1e6,
            t_sort / k * 1e6,
            t_pairs / k * 1e6,
            pairs_total as f64 / k
        );
    }
    // B: a grid by counting sort of the lower corners, its cells as large as the largest box.
    {
        let mut pos = pos.clone();
        let (mut t_build, mut t_pairs, mut pairs_total) = (0.0, 0.0, 0);
        let mut counts: Vec<u32> = Vec::new();
        let mut sorted: Vec<(Aabb, u32)> = Vec::new();
        let mut cellof: Vec<u32> = vec![0; n];
        for f in 0..frames {
            step(&mut pos);
            let cur = boxes(&pos);
            let t = Instant::now();
            let mut lo = [f32::MAX; 2];
            let mut hi = [f32::MIN; 2];
            let mut big = 0.0f32;
            for a in &cur {
                for k in 0..2 {
                    lo[k] = lo[k].min(a.min[k]);
                    hi[k] = hi[k].max(a.min[k]);
                    big = big.max(a.max[k] - a.min[k]);
                }
            }
            let cell = big;
            let inv = 1.0 / cell;
            let nx = ((hi[0] - lo[0]) * inv) as usize + 1;
            let ny = ((hi[1] - lo[1]) * inv) as usize + 1;
            counts.clear();
            counts.resize(nx * ny + 1, 0);
            for (i, a) in cur.iter().enumerate() {
                let c =
                    ((a.min[1] - lo[1]) * inv) as usize * nx + ((a.min[0] - lo[0]) * inv) as usize;
                cellof[i] = c as u32;
                counts[c + 1] += 1;
            }
            for c in 1..counts.len() {
                counts[c] += counts[c - 1];
            }
            sorted.resize(n, (Aabb::default(), 0));
            let mut fill = counts.clone();
            for (i, a) in cur.iter().enumerate() {
                let c = cellof[i] as usize;
                sorted[fill[c] as usize] = (*a, i as u32);
                fill[c] += 1;
            }
            let t2 = Instant::now();
            let mut pairs = 0;
            for cy in 0..ny {
                for cx in 0..nx {
                    let c = cy * nx + cx;
                    let here = &sorted[counts[c] as usize..counts[c + 1] as usize];
                    for (k, a) in here.iter().enumerate() {
                        for b in &here[k + 1..] {
                            if ov(&a.0, &b.0) {
                                pairs += 1;
                            }
                        }
                    }
                    let mut nb = |ox: isize, oy: isize| {
                        let (x, y) = (cx as isize + ox, cy as isize + oy);
                        if x < 0 || y < 0 || x >= nx as isize || y >= ny as isize {
                            return;
                        }
                        let d = y as usize * nx + x as usize;
                        let there = &sorted[counts[d] as usize..counts[d + 1] as usize];
                        for a in here {
                            for b in there {
                                if ov(&a.0, &b.0) {
                                    pairs += 1;
                                }
                            }
                        }
                    };
                    nb(1, 0);
                    nb(-1, 1);
                    nb(0, 1);
                    nb(1, 1);
                }
            }
            if f >= 20 {
                t_build += (t2 - t).as_secs_f64();
                t_pairs += t2.elapsed().as_secs_f64();
                pairs_total += pairs;
            }
        }
        let k = (frames - 20) as f64;
        println!(
            "grid: build {:.1} us, search {:.1} us, pairs a frame {:.0}",
            t_build / k * 1e6,
            t_pairs / k * 1e6,
            pairs_total as f64 / k
        );
    }

    // C: fat AABBs, their pairs kept until one box in eight has left its fat AABB since the build.
    for margin in [0.1f32, 0.2, 0.4] {
        let mut pos = pos.clone();
        let mut fat: Vec<Aabb> = Vec::new();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let (
            mut t_total,
            mut t_max,
            mut builds,
            mut list_total,
            mut touching_total,
            mut escapes_total,
        ) = (0.0f64, 0.0f64, 0, 0usize, 0usize, 0usize);
        for f in 0..frames {
            step(&mut pos);
            let cur = boxes(&pos);
            let t = Instant::now();
            let out = cur
                .iter()
                .zip(&fat)
                .filter(|(a, b)| {
                    a.min[0] < b.min[0]
                        || a.min[1] < b.min[1]
                        || a.max[0] > b.max[0]
                        || a.max[1] > b.max[1]
                })
                .count();
            if f >= 20 {
                escapes_total += out;
            }
            if fat.is_empty() || out > n / 8 {
                builds += 1;
                fat = cur
                    .iter()
                    .map(|a| Aabb {
                        min: [a.min[0] - margin, a.min[1] - margin],
                        max: [a.max[0] + margin, a.max[1] + margin],
                    })
                    .collect();
                // rows built anew, swept for pairs
                let mean_h: f32 = fat.iter().map(|a| a.max[1] - a.min[1]).sum::<f32>() / n as f32;
                let inv = 1.0 / (2.0 * mean_h);
                let (lo, hi) = fat.iter().fold((f32::MAX, f32::MIN), |(l, h), a| {
                    (l.min(a.min[1]), h.max(a.max[1]))
                });
                let first = floor_row(lo * inv);
                let nrows = (floor_row(hi * inv) - first + 1) as usize;
                let mut rows: Vec<Vec<(Aabb, u32)>> = vec![Vec::new(); nrows];
                for (i, a) in fat.iter().enumerate() {
                    for r in floor_row(a.min[1] * inv)..=floor_row(a.max[1] * inv) {
                        rows[(r - first) as usize].push((*a, i as u32));
                    }
                }
                pairs.clear();
                for (ri, row) in rows.iter_mut().enumerate() {
                    row.sort_unstable_by(|a, b| a.0.min[0].total_cmp(&b.0.min[0]));
                    let rr = first + ri as i32;
                    for (k, a) in row.iter().enumerate() {
                        for b in &row[k + 1..] {
                            if b.0.min[0] > a.0.max[0] {
                                break;
                            }
                            if a.0.min[1] <= b.0.max[1]
                                && b.0.min[1] <= a.0.max[1]
                                && floor_row(a.0.min[1].max(b.0.min[1]) * inv) == rr
                            {
                                pairs.push((a.1, b.1));
                            }
                        }
                    }
                }
            }
            // what the narrow phase would read: the boxes of each listed pair (a stand-in for the exact test)
            let mut touching = 0;
            for &(a, b) in &pairs {
                if ov(&cur[a as usize], &cur[b as usize]) {
                    touching += 1;
                }
            }
            let dt = t.elapsed().as_secs_f64();
            if f >= 20 {
                t_total += dt;
                t_max = t_max.max(dt);
                list_total += pairs.len();
                touching_total += touching;
            }
        }
        let k = (frames - 20) as f64;
        println!(
            "fat margin {margin}: mean {:.1} us, worst {:.1} us, builds {builds}/{frames}, listed pairs {:.0}, touching {:.0}, outside their fat AABB a frame {:.0}",
            t_total / k * 1e6,
            t_max * 1e6,
            list_total as f64 / k,
            touching_total as f64 / k,
            escapes_total as f64 / k
        );
    }
}
