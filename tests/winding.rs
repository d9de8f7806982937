//! Winding numbers, `contains` and `signed_distance` against an independent `f64` brute force
//! (the solid angle of every triangle, summed): on closed meshes (a sphere, the bunny with its
//! holes capped, spot, armadillo), open ones (the shared bunny, Sponza, the conference room)
//! and a triangle soup, at points spread over each mesh's box and points near its surface.

mod common;

use common::Rng;
use meshray::prelude::*;
use meshray::query::WindingAccuracy;
use meshray::{Bvh, Mesh, QueryOptions, Ray, Scene, SceneOptions};
use nalgebra::Matrix4;
use nalgebra::{Point3, Vector3};
use rayon::prelude::*;
use std::collections::HashMap;
use std::f64::consts::PI;
use std::sync::Arc;

/// The signed solid angle of a triangle at `p`, by l'Huilier's theorem on the spherical
/// triangle the corners project to (an independent formula: the library uses Van Oosterom
/// and Strackee's), signed by the side of the plane `p` is on.
fn solid_angle(p: [f64; 3], t: &[[f64; 3]; 3]) -> f64 {
    let v = t.map(|q| Vector3::new(q[0] - p[0], q[1] - p[1], q[2] - p[2]));
    let u = v.map(|q| q.normalize());
    if v.iter().any(|q| q.norm() == 0.0) {
        return 0.0;
    }
    // The sides of the spherical triangle (great-circle arcs between the unit corners).
    let arc =
        |a: &Vector3<f64>, b: &Vector3<f64>| 2.0 * ((a - b).norm() / 2.0).clamp(0.0, 1.0).asin();
    let (a, b, c) = (arc(&u[1], &u[2]), arc(&u[0], &u[2]), arc(&u[0], &u[1]));
    let s = (a + b + c) / 2.0;
    let t4 =
        ((s / 2.0).tan() * ((s - a) / 2.0).tan() * ((s - b) / 2.0).tan() * ((s - c) / 2.0).tan())
            .max(0.0);
    let excess = 4.0 * t4.sqrt().atan();
    let side = v[0].dot(&v[1].cross(&v[2]));
    if side > 0.0 {
        excess
    } else if side < 0.0 {
        -excess
    } else {
        0.0
    }
}

/// The winding number at `p` by brute force: every triangle's solid angle over 4π.
fn brute_winding(triangles: &[[[f64; 3]; 3]], p: [f64; 3]) -> f64 {
    triangles.iter().map(|t| solid_angle(p, t)).sum::<f64>() / (4.0 * PI)
}

fn triangles64(mesh: &Mesh) -> Vec<[[f64; 3]; 3]> {
    (0..mesh.triangle_count())
        .map(|i| {
            mesh.triangle(i)
                .map(|q| [q.x as f64, q.y as f64, q.z as f64])
        })
        .collect()
}

/// A sphere of latitude–longitude rings, closed, facing outwards.
fn sphere(rings: usize, segments: usize) -> Mesh {
    let mut positions = vec![Point3::new(0.0, 1.0, 0.0)];
    for i in 1..rings {
        let theta = std::f32::consts::PI * i as f32 / rings as f32;
        for j in 0..segments {
            let phi = std::f32::consts::TAU * j as f32 / segments as f32;
            positions.push(Point3::new(
                theta.sin() * phi.cos(),
                theta.cos(),
                theta.sin() * phi.sin(),
            ));
        }
    }
    positions.push(Point3::new(0.0, -1.0, 0.0));
    let south = (positions.len() - 1) as u32;
    let at = |i: usize, j: usize| (1 + (i - 1) * segments + j % segments) as u32;
    let mut triangles = Vec::new();
    for j in 0..segments {
        triangles.push([0, at(1, j + 1), at(1, j)]);
        triangles.push([south, at(rings - 1, j), at(rings - 1, j + 1)]);
        for i in 1..rings - 1 {
            triangles.push([at(i, j), at(i, j + 1), at(i + 1, j)]);
            triangles.push([at(i, j + 1), at(i + 1, j + 1), at(i + 1, j)]);
        }
    }
    Mesh::from_buffers(positions, triangles).unwrap()
}

/// The mesh with every hole capped: each loop of boundary edges (edges one triangle uses)
/// gets a fan of triangles to a new vertex at the loop's centroid, wound against the loop.
fn capped(mesh: &Mesh) -> Mesh {
    let mut uses: HashMap<(u32, u32), usize> = HashMap::new();
    for t in mesh.triangles() {
        for e in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            *uses.entry(e).or_default() += 1;
        }
    }
    // A directed edge with no twin running the other way is on a boundary.
    let mut next: HashMap<u32, Vec<u32>> = HashMap::new();
    for &(a, b) in uses.keys() {
        if !uses.contains_key(&(b, a)) {
            next.entry(a).or_default().push(b);
        }
    }
    let mut positions = mesh.positions().to_vec();
    let mut triangles = mesh.triangles().to_vec();
    let starts: Vec<u32> = {
        let mut s: Vec<u32> = next.keys().copied().collect();
        s.sort();
        s
    };
    for start in starts {
        while let Some(mut b) = next.get_mut(&start).and_then(|n| n.pop()) {
            let mut lp = vec![start];
            while b != start {
                lp.push(b);
                let Some(n) = next.get_mut(&b).and_then(|n| n.pop()) else {
                    break;
                };
                b = n;
            }
            let centre = lp
                .iter()
                .fold(Vector3::zeros(), |s, &v| s + positions[v as usize].coords)
                / lp.len() as f32;
            let c = positions.len() as u32;
            positions.push(Point3::from(centre));
            for k in 0..lp.len() {
                let (a, b) = (lp[k], lp[(k + 1) % lp.len()]);
                triangles.push([b, a, c]);
            }
        }
    }
    Mesh::from_buffers(positions, triangles).unwrap()
}

/// A soup from `mesh`: every triangle with corners of its own, nudged apart by up to
/// `1e-3` of the diagonal, one in twenty dropped, one in twenty doubled, shuffled.
fn soup(mesh: &Mesh, rng: &mut Rng) -> Mesh {
    let (_, h) = common::frame(mesh);
    let mut corners = Vec::new();
    for i in 0..mesh.triangle_count() {
        let copies = match rng.below(20) {
            0 => 0,
            1 => 2,
            _ => 1,
        };
        for _ in 0..copies {
            let nudge = rng.unit_vector() * (rng.f32() * 2e-3 * h);
            corners.push(mesh.triangle(i).map(|q| q + nudge));
        }
    }
    for i in (1..corners.len()).rev() {
        corners.swap(i, rng.below(i + 1));
    }
    let positions: Vec<Point3<f32>> = corners.iter().flatten().copied().collect();
    let triangles = (0..corners.len() as u32)
        .map(|i| [3 * i, 3 * i + 1, 3 * i + 2])
        .collect();
    Mesh::from_buffers(positions, triangles).unwrap()
}

/// Test points: `spread` uniform over the mesh's box grown by a tenth, and `near` just off the
/// surface (a random point of a random triangle, moved along a random direction by up to
/// 1 % of the half diagonal).
fn points(mesh: &Mesh, spread: usize, near: usize, rng: &mut Rng) -> Vec<Point3<f32>> {
    let b = mesh.bounds();
    let grow = (b.max - b.min) * 0.1;
    let (lo, hi) = (b.min - grow, b.max + grow);
    let mut out: Vec<Point3<f32>> = (0..spread)
        .map(|_| {
            Point3::new(
                rng.range(lo.x, hi.x),
                rng.range(lo.y, hi.y),
                rng.range(lo.z, hi.z),
            )
        })
        .collect();
    let (_, h) = common::frame(mesh);
    for _ in 0..near {
        let [a, b, c] = mesh.triangle(rng.below(mesh.triangle_count()));
        let (mut u, mut v) = (rng.f32(), rng.f32());
        if u + v > 1.0 {
            (u, v) = (1.0 - u, 1.0 - v);
        }
        let on = a + (b - a) * u + (c - a) * v;
        out.push(on + rng.unit_vector() * (rng.f32() * 0.01 * h));
    }
    out
}

/// What the guide promises for the default fast sum (β = 2): within this of the exact sum
/// at every point (`docs/guide.md`, "Inside or outside"; the largest error measured over the
/// shared meshes is about half of it).
const FAST_BOUND: f64 = 0.02;

/// Checks every winding query at `spread` points over the box and `near` points near the
/// surface of `mesh` against the brute force; `closed`: the mesh is closed and faces
/// outwards, so the winding number is 0 or 1 away from the surface and equals the parity of
/// a ray's crossings.
fn check(name: &str, mesh: &Mesh, spread: usize, near: usize, closed: bool) {
    let mut rng = Rng::new(0x5EED ^ mesh.triangle_count() as u64);
    let tris = triangles64(mesh);
    let bvh = Bvh::build(mesh.clone());
    let (_, h) = common::frame(mesh);
    let diagonal = 2.0 * h as f64;
    let pts = points(mesh, spread, near, &mut rng);
    let brute: Vec<f64> = pts
        .par_iter()
        .map(|p| brute_winding(&tris, [p.x as f64, p.y as f64, p.z as f64]))
        .collect();
    let (mut undecided, mut worst_fast) = (0, 0.0f64);
    for (p, &w) in pts.iter().zip(&brute) {
        let exact = bvh.winding_number(*p, WindingAccuracy::Exact, &Default::default());
        assert!(
            (exact - w).abs() < 1e-9,
            "{name} {p:?}: exact sum {exact}, brute force {w}"
        );
        let fast = bvh.winding_number(*p, WindingAccuracy::default(), &Default::default());
        worst_fast = worst_fast.max((fast - w).abs());
        assert!(
            (fast - w).abs() <= FAST_BOUND,
            "{name} {p:?}: fast sum {fast}, brute force {w}"
        );
        let distance = bvh
            .closest_point(*p, f32::INFINITY, &Default::default())
            .unwrap()
            .distance as f64;
        // Exactly ½ is the one answer the brute force's own rounding can flip.
        if (w - 0.5).abs() > 1e-9 {
            assert_eq!(
                bvh.contains(*p, &Default::default()),
                w >= 0.5,
                "{name} {p:?}: winding number {w}"
            );
        } else {
            undecided += 1;
        }
        let signed = bvh
            .signed_distance(*p, f32::INFINITY, &Default::default())
            .unwrap();
        assert!(
            (signed.abs() - distance).abs() <= 1e-6 * distance.max(1e-30),
            "{name} {p:?}: |{signed}| is not the closest point's distance {distance}"
        );
        assert_eq!(
            signed < 0.0,
            bvh.contains(*p, &Default::default()) && distance > 0.0,
            "{name} {p:?}"
        );
        if closed && distance > 1e-4 * diagonal {
            assert!(
                w.abs() < 1e-6 || (w - 1.0).abs() < 1e-6,
                "{name} {p:?}: closed, yet {w}"
            );
            // A random ray's crossings: odd inside, even outside.
            let ray = Ray::new(*p, rng.unit_vector());
            let crossings = bvh.count_hits(&ray, &QueryOptions::default());
            assert_eq!(
                crossings % 2 == 1,
                bvh.contains(*p, &Default::default()),
                "{name} {p:?}: {crossings} crossings"
            );
        }
    }
    assert!(undecided <= 1, "{name}: {undecided} points at exactly ½");
    println!(
        "{name}: {} points, fast sum within {worst_fast:.1e}",
        pts.len()
    );
}

#[test]
fn winding_numbers_of_generated_meshes_equal_brute_force() {
    check("sphere", &sphere(24, 48), 1500, 500, true);
    let mut rng = Rng::new(3);
    check(
        "sphere soup",
        &soup(&sphere(24, 48), &mut rng),
        1500,
        500,
        false,
    );
    // A hemisphere: open, with points near ½ across its rim.
    let full = sphere(24, 48);
    let upper: Vec<[u32; 3]> = full
        .triangles()
        .iter()
        .copied()
        .filter(|t| t.iter().all(|&v| full.positions()[v as usize].y >= -1e-6))
        .collect();
    let hemisphere = Mesh::from_buffers(full.positions().to_vec(), upper).unwrap();
    check("hemisphere", &hemisphere, 1500, 500, false);
    check("capped hemisphere", &capped(&hemisphere), 1500, 500, true);
}

/// The shared meshes, closed and open, and a soup made from one; fewer points on the big
/// meshes (the brute force sums every triangle per point).
#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn winding_numbers_of_shared_meshes_equal_brute_force() {
    let Some(bunny) = common::shared_mesh("stanford-bunny/stanford-bunny.obj") else {
        return;
    };
    let closed_bunny = capped(&bunny);
    check("bunny, capped", &closed_bunny, 400, 200, true);
    check("bunny (open)", &bunny, 400, 200, false);
    check(
        "bunny soup",
        &soup(&closed_bunny, &mut Rng::new(9)),
        300,
        100,
        false,
    );
    for (name, closed) in [
        ("spot/spot.obj", true),
        ("armadillo/armadillo.obj", true),
        ("crytek-sponza/sponza.obj", false),
        ("conference/conference.obj", false),
    ] {
        let mesh = common::shared_mesh(name).unwrap();
        let (spread, near) = if mesh.triangle_count() > 100_000 {
            (150, 50)
        } else {
            (600, 200)
        };
        check(name, &mesh, spread, near, closed);
    }
}

/// A cube `[0, 1]³`, each face a `k × k` grid of squares split along a diagonal, facing
/// outwards: its faces lie on the planes of `contains`' lattice (which starts at the mesh's
/// box) and its edges along the lattice's lines, where crossings fall on edges and ends.
fn grid_cube(k: usize) -> Mesh {
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    // Each face: an origin corner and two edge vectors whose cross product points outwards.
    let faces: [([f32; 3], [f32; 3], [f32; 3]); 6] = [
        ([0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]), // z = 0, facing -z
        ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]), // z = 1
        ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]), // y = 0
        ([0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]), // y = 1
        ([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]), // x = 0
        ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]), // x = 1
    ];
    for (o, u, v) in faces {
        let base = positions.len() as u32;
        for j in 0..=k {
            for i in 0..=k {
                let (s, t) = (i as f32 / k as f32, j as f32 / k as f32);
                positions.push(Point3::new(
                    o[0] + s * u[0] + t * v[0],
                    o[1] + s * u[1] + t * v[1],
                    o[2] + s * u[2] + t * v[2],
                ));
            }
        }
        let at = |i: usize, j: usize| base + (j * (k + 1) + i) as u32;
        for j in 0..k {
            for i in 0..k {
                triangles.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
                triangles.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
            }
        }
    }
    Mesh::from_buffers(positions, triangles).unwrap()
}

#[test]
fn contains_is_exact_where_the_lattice_lies_on_the_surface() {
    for k in [1, 4, 16] {
        // The cube inside a cube twice its size (winding number 2 inside both: a double-
        // counted crossing there changes the answer), and a small tetrahedron below them so
        // the lattice's z planes miss the inner cube's faces at z = 0 and 1 while its x and y
        // lines still run along the faces' diagonals x = y.
        let cube = grid_cube(k);
        let mut positions = cube.positions().to_vec();
        let mut triangles = cube.triangles().to_vec();
        let n = positions.len() as u32;
        positions.extend(
            cube.positions()
                .iter()
                .map(|p| Point3::from(p.coords * 2.0).map(|c| c - 0.5)),
        );
        triangles.extend(cube.triangles().iter().map(|t| t.map(|v| v + n)));
        let n = positions.len() as u32;
        positions.extend([
            Point3::new(0.5, 0.5, -0.9),
            Point3::new(0.52, 0.5, -0.9),
            Point3::new(0.5, 0.52, -0.9),
            Point3::new(0.5, 0.5, -0.87),
        ]);
        triangles.extend([
            [n, n + 2, n + 1],
            [n, n + 1, n + 3],
            [n, n + 3, n + 2],
            [n + 1, n + 2, n + 3],
        ]);
        let mesh = Mesh::from_buffers(positions, triangles).unwrap();
        let bvh = Bvh::build(mesh.clone());
        let tris = triangles64(&mesh);
        let mut rng = Rng::new(k as u64);
        let mut pts: Vec<Point3<f32>> = (0..3000)
            .map(|_| {
                Point3::new(
                    rng.range(-0.7, 1.7),
                    rng.range(-0.7, 1.7),
                    rng.range(-0.7, 1.7),
                )
            })
            .collect();
        // Points on the lattice's lines and the faces' diagonals, in and out.
        for _ in 0..1000 {
            let (a, b) = (rng.range(-0.1, 1.1), (rng.below(9) as f32) / 8.0);
            pts.push(Point3::new(a, b, b));
            pts.push(Point3::new(a, a, rng.range(-0.1, 1.1)));
            pts.push(Point3::new(b, a, 1.0 - b));
        }
        let (mut decided, mut twice) = ([0usize; 2], 0);
        for p in &pts {
            // On the surface the winding number is not defined (the sums disagree there).
            if bvh.closest_point(*p, 1e-6, &Default::default()).is_some() {
                continue;
            }
            let w = brute_winding(&tris, [p.x as f64, p.y as f64, p.z as f64]);
            if (w - 0.5).abs() > 1e-9 {
                assert_eq!(
                    bvh.contains(*p, &Default::default()),
                    w >= 0.5,
                    "cube {k}, {p:?}: winding number {w}"
                );
                decided[usize::from(w >= 0.5)] += 1;
                twice += usize::from(w > 1.5);
            }
        }
        assert!(decided.iter().all(|&n| n > 500), "cube {k}: {decided:?}");
        assert!(twice > 300, "cube {k}: {twice} points inside both cubes");
    }
}

#[test]
fn contains_is_exact_a_hair_from_a_large_face() {
    // A flat closed box, 1000 × 1 × 1000, of twelve large triangles, and a small tetrahedron
    // below it (so the lattice's planes miss the faces): points within 1e-6 to 1e-2 of its
    // floor and ceiling, in and out, where a crossing's t comes from corners a thousand
    // times farther away than the segment is long.
    let mut positions: Vec<Point3<f32>> = Vec::new();
    for &(x, y, z) in &[
        (0.0, 0.0, 0.0),
        (1000.0, 0.0, 0.0),
        (1000.0, 1.0, 0.0),
        (0.0, 1.0, 0.0),
        (0.0, 0.0, 1000.0),
        (1000.0, 0.0, 1000.0),
        (1000.0, 1.0, 1000.0),
        (0.0, 1.0, 1000.0),
        (500.0, -3.0, 500.0),
        (501.0, -3.0, 500.0),
        (500.0, -3.0, 501.0),
        (500.0, -2.0, 500.0),
    ] {
        positions.push(Point3::new(x, y, z));
    }
    let quads = [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [0, 3, 7, 4],
        [1, 2, 6, 5],
        [0, 1, 5, 4],
        [3, 2, 6, 7],
    ];
    let mut triangles: Vec<[u32; 3]> = Vec::new();
    // Each triangle turned to face away from its solid's centre.
    let outward = |t: [u32; 3], centre: Vector3<f32>, positions: &[Point3<f32>]| {
        let [a, b, c] = t.map(|v| positions[v as usize]);
        let n = (b - a).cross(&(c - a));
        if n.dot(&(a.coords - centre)) < 0.0 {
            [t[0], t[2], t[1]]
        } else {
            t
        }
    };
    for q in quads {
        for t in [[q[0], q[1], q[2]], [q[0], q[2], q[3]]] {
            triangles.push(outward(t, Vector3::new(500.0, 0.5, 500.0), &positions));
        }
    }
    for t in [[8, 9, 10], [8, 9, 11], [8, 10, 11], [9, 10, 11]] {
        triangles.push(outward(t, Vector3::new(500.25, -2.75, 500.25), &positions));
    }
    let mesh = Mesh::from_buffers(positions, triangles).unwrap();
    let bvh = Bvh::build(mesh.clone());
    let tris = triangles64(&mesh);
    // Outward-facing, closed: inside the box everything counts once.
    assert!((brute_winding(&tris, [500.0, 0.5, 500.0]) - 1.0).abs() < 1e-9);
    let mut rng = Rng::new(12);
    let mut seen = [0usize; 2];
    for _ in 0..20_000 {
        let hair = 10f32.powf(rng.range(-6.0, -2.0)) * if rng.below(2) == 0 { 1.0 } else { -1.0 };
        let y = if rng.below(2) == 0 { hair } else { 1.0 + hair };
        let p = Point3::new(rng.range(1.0, 999.0), y, rng.range(1.0, 999.0));
        let w = brute_winding(&tris, [p.x as f64, p.y as f64, p.z as f64]);
        if (w - 0.5).abs() > 1e-9 && bvh.closest_point(p, 0.0, &Default::default()).is_none() {
            assert_eq!(
                bvh.contains(p, &Default::default()),
                w >= 0.5,
                "{p:?}: winding number {w}"
            );
            seen[usize::from(w >= 0.5)] += 1;
        }
    }
    assert!(seen.iter().all(|&n| n > 5000), "{seen:?}");
}

#[test]
fn a_refit_tree_answers_for_the_moved_vertices() {
    let mesh = sphere(16, 32);
    let mut bvh = Bvh::build(mesh.clone());
    let centre = Point3::new(0.0, 0.0, 0.0);
    assert!(bvh.contains(centre, &Default::default()));
    // The terms exist now; moving the sphere by 3 along x must replace them.
    let moved: Vec<Point3<f32>> = mesh
        .positions()
        .iter()
        .map(|p| p + Vector3::new(3.0, 0.0, 0.0))
        .collect();
    bvh.refit(&moved).unwrap();
    let tris = triangles64(bvh.mesh());
    for p in [
        centre,
        Point3::new(3.0, 0.2, 0.1),
        Point3::new(2.5, 0.0, 0.0),
        Point3::new(6.0, 0.0, 0.0),
    ] {
        let w = brute_winding(&tris, [p.x as f64, p.y as f64, p.z as f64]);
        let fast = bvh.winding_number(p, WindingAccuracy::default(), &Default::default());
        assert!(
            (fast - w).abs() <= FAST_BOUND,
            "{p:?}: {fast} after the refit, brute force {w}"
        );
        assert_eq!(bvh.contains(p, &Default::default()), w >= 0.5, "{p:?}");
    }
}

#[test]
fn a_scene_sums_its_instances_in_world_space() {
    let sphere = Arc::new(Bvh::build(sphere(16, 32)));
    let bunny_like = Arc::new(Bvh::build(capped(&common::wavy_grid(6))));
    let placements = [
        (
            sphere.clone(),
            Matrix4::new_translation(&Vector3::new(4.0, 0.0, 0.0)),
        ),
        // Stretched and mirrored: still closed and facing outwards as placed.
        (
            sphere.clone(),
            Matrix4::new_nonuniform_scaling(&Vector3::new(-1.5, 0.5, 2.0)),
        ),
        // Overlapping the first: winding number 2 where both hold the point.
        (
            sphere,
            Matrix4::new_translation(&Vector3::new(4.5, 0.0, 0.0)),
        ),
        (
            bunny_like,
            Matrix4::new_translation(&Vector3::new(-8.0, -1.0, -3.0)) * Matrix4::new_scaling(0.5),
        ),
    ];
    let mut scene = Scene::new();
    let mut world: Vec<[[f64; 3]; 3]> = Vec::new();
    for (bvh, m) in &placements {
        scene.add(bvh.clone(), *m).unwrap();
        let m64 = m.cast::<f64>();
        let mirror = m64.fixed_view::<3, 3>(0, 0).determinant() < 0.0;
        for i in 0..bvh.mesh().triangle_count() {
            let mut t = bvh.mesh().triangle(i).map(|q| {
                let q = m64.transform_point(&q.cast::<f64>());
                [q.x, q.y, q.z]
            });
            // The image of a front face is a front face: a mirror's images wind backwards.
            if mirror {
                t.swap(1, 2);
            }
            world.push(t);
        }
    }
    let all = SceneOptions::default();
    let mut rng = Rng::new(11);
    let mut seen = [0usize; 3];
    for _ in 0..1500 {
        let p = Point3::new(
            rng.range(-10.0, 7.0),
            rng.range(-2.0, 2.0),
            rng.range(-4.0, 3.0),
        );
        let w = brute_winding(&world, [p.x as f64, p.y as f64, p.z as f64]);
        let exact = scene.winding_number(p, WindingAccuracy::Exact, &all);
        assert!(
            (exact - w).abs() < 1e-9,
            "{p:?}: {exact} vs brute force {w}"
        );
        let fast = scene.winding_number(p, WindingAccuracy::default(), &all);
        assert!(
            (fast - w).abs() <= 2.0 * FAST_BOUND,
            "{p:?}: {fast} vs brute force {w}"
        );
        assert_eq!(scene.contains(p, &all), w >= 0.5, "{p:?}: {w}");
        let near = scene
            .closest_point(p, f32::INFINITY, &all)
            .unwrap()
            .closest
            .distance as f64;
        let signed = scene.signed_distance(p, f32::INFINITY, &all).unwrap();
        assert!((signed.abs() - near).abs() <= 1e-6 * near, "{p:?}");
        assert_eq!(signed < 0.0, w >= 0.5, "{p:?}");
        seen[(w.round() as usize).min(2)] += 1;
    }
    assert!(
        seen.iter().all(|&n| n > 10),
        "points outside, inside one and inside two: {seen:?}"
    );
    // The options choose the instances: hiding the first leaves the overlap inside once.
    let p = Point3::new(4.2, 0.0, 0.0);
    assert!((scene.winding_number(p, WindingAccuracy::Exact, &all) - 2.0).abs() < 1e-9);
    let not_first = |id: u32| id != 0;
    let some = SceneOptions {
        filter: Some(&not_first),
        ..Default::default()
    };
    assert!((scene.winding_number(p, WindingAccuracy::Exact, &some) - 1.0).abs() < 1e-9);
}

#[test]
fn bad_points_and_empty_scenes_have_documented_answers() {
    let bvh = Bvh::build(sphere(8, 16));
    for p in [
        Point3::new(f32::NAN, 0.0, 0.0),
        Point3::new(0.0, f32::INFINITY, 0.0),
        Point3::new(0.0, 0.0, f32::NEG_INFINITY),
    ] {
        assert!(
            bvh.winding_number(p, WindingAccuracy::default(), &Default::default())
                .is_nan()
        );
        assert!(
            bvh.winding_number(p, WindingAccuracy::Exact, &Default::default())
                .is_nan()
        );
        assert!(!bvh.contains(p, &Default::default()));
        assert_eq!(
            bvh.signed_distance(p, f32::INFINITY, &Default::default()),
            None
        );
    }
    let origin = Point3::new(0.0, 0.0, 0.0);
    assert_eq!(
        bvh.signed_distance(origin, f32::NAN, &Default::default()),
        None
    );
    assert_eq!(bvh.signed_distance(origin, -1.0, &Default::default()), None);
    assert_eq!(
        bvh.signed_distance(origin, 0.5, &Default::default()),
        None,
        "the surface is 1 away"
    );
    // Any β, even a meaningless one, gives a number near the exact one.
    for beta in [f64::NAN, -1.0, 0.0, 0.5, 1.0, f64::INFINITY] {
        let w = bvh.winding_number(
            origin,
            WindingAccuracy::FarField { beta },
            &Default::default(),
        );
        assert!((w - 1.0).abs() < 0.1, "beta {beta}: {w}");
    }
    // A mesh cannot be empty (`Error::NoTriangles`); a scene can.
    assert!(Mesh::from_buffers(Vec::<Point3<f32>>::new(), Vec::new()).is_err());
    let scene = Scene::new();
    assert_eq!(
        scene.winding_number(origin, WindingAccuracy::default(), &SceneOptions::default()),
        0.0
    );
    assert!(!scene.contains(origin, &SceneOptions::default()));
    assert_eq!(
        scene.signed_distance(origin, f32::INFINITY, &SceneOptions::default()),
        None
    );
}
