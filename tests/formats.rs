//! glTF and PLY (features `gltf`, `ply`): files the test writes itself from the asset scene
//! (ASCII PLY, binary PLY in both byte orders, glTF with an embedded buffer, with an external
//! one, and GLB) load to the same triangles, bit for bit, as the OBJ; glTF node transforms
//! place instances (flattened mesh and scene agree, mirrors keep the authored front face);
//! bad files are errors naming the file; truncated and corrupted files never panic.
#![cfg(all(feature = "gltf", feature = "ply"))]

mod common;

use base64::Engine;
use common::Rng;
use meshray::mesh::Format;
use meshray::prelude::*;
use meshray::{Bvh, Culling, Error, LoadOptions, Mesh, QueryOptions, Ray, Scene, SceneOptions};
use nalgebra::{Matrix4, Point3, Quaternion, Translation3, UnitQuaternion, Vector3};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = common::scratch_dir("meshray-formats");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn same_triangles(a: &Mesh, b: &Mesh) {
    assert_eq!(a.triangle_count(), b.triangle_count());
    for i in 0..a.triangle_count() {
        assert_eq!(a.triangle(i), b.triangle(i), "triangle {i}");
    }
}

// ---------------------------------------------------------------- PLY writers

fn ply_header(mesh: &Mesh, format: &str, index_type: &str) -> String {
    format!(
        "ply\nformat {format} 1.0\ncomment written by meshray's tests\n\
         element vertex {}\nproperty float x\nproperty float y\nproperty float z\n\
         property uchar red\nelement face {}\nproperty list uchar {index_type} vertex_indices\n\
         element edge 1\nproperty int vertex1\nproperty int vertex2\nend_header\n",
        mesh.positions().len(),
        mesh.triangle_count()
    )
}

fn ascii_ply(mesh: &Mesh) -> Vec<u8> {
    let mut out = ply_header(mesh, "ascii", "int");
    for p in mesh.positions() {
        // `{:?}` prints the shortest decimal that reads back to the same f32.
        out.push_str(&format!("{:?} {:?} {:?} 200\n", p.x, p.y, p.z));
    }
    for t in mesh.triangles() {
        out.push_str(&format!("3 {} {} {}\n", t[0], t[1], t[2]));
    }
    out.push_str("0 1\n");
    out.into_bytes()
}

fn binary_ply(mesh: &Mesh, big_endian: bool) -> Vec<u8> {
    let format = if big_endian {
        "binary_big_endian"
    } else {
        "binary_little_endian"
    };
    let mut out = ply_header(mesh, format, "uint").into_bytes();
    let f = |x: f32| {
        if big_endian {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        }
    };
    let u = |x: u32| {
        if big_endian {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        }
    };
    for p in mesh.positions() {
        for c in [p.x, p.y, p.z] {
            out.extend(f(c));
        }
        out.push(200);
    }
    for t in mesh.triangles() {
        out.push(3);
        for &i in t {
            out.extend(u(i));
        }
    }
    out.extend(u(0));
    out.extend(u(1));
    out
}

// ---------------------------------------------------------------- glTF writer

/// A glTF document under construction: one buffer, JSON written by hand.
#[derive(Default)]
struct GltfWriter {
    bin: Vec<u8>,
    views: Vec<String>,
    accessors: Vec<String>,
    meshes: Vec<String>,
    nodes: Vec<String>,
    materials: Vec<String>,
}

impl GltfWriter {
    fn view(&mut self, bytes: &[u8]) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        self.views.push(format!(
            r#"{{"buffer":0,"byteOffset":{},"byteLength":{}}}"#,
            self.bin.len(),
            bytes.len()
        ));
        self.bin.extend_from_slice(bytes);
        self.views.len() - 1
    }

    fn positions(&mut self, points: &[Point3<f32>]) -> usize {
        let bytes: Vec<u8> = points
            .iter()
            .flat_map(|p| [p.x, p.y, p.z])
            .flat_map(f32::to_le_bytes)
            .collect();
        let view = self.view(&bytes);
        let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
        for p in points {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        self.accessors.push(format!(
            r#"{{"bufferView":{view},"componentType":5126,"count":{},"type":"VEC3","min":{lo:?},"max":{hi:?}}}"#,
            points.len()
        ));
        self.accessors.len() - 1
    }

    fn indices(&mut self, indices: &[u32]) -> usize {
        let bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let view = self.view(&bytes);
        self.accessors.push(format!(
            r#"{{"bufferView":{view},"componentType":5125,"count":{},"type":"SCALAR"}}"#,
            indices.len()
        ));
        self.accessors.len() - 1
    }

    /// A mesh of one primitive; `mode` 4 triangles, 5 strip, 6 fan.
    fn mesh(
        &mut self,
        points: &[Point3<f32>],
        indices: &[u32],
        mode: u32,
        material: Option<usize>,
    ) -> usize {
        let position = self.positions(points);
        let index = self.indices(indices);
        let material = material.map_or(String::new(), |m| format!(r#","material":{m}"#));
        self.meshes.push(format!(
            r#"{{"primitives":[{{"attributes":{{"POSITION":{position}}},"indices":{index},"mode":{mode}{material}}}]}}"#
        ));
        self.meshes.len() - 1
    }

    /// The JSON, with the buffer's `uri` (none: the GLB chunk).
    fn json(&self, uri: Option<&str>, roots: &[usize]) -> String {
        let uri = uri.map_or(String::new(), |u| format!(r#","uri":"{u}""#));
        format!(
            r#"{{"asset":{{"version":"2.0","generator":"meshray tests"}},"scene":0,"scenes":[{{"nodes":{roots:?}}}],"nodes":[{}],"meshes":[{}],"materials":[{}],"accessors":[{}],"bufferViews":[{}],"buffers":[{{"byteLength":{}{uri}}}]}}"#,
            self.nodes.join(","),
            self.meshes.join(","),
            self.materials.join(","),
            self.accessors.join(","),
            self.views.join(","),
            self.bin.len()
        )
    }

    fn data_uri(&self) -> String {
        format!(
            "data:application/octet-stream;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&self.bin)
        )
    }

    fn glb(&self, roots: &[usize]) -> Vec<u8> {
        self.glb_of(&self.json(None, roots))
    }

    /// A GLB of the JSON `json` (its buffer the binary chunk) and this document's bytes.
    fn glb_of(&self, json: &str) -> Vec<u8> {
        let mut json = json.as_bytes().to_vec();
        while !json.len().is_multiple_of(4) {
            json.push(b' ');
        }
        let mut bin = self.bin.clone();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let total = 12 + 8 + json.len() + 8 + bin.len();
        let mut out = Vec::with_capacity(total);
        out.extend(b"glTF");
        out.extend(2u32.to_le_bytes());
        out.extend((total as u32).to_le_bytes());
        out.extend((json.len() as u32).to_le_bytes());
        out.extend(b"JSON");
        out.extend(json);
        out.extend((bin.len() as u32).to_le_bytes());
        out.extend(b"BIN\0");
        out.extend(bin);
        out
    }
}

/// A triangle facing +z.
const TRIANGLE: [Point3<f32>; 3] = [
    Point3::new(0.0, 0.0, 0.0),
    Point3::new(1.0, 0.0, 0.0),
    Point3::new(0.0, 1.0, 0.0),
];

/// A document of one mesh, [`TRIANGLE`], placed by one node (its JSON).
fn one_triangle(node: &str) -> GltfWriter {
    let mut w = GltfWriter::default();
    w.mesh(&TRIANGLE, &[0, 1, 2], 4, None);
    w.nodes.push(node.into());
    w
}

/// The asset scene as glTF: one mesh and one node per OBJ object (each with only the
/// vertices it uses), its materials by name.
fn scene_as_gltf(obj: &Mesh) -> (GltfWriter, Vec<usize>) {
    let mut w = GltfWriter::default();
    for name in obj.materials() {
        w.materials.push(format!(r#"{{"name":"{name}"}}"#));
    }
    let mut roots = Vec::new();
    for (object, name) in obj.objects().iter().enumerate() {
        let tris: Vec<usize> = (0..obj.triangle_count())
            .filter(|&i| obj.attributes(i).object as usize == object)
            .collect();
        let mut remap = std::collections::HashMap::new();
        let mut points = Vec::new();
        let mut indices = Vec::new();
        for &t in &tris {
            for &v in &obj.triangles()[t] {
                let next = points.len() as u32;
                let local = *remap.entry(v).or_insert_with(|| {
                    points.push(obj.positions()[v as usize]);
                    next
                });
                indices.push(local);
            }
        }
        let material = obj.attributes(tris[0]).material.map(|m| m as usize);
        assert!(
            tris.iter()
                .all(|&t| obj.attributes(t).material == material.map(|m| m as u32))
        );
        let mesh = w.mesh(&points, &indices, 4, material);
        w.nodes
            .push(format!(r#"{{"name":"{name}","mesh":{mesh}}}"#));
        roots.push(w.nodes.len() - 1);
    }
    (w, roots)
}

#[test]
fn ply_and_gltf_load_the_same_triangles_as_the_obj() {
    let obj = Mesh::load(common::asset("scene.obj")).unwrap();
    assert!(obj.objects().len() >= 5);

    let ply_files = [
        ("scene-ascii.ply", ascii_ply(&obj)),
        ("scene-le.ply", binary_ply(&obj, false)),
        ("scene-be.PLY", binary_ply(&obj, true)),
    ];
    for (name, bytes) in ply_files {
        let path = scratch(name);
        std::fs::write(&path, bytes).unwrap();
        let ply = Mesh::load(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        same_triangles(&obj, &ply);
        assert_eq!(ply.triangles(), obj.triangles(), "{name}: the same indices");
    }

    let (w, roots) = scene_as_gltf(&obj);
    let embedded = scratch("scene-embedded.gltf");
    std::fs::write(&embedded, w.json(Some(&w.data_uri()), &roots)).unwrap();
    // An external buffer whose name needs percent-encoding.
    let external = scratch("scene-external.gltf");
    std::fs::write(scratch("scene data.bin"), &w.bin).unwrap();
    std::fs::write(&external, w.json(Some("scene%20data.bin"), &roots)).unwrap();
    let glb = scratch("scene.glb");
    std::fs::write(&glb, w.glb(&roots)).unwrap();
    for path in [&embedded, &external, &glb] {
        let gltf = Mesh::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        same_triangles(&obj, &gltf);
        for i in 0..obj.triangle_count() {
            let object = |m: &Mesh| m.objects()[m.attributes(i).object as usize].clone();
            let material = |m: &Mesh| {
                m.attributes(i)
                    .material
                    .map(|id| m.materials()[id as usize].clone())
            };
            assert_eq!(object(&gltf), object(&obj), "triangle {i}'s object");
            assert_eq!(material(&gltf), material(&obj), "triangle {i}'s material");
        }
    }
    // From memory: GLB and embedded JSON load; an external buffer cannot.
    let options = LoadOptions::default();
    same_triangles(
        &obj,
        &Mesh::from_bytes(
            &w.glb(&roots),
            &LoadOptions {
                format: Some(meshray::mesh::Format::Gltf),
                ..options
            },
        )
        .unwrap(),
    );
    let err = Mesh::from_bytes(
        w.json(Some("scene%20data.bin"), &roots).as_bytes(),
        &LoadOptions {
            format: Some(meshray::mesh::Format::Gltf),
            ..options
        },
    );
    assert!(
        matches!(err, Err(Error::Parse { ref message, .. }) if message.contains("from memory")),
        "{err:?}"
    );
    same_triangles(
        &obj,
        &Mesh::from_bytes(
            &binary_ply(&obj, true),
            &LoadOptions {
                format: Some(meshray::mesh::Format::Ply),
                ..options
            },
        )
        .unwrap(),
    );

    // The same hits, through any loader.
    let bvh_obj = Bvh::build(obj.clone());
    let bvh_glb = Bvh::build(Mesh::load(&glb).unwrap());
    for ray in common::camera_rays(&obj, 48) {
        let options = QueryOptions::default();
        let (a, b) = (
            bvh_obj.closest_hit(&ray, &options),
            bvh_glb.closest_hit(&ray, &options),
        );
        assert_eq!(a.map(|h| (h.t, h.triangle)), b.map(|h| (h.t, h.triangle)));
    }

    // The extension picks the format; `load_as` overrides it.
    let renamed = scratch("scene-glb.bin");
    std::fs::copy(&glb, &renamed).unwrap();
    assert!(matches!(Mesh::load(&renamed), Err(Error::Parse { .. })));
    let loaded = Mesh::load_with(
        &renamed,
        &LoadOptions {
            format: Some(meshray::mesh::Format::Gltf),
            ..Default::default()
        },
    )
    .unwrap();
    same_triangles(&obj, &loaded);
    let renamed = scratch("scene-ply.txt");
    std::fs::write(&renamed, ascii_ply(&obj)).unwrap();
    same_triangles(
        &obj,
        &Mesh::load_with(
            &renamed,
            &LoadOptions {
                format: Some(meshray::mesh::Format::Ply),
                ..Default::default()
            },
        )
        .unwrap(),
    );
}

/// A node's TRS as a matrix, built independently of the loader: T · R · S.
fn trs(t: [f32; 3], r: [f32; 4], s: [f32; 3]) -> Matrix4<f64> {
    let q = UnitQuaternion::from_quaternion(Quaternion::new(r[3], r[0], r[1], r[2]));
    let m = Translation3::new(t[0], t[1], t[2]).to_homogeneous()
        * q.to_homogeneous()
        * Matrix4::new_nonuniform_scaling(&Vector3::new(s[0], s[1], s[2]));
    m.cast::<f64>()
}

#[test]
fn gltf_node_transforms_place_instances_in_mesh_and_scene() {
    let obj = Mesh::load(common::asset("scene.obj")).unwrap();
    let mut w = GltfWriter::default();
    let whole = w.mesh(obj.positions(), &obj.triangles().concat(), 4, None);
    // A quad as a strip and as a fan, both facing +z.
    let quad = [
        Point3::new(0.0, 0.0, 0.0),
        Point3::new(1.0, 0.0, 0.0),
        Point3::new(0.0, 1.0, 0.0),
        Point3::new(1.0, 1.0, 0.0),
    ];
    let strip = w.mesh(&quad, &[0, 1, 2, 3], 5, None);
    let fan = w.mesh(&quad, &[0, 1, 3, 2], 6, None);

    let half_turn = (
        std::f32::consts::FRAC_PI_4.sin(),
        std::f32::consts::FRAC_PI_4.cos(),
    );
    let root = (
        [1.0, -0.5, 2.0],
        [0.0, half_turn.0, 0.0, half_turn.1],
        [1.0, 1.0, 1.0],
    );
    let mirrored = ([8.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [-1.0, 2.0, 1.0]);
    let as_matrix = trs(
        [-8.0, 1.0, 0.0],
        [0.3, 0.1, 0.0, 0.9486833],
        [0.5, 0.5, 0.5],
    );
    let matrix: Vec<f64> = as_matrix.iter().copied().collect(); // column-major, as glTF
    let node = |name: &str, mesh: usize, (t, r, s): ([f32; 3], [f32; 4], [f32; 3])| {
        format!(
            r#"{{"name":"{name}","mesh":{mesh},"translation":{t:?},"rotation":{r:?},"scale":{s:?}}}"#
        )
    };
    w.nodes
        .push(r#"{"name":"root","children":[1,2,3,4,5,6]}"#.replace(
            '}',
            &format!(r#","translation":{:?},"rotation":{:?}}}"#, root.0, root.1),
        ));
    w.nodes.push(node(
        "plain",
        whole,
        ([0.0; 3], [0.0, 0.0, 0.0, 1.0], [1.0; 3]),
    ));
    w.nodes.push(node("mirrored", whole, mirrored));
    w.nodes.push(format!(
        r#"{{"name":"matrix","mesh":{whole},"matrix":{matrix:?}}}"#
    ));
    w.nodes.push(node(
        "hidden",
        whole,
        ([0.0; 3], [0.0, 0.0, 0.0, 1.0], [0.0; 3]),
    ));
    w.nodes.push(node(
        "strip",
        strip,
        ([20.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1.0; 3]),
    ));
    w.nodes.push(node(
        "fan",
        fan,
        ([22.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1.0; 3]),
    ));
    let path = scratch("instances.gltf");
    std::fs::write(&path, w.json(Some(&w.data_uri()), &[0])).unwrap();

    // The flattened mesh: every placement's vertices where the matrices say (in f64).
    let flat = Mesh::load(&path).unwrap();
    let root_m = trs(root.0, root.1, root.2);
    let placements = [
        ("plain", root_m, obj.positions().to_vec()),
        (
            "mirrored",
            root_m * trs(mirrored.0, mirrored.1, mirrored.2),
            obj.positions().to_vec(),
        ),
        ("matrix", root_m * as_matrix, obj.positions().to_vec()),
        (
            "hidden",
            root_m * trs([0.0; 3], [0.0, 0.0, 0.0, 1.0], [0.0; 3]),
            obj.positions().to_vec(),
        ),
        (
            "strip",
            root_m * trs([20.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1.0; 3]),
            quad.to_vec(),
        ),
        (
            "fan",
            root_m * trs([22.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1.0; 3]),
            quad.to_vec(),
        ),
    ];
    let mut next = 0;
    for (name, m, points) in &placements {
        for p in points {
            let expected = m.transform_point(&p.cast::<f64>());
            let got = flat.positions()[next].cast::<f64>();
            assert!(
                (got - expected).norm() <= 1e-5 * (1.0 + expected.coords.norm()),
                "{name}: {got} vs {expected}"
            );
            next += 1;
        }
    }
    assert_eq!(next, flat.positions().len());
    assert_eq!(
        flat.objects(),
        ["plain", "mirrored", "matrix", "hidden", "strip", "fan"]
    );
    assert_eq!(flat.triangle_count(), 4 * obj.triangle_count() + 4);

    // Strip and fan: two triangles each, all facing +z turned by the root (a quarter turn
    // about y: +z goes to +x), so rays along -x hit their front faces with back-face culling.
    let culled = QueryOptions {
        culling: Culling::Back,
        ..Default::default()
    };
    let bvh = Bvh::build(flat.clone());
    for (object, x) in [(4, 20.0), (5, 22.0)] {
        for (u, v) in [(0.2, 0.7), (0.7, 0.2), (0.8, 0.8), (0.1, 0.1)] {
            let local = Point3::new(x + u, v, 0.0);
            let world = (root_m * Matrix4::new_translation(&Vector3::new(0.0, 0.0, 0.0)))
                .transform_point(&local.cast::<f64>())
                .cast::<f32>();
            let ray = Ray::new(
                world + Vector3::new(3.0, 0.0, 0.0),
                Vector3::new(-1.0, 0.0, 0.0),
            );
            let hit = bvh
                .closest_hit(&ray, &culled)
                .unwrap_or_else(|| panic!("object {object} at {u},{v}"));
            assert_eq!(flat.attributes(hit.triangle as usize).object, object);
            assert!(hit.front_face);
        }
    }

    // The scene: one BVH per glTF mesh, the hidden node dropped; its hits agree with the
    // flattened mesh's, including the front face under the mirror.
    let loaded = Scene::load(&path).unwrap();
    let names: Vec<&str> = (0..loaded.len() as u32)
        .map(|i| loaded.instance(i).unwrap().name)
        .collect();
    assert_eq!(names, ["plain", "mirrored", "matrix", "strip", "fan"]);
    let scene = &loaded;
    assert!(
        std::sync::Arc::ptr_eq(
            scene.instance(0).unwrap().bvh,
            scene.instance(2).unwrap().bvh
        ),
        "one BVH per mesh"
    );
    let mut rng = Rng::new(7);
    let rays = common::random_rays(&flat, 3000, &mut rng);
    let n = obj.triangle_count() as u32;
    let offsets = [0, n, 2 * n, 3 * n, 4 * n, 4 * n + 2];
    let (mut hits, mut compared, mut same) = (0, 0, 0);
    for ray in &rays {
        for options in [QueryOptions::default(), culled] {
            let a = bvh.closest_hit(ray, &options);
            let b = scene.closest_hit(
                ray,
                &SceneOptions {
                    query: options,
                    ..Default::default()
                },
            );
            let (Some(a), Some(b)) = (a, b) else {
                // Hit or miss may differ only by rounding at an edge: the f32 vertices of the
                // flattened mesh are not the instance's transformed ones.
                assert!(
                    a.is_none() && b.is_none() || near_edge(a.or(b.map(|h| h.hit))),
                    "{ray:?}"
                );
                continue;
            };
            compared += 1;
            let name = &flat.objects()[flat.attributes(a.triangle as usize).object as usize];
            if (a.t - b.hit.t).abs() > 1e-4 * a.t.max(1.0) {
                // Two surfaces within rounding of each other: allowed only at an edge.
                assert!(near_edge(Some(a)), "{ray:?}: t {} vs {}", a.t, b.hit.t);
                continue;
            }
            assert_eq!(name, loaded.instance(b.instance).unwrap().name, "{ray:?}");
            // The same triangle (not a coplanar twin at the same t, as where two grounds
            // meet): the same face, also under the mirror.
            let object = flat.attributes(a.triangle as usize).object as usize;
            if a.triangle - offsets[object] == b.hit.triangle {
                assert_eq!(
                    a.front_face, b.hit.front_face,
                    "{ray:?} on {name}: {a:?} vs {b:?}"
                );
                assert!((a.normal.into_inner() - b.hit.normal.into_inner()).norm() < 1e-3);
                same += 1;
            }
            hits += 1;
        }
    }
    assert!(
        hits > 1500 && hits + 20 >= compared,
        "{hits} agreeing hits of {compared}"
    );
    assert!(same > 1000, "{same} hits on the same triangle");

    // One triangle facing +z, mirrored in x: its front side still faces +z in both.
    let w = one_triangle(r#"{"mesh":0,"scale":[-1,1,1]}"#);
    let path = scratch("mirrored-triangle.gltf");
    std::fs::write(&path, w.json(Some(&w.data_uri()), &[0])).unwrap();
    let ray = Ray::new(Point3::new(-0.2, 0.2, 1.0), Vector3::new(0.0, 0.0, -1.0));
    let flat = Bvh::build(Mesh::load(&path).unwrap());
    let hit = flat
        .closest_hit(&ray, &culled)
        .expect("the front face, from +z");
    assert!(hit.front_face && hit.normal.z > 0.99);
    let scene = Scene::load(&path).unwrap();
    let hit = scene.closest_hit(
        &ray,
        &SceneOptions {
            query: culled,
            ..Default::default()
        },
    );
    let hit = hit.expect("the front face, from +z").hit;
    assert!(hit.front_face && hit.normal.z > 0.99);
}

/// Whether a hit lies within rounding of its triangle's edge (barycentrics near 0 or 1).
fn near_edge(hit: Option<meshray::Hit>) -> bool {
    hit.is_some_and(|h| {
        let w = 1.0 - h.u - h.v;
        h.u.min(h.v).min(w) < 1e-4
    })
}

/// A bad file's name, its text, and what its error must be.
type Case = (&'static str, String, fn(&Error) -> bool);

#[test]
fn bad_ply_and_gltf_files_are_errors_naming_the_file() {
    let header = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n\
                  property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
    let body = "0 0 0\n1 0 0\n0 1 0\n";
    let cases: Vec<Case> = vec![
        ("out of range", format!("{header}{body}3 0 1 3\n"), |e| {
            matches!(
                e,
                Error::IndexOutOfRange {
                    line: Some(14),
                    index: 3,
                    count: 3,
                    ..
                }
            )
        }),
        ("negative", format!("{header}{body}3 0 -1 2\n"), |e| {
            matches!(
                e,
                Error::IndexOutOfRange {
                    line: Some(14),
                    index: -1,
                    ..
                }
            )
        }),
        (
            "two corners",
            format!("{header}{body}2 0 1\n"),
            |e| matches!(e, Error::Parse { line: Some(14), message, .. } if message.contains("2 corners")),
        ),
        (
            "nan",
            format!("{header}0 0 0\n1 nan 0\n0 1 0\n3 0 1 2\n"),
            |e| {
                matches!(
                    e,
                    Error::NonFiniteCoordinate { vertex: 1, .. } | Error::Parse { .. }
                )
            },
        ),
        (
            "inf",
            format!("{header}0 0 0\n1 1e300 0\n0 1 0\n3 0 1 2\n").replace("float", "double"),
            |e| matches!(e, Error::NonFiniteCoordinate { vertex: 1, .. }),
        ),
        (
            "missing z",
            format!("{header}{body}3 0 1 2\n")
                .replace("property float z\n", "")
                .replace(" 0\n1 0 0\n0 1 0", "\n1 0\n0 1"),
            |e| matches!(e, Error::Parse { message, .. } if message.contains("lacks")),
        ),
        (
            "no faces",
            format!("{header}{body}").replace("element face 1", "element face 0"),
            |e| matches!(e, Error::NoTriangles { path: Some(_) }),
        ),
        (
            "no face element",
            header.replace(
                "element face 1\nproperty list uchar int vertex_indices\n",
                "",
            ) + body,
            |e| matches!(e, Error::Parse { message, .. } if message.contains("face")),
        ),
        ("short body", format!("{header}0 0 0\n1 0 0\n"), |e| {
            matches!(e, Error::Parse { .. })
        }),
        // The start of an ASCII STL: named for what it is, not for where PLY gave up.
        ("garbage", "solid cube\nfacet\n".into(), |e| {
            matches!(
                e,
                Error::WrongFormat {
                    found: Format::Stl,
                    ..
                }
            )
        }),
        (
            "bad number",
            format!("{header}0 0 0\n1 zero 0\n0 1 0\n3 0 1 2\n"),
            |e| matches!(e, Error::Parse { line: Some(11), .. }),
        ),
        ("empty", String::new(), |e| matches!(e, Error::Parse { .. })),
        // Counts the file cannot hold are refused before any entry is read (the fuzzer's
        // 557 bytes declared 444 million vertices without properties and exhausted memory).
        (
            "more vertices than bytes",
            header.replace("element vertex 3", "element vertex 1000000000") + body,
            |e| matches!(e, Error::Parse { message, .. } if message.contains("cannot hold")),
        ),
        (
            "vertices without properties",
            "ply\nformat binary_little_endian 1.0\nelement vertex 5\nelement face 1\n\
             property list uchar int vertex_indices\nend_header\n\x03\0\0\0\0\x01\0\0\0\x02\0\0\0"
                .into(),
            |e| matches!(e, Error::Parse { message, .. } if message.contains("no properties")),
        ),
    ];
    for (name, text, expected) in cases {
        let path = scratch(&format!("bad-{}.ply", name.replace(' ', "-")));
        std::fs::write(&path, &text).unwrap();
        let err = Mesh::load(&path).expect_err(name);
        assert!(expected(&err), "{name}: {err:?}");
        assert!(
            err.to_string().contains(path.to_str().unwrap()),
            "{name}: {err}"
        );
        assert!(
            !err.to_string().contains("Line "),
            "the line is named once: {err}"
        );
    }
    let limits = LoadOptions {
        max_triangles: 1,
        ..Default::default()
    };
    let two = format!("{header}{body}3 0 1 2\n").replace("element face 1", "element face 2")
        + "3 2 1 0\n";
    assert!(matches!(
        Mesh::from_bytes(
            two.as_bytes(),
            &LoadOptions {
                format: Some(meshray::mesh::Format::Ply),
                ..limits
            }
        ),
        Err(Error::LimitExceeded { .. })
    ));
    let quad = format!("{header}{body}4 0 1 2 0\n");
    assert!(matches!(
        Mesh::from_bytes(
            quad.as_bytes(),
            &LoadOptions {
                format: Some(meshray::mesh::Format::Ply),
                ..limits
            }
        ),
        Err(Error::LimitExceeded { .. })
    ));

    // glTF: a valid one-triangle document, then broken copies.
    let w = one_triangle(r#"{"mesh":0}"#);
    let tri = TRIANGLE;
    let good = w.json(Some(&w.data_uri()), &[0]);
    assert_eq!(
        Mesh::from_bytes(
            good.as_bytes(),
            &LoadOptions {
                format: Some(meshray::mesh::Format::Gltf),
                ..Default::default()
            }
        )
        .unwrap()
        .triangle_count(),
        1
    );
    let short_uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&w.bin[..20])
    );
    let cases: Vec<Case> = vec![
        ("not json", "{ nope".into(), |e| matches!(e, Error::Parse { message, .. } if message.contains("glTF"))),
        ("short buffer", good.replace(&w.data_uri(), &short_uri), |e| {
            matches!(e, Error::Parse { message, .. } if message.contains("holds 20 bytes"))
        }),
        ("accessor past view", good.replace(r#""count":3,"type":"SCALAR""#, r#""count":9,"type":"SCALAR""#), |e| {
            matches!(e, Error::Parse { message, .. } if message.contains("runs past"))
        }),
        ("index out of range", {
            let mut w2 = GltfWriter::default();
            w2.mesh(&tri, &[0, 1, 7], 4, None);
            w2.nodes.push(r#"{"mesh":0}"#.into());
            w2.json(Some(&w2.data_uri()), &[0])
        }, |e| matches!(e, Error::IndexOutOfRange { index: 7, count: 3, path: Some(_), .. })),
        ("required extension", good.replace(r#""asset""#, r#""extensionsRequired":["KHR_draco_mesh_compression"],"extensionsUsed":["KHR_draco_mesh_compression"],"asset""#), |e| {
            matches!(e, Error::Parse { message, .. } if message.contains("KHR_draco_mesh_compression"))
        }),
        ("cycle", good.replace(r#""nodes":[{"mesh":0}]"#, r#""nodes":[{"mesh":0,"children":[1]},{"children":[0]}]"#), |e| {
            matches!(e, Error::Parse { .. })
        }),
        ("bad base64", good.replace(";base64,", ";base64,!!!!"), |e| matches!(e, Error::Parse { message, .. } if message.contains("base64"))),
        ("missing buffer file", good.replace(&w.data_uri(), "missing.bin"), |e| {
            matches!(e, Error::ReferencedFile { document, what, path, .. }
                if document.ends_with("bad-missing-buffer-file.gltf") && what == "buffer 0" && path.ends_with("missing.bin"))
                && e.to_string().contains("missing.bin")
        }),
        ("buffer outside", good.replace(&w.data_uri(), "../outside.bin"), |e| {
            matches!(e, Error::Parse { message, .. } if message.contains("outside"))
        }),
        ("quantized positions", good.replacen(r#""componentType":5126"#, r#""componentType":5123"#, 1), |e| {
            matches!(e, Error::Parse { .. })
        }),
        ("only points", good.replace(r#""mode":4"#, r#""mode":0"#), |e| matches!(e, Error::NoTriangles { path: Some(_) })),
        ("invalid mode", good.replace(r#""mode":4"#, r#""mode":9"#), |e| {
            matches!(e, Error::Parse { message, .. }
                if message == "not valid glTF 2.0: meshes[0].primitives[0].mode: invalid value")
        }),
        // No indices, and a vertex count of four billion: refused before anything that size
        // is allocated.
        ("huge count", good.replace(r#","indices":1"#, "").replacen(r#""count":3"#, r#""count":4000000000"#, 1), |e| {
            matches!(e, Error::Parse { .. })
        }),
        ("nan", {
            let mut w2 = GltfWriter::default();
            w2.mesh(&[tri[0], Point3::new(f32::NAN, 0.0, 0.0), tri[2]], &[0, 1, 2], 4, None);
            w2.nodes.push(r#"{"mesh":0}"#.into());
            w2.json(Some(&w2.data_uri()), &[0]).replace("NaN", "0")
        }, |e| matches!(e, Error::NonFiniteCoordinate { vertex: 1, path: Some(_), .. })),
        ("transform to infinity", good.replace(r#"{"mesh":0}"#, r#"{"mesh":0,"scale":[1e38,1e38,1e38],"translation":[3e38,0,0]}"#), |e| {
            // vertex 0 lands on 3e38: finite, but far beyond the range the queries handle
            matches!(e, Error::CoordinateOutOfRange { vertex: 0, .. })
        }),
    ];
    for (name, text, expected) in cases {
        let path = scratch(&format!("bad-{}.gltf", name.replace(' ', "-")));
        std::fs::write(&path, &text).unwrap();
        let err = Mesh::load(&path).expect_err(name);
        assert!(expected(&err), "{name}: {err:?}");
        let shown = err.to_string();
        assert!(shown.contains(path.to_str().unwrap()), "{name}: {shown}");
        assert!(
            !shown.contains("Some(") && !shown.contains("None"),
            "{name}: {shown}"
        );
        // The scene loader refuses the same files (but one: its instance keeps the finite
        // vertices and a finite transform; only the flattened mesh overflows).
        if name != "transform to infinity" {
            assert!(Scene::load(&path).is_err(), "{name}");
        }
    }
    let limits = LoadOptions {
        max_triangles: 0,
        ..Default::default()
    };
    assert!(matches!(
        Mesh::from_bytes(
            good.as_bytes(),
            &LoadOptions {
                format: Some(meshray::mesh::Format::Gltf),
                ..limits
            }
        ),
        Err(Error::LimitExceeded { .. })
    ));
    for (path, kind) in [
        (scratch("absent.glb"), "glb"),
        (scratch("absent.ply"), "ply"),
    ] {
        let err = Mesh::load(&path).expect_err(kind);
        assert!(
            matches!(&err, Error::Io { path: p, .. } if *p == path),
            "{err:?}"
        );
    }
}

/// `text` with `from` replaced by `to`; `from` must occur exactly once, so no case is vacuous.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from} in {text}");
    text.replacen(from, to, 1)
}

/// Where [`edit`] puts new top-level arrays into a document.
const ASSET: &str = r#""asset":"#;

/// A copy of the one-triangle document with one index naming nothing: its name, the edit,
/// and the end of the error message.
type IndexCase = (&'static str, &'static str, &'static str, &'static str);

/// One case per kind of index in a glTF document.
const INDEX_CASES: &[IndexCase] = &[
    (
        "position",
        r#""POSITION":0"#,
        r#""POSITION":7"#,
        "meshes[0].primitives[0].attributes.POSITION names accessor 7, but the document has 2 accessors",
    ),
    (
        "normal",
        r#""POSITION":0"#,
        r#""POSITION":0,"NORMAL":2"#,
        "meshes[0].primitives[0].attributes.NORMAL names accessor 2, but the document has 2 accessors",
    ),
    (
        "texcoord",
        r#""POSITION":0"#,
        r#""POSITION":0,"TEXCOORD_0":9"#,
        "meshes[0].primitives[0].attributes.TEXCOORD_0 names accessor 9, but the document has 2 accessors",
    ),
    (
        "indices",
        r#""indices":1"#,
        r#""indices":2"#,
        "meshes[0].primitives[0].indices names accessor 2, but the document has 2 accessors",
    ),
    (
        "morph target",
        r#""mode":4"#,
        r#""mode":4,"targets":[{"POSITION":0},{"NORMAL":5}]"#,
        "meshes[0].primitives[0].targets[1].NORMAL names accessor 5, but the document has 2 accessors",
    ),
    (
        "buffer view",
        r#"{"bufferView":1,"#,
        r#"{"bufferView":4,"#,
        "accessors[1].bufferView names buffer view 4, but the document has 2 buffer views",
    ),
    (
        "buffer",
        r#"{"buffer":0,"byteOffset":36"#,
        r#"{"buffer":1,"byteOffset":36"#,
        "bufferViews[1].buffer names buffer 1, but the document has 1 buffer",
    ),
    (
        "mesh",
        r#""nodes":[{"mesh":0}]"#,
        r#""nodes":[{"mesh":1}]"#,
        "nodes[0].mesh names mesh 1, but the document has 1 mesh",
    ),
    (
        "scene node",
        r#""scenes":[{"nodes":[0]}]"#,
        r#""scenes":[{"nodes":[0,3]}]"#,
        "scenes[0].nodes[1] names node 3, but the document has 1 node",
    ),
    (
        "default scene",
        r#""scene":0"#,
        r#""scene":1"#,
        "scene (the default one) names scene 1, but the document has 1 scene",
    ),
    (
        "child",
        r#""nodes":[{"mesh":0}]"#,
        r#""nodes":[{"mesh":0,"children":[5]}]"#,
        "nodes[0].children[0] names node 5, but the document has 1 node",
    ),
    (
        "material",
        r#""mode":4"#,
        r#""mode":4,"material":0"#,
        "meshes[0].primitives[0].material names material 0, but the document has no materials",
    ),
    (
        "sampler",
        ASSET,
        r#""samplers":[{}],"images":[{"uri":"a.png"}],"textures":[{"sampler":1,"source":0}],"asset":"#,
        "textures[0].sampler names sampler 1, but the document has 1 sampler",
    ),
    (
        "image",
        ASSET,
        r#""textures":[{"source":2}],"asset":"#,
        "textures[0].source names image 2, but the document has no images",
    ),
    (
        "image buffer view",
        ASSET,
        r#""images":[{"bufferView":9,"mimeType":"image/png"}],"asset":"#,
        "images[0].bufferView names buffer view 9, but the document has 2 buffer views",
    ),
    (
        "base color texture",
        r#""materials":[]"#,
        r#""materials":[{"pbrMetallicRoughness":{"baseColorTexture":{"index":0}}}]"#,
        "materials[0].pbrMetallicRoughness.baseColorTexture.index names texture 0, but the document has no textures",
    ),
    (
        "metallic roughness texture",
        r#""materials":[]"#,
        r#""materials":[{"pbrMetallicRoughness":{"metallicRoughnessTexture":{"index":1}}}]"#,
        "materials[0].pbrMetallicRoughness.metallicRoughnessTexture.index names texture 1, but the document has no textures",
    ),
    (
        "normal texture",
        r#""materials":[]"#,
        r#""materials":[{"normalTexture":{"index":2}}]"#,
        "materials[0].normalTexture.index names texture 2, but the document has no textures",
    ),
    (
        "occlusion texture",
        r#""materials":[]"#,
        r#""materials":[{"occlusionTexture":{"index":3}}]"#,
        "materials[0].occlusionTexture.index names texture 3, but the document has no textures",
    ),
    (
        "emissive texture",
        r#""materials":[]"#,
        r#""materials":[{},{"emissiveTexture":{"index":4}}]"#,
        "materials[1].emissiveTexture.index names texture 4, but the document has no textures",
    ),
    (
        "skin",
        r#""nodes":[{"mesh":0}]"#,
        r#""nodes":[{"mesh":0,"skin":0}]"#,
        "nodes[0].skin names skin 0, but the document has no skins",
    ),
    (
        "joint",
        ASSET,
        r#""skins":[{"joints":[0,4]}],"asset":"#,
        "skins[0].joints[1] names node 4, but the document has 1 node",
    ),
    (
        "skeleton",
        ASSET,
        r#""skins":[{"joints":[0],"skeleton":3}],"asset":"#,
        "skins[0].skeleton names node 3, but the document has 1 node",
    ),
    (
        "inverse bind matrices",
        ASSET,
        r#""skins":[{"joints":[0],"inverseBindMatrices":6}],"asset":"#,
        "skins[0].inverseBindMatrices names accessor 6, but the document has 2 accessors",
    ),
    (
        "camera",
        r#""nodes":[{"mesh":0}]"#,
        r#""nodes":[{"mesh":0,"camera":0}]"#,
        "nodes[0].camera names camera 0, but the document has no cameras",
    ),
    (
        "sparse indices",
        r#"],"bufferViews""#,
        r#",{"componentType":5126,"count":3,"type":"VEC3","sparse":{"count":1,"indices":{"bufferView":8,"componentType":5125},"values":{"bufferView":0}}}],"bufferViews""#,
        "accessors[2].sparse.indices.bufferView names buffer view 8, but the document has 2 buffer views",
    ),
    (
        "sparse values",
        r#"],"bufferViews""#,
        r#",{"componentType":5126,"count":3,"type":"VEC3","sparse":{"count":1,"indices":{"bufferView":1,"componentType":5125},"values":{"bufferView":8}}}],"bufferViews""#,
        "accessors[2].sparse.values.bufferView names buffer view 8, but the document has 2 buffer views",
    ),
    (
        "animation sampler",
        ASSET,
        r#""animations":[{"channels":[{"sampler":1,"target":{"node":0,"path":"translation"}}],"samplers":[{"input":0,"output":0}]}],"asset":"#,
        "animations[0].channels[0].sampler names sampler 1, but the animation has 1 sampler",
    ),
    (
        "animation target",
        ASSET,
        r#""animations":[{"channels":[{"sampler":0,"target":{"node":3,"path":"translation"}}],"samplers":[{"input":0,"output":0}]}],"asset":"#,
        "animations[0].channels[0].target.node names node 3, but the document has 1 node",
    ),
    (
        "animation input",
        ASSET,
        r#""animations":[{"channels":[],"samplers":[{"input":9,"output":0}]}],"asset":"#,
        "animations[0].samplers[0].input names accessor 9, but the document has 2 accessors",
    ),
    (
        "animation output",
        ASSET,
        r#""animations":[{"channels":[],"samplers":[{"input":0,"output":9}]}],"asset":"#,
        "animations[0].samplers[0].output names accessor 9, but the document has 2 accessors",
    ),
];

/// The error each way of loading gives for a broken copy of `w`'s one-triangle document
/// (`.gltf` from memory and from a file, `.glb`; as a mesh and as a scene), its file written
/// to `name` in the scratch directory.
fn load_errors(w: &GltfWriter, name: &str, from: &str, to: &str) -> Vec<(String, Error)> {
    let json = edit(&w.json(Some(&w.data_uri()), &[0]), from, to);
    let gltf = scratch(&format!("{name}.gltf"));
    std::fs::write(&gltf, &json).unwrap();
    let glb = scratch(&format!("{name}.glb"));
    std::fs::write(&glb, w.glb_of(&edit(&w.json(None, &[0]), from, to))).unwrap();
    let ways = [
        (
            "parse_gltf",
            Mesh::from_bytes(
                json.as_bytes(),
                &LoadOptions {
                    format: Some(meshray::mesh::Format::Gltf),
                    ..Default::default()
                },
            )
            .map(drop),
        ),
        ("Mesh::load", Mesh::load(&gltf).map(drop)),
        ("Scene::load", Scene::load(&gltf).map(drop)),
        ("Mesh::load glb", Mesh::load(&glb).map(drop)),
        ("Scene::load glb", Scene::load(&glb).map(drop)),
    ];
    ways.into_iter()
        .map(|(way, result)| {
            let err = result.map_or_else(|e| e, |()| panic!("{name}: {way} loaded"));
            (way.to_string(), err)
        })
        .collect()
}

#[test]
fn gltf_indices_that_name_nothing_are_errors_saying_where() {
    let w = one_triangle(r#"{"mesh":0}"#);
    let mut failures = Vec::new();
    for &(name, from, to, message) in INDEX_CASES {
        let file = format!("index-{}", name.replace(' ', "-"));
        // Every case is tried, a panic too, so the failure lists all of them.
        let outcome = std::panic::catch_unwind(|| {
            for (way, err) in load_errors(&w, &file, from, to) {
                let shown = err.to_string();
                assert!(
                    matches!(err, Error::Parse { .. }) && shown.ends_with(message),
                    "{way}: {shown}"
                );
                assert!(
                    way == "parse_gltf" || shown.contains(&file),
                    "{way}: {shown}"
                );
            }
        });
        if let Err(panic) = outcome {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            failures.push(format!("{name}: {}", why.unwrap_or_default()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The same kinds of index, all naming something: the document loads.
    let every_kind = edit(
        &w.json(Some(&w.data_uri()), &[0]),
        ASSET,
        r#""samplers":[{}],"images":[{"uri":"a.png"},{"bufferView":0,"mimeType":"image/png"}],
        "textures":[{"sampler":0,"source":1}],
        "cameras":[{"type":"perspective","perspective":{"yfov":1.0,"znear":0.1}}],
        "skins":[{"joints":[0],"skeleton":0,"inverseBindMatrices":0}],
        "animations":[{"channels":[{"sampler":0,"target":{"node":0,"path":"translation"}}],
          "samplers":[{"input":1,"output":0}]}],"asset":"#,
    );
    let every_kind = edit(
        &every_kind,
        r#""materials":[]"#,
        r#""materials":[{"pbrMetallicRoughness":{"baseColorTexture":{"index":0},
          "metallicRoughnessTexture":{"index":0}},"normalTexture":{"index":0},
          "occlusionTexture":{"index":0},"emissiveTexture":{"index":0}}]"#,
    );
    let every_kind = edit(
        &every_kind,
        r#""mode":4"#,
        r#""mode":4,"material":0,"targets":[{"POSITION":0}]"#,
    );
    let every_kind = edit(
        &every_kind,
        r#""nodes":[{"mesh":0}]"#,
        r#""nodes":[{"mesh":0,"camera":0,"skin":0,"children":[]}]"#,
    );
    let every_kind = edit(
        &every_kind,
        r#"],"bufferViews""#,
        r#",{"componentType":5126,"count":3,"type":"VEC3","sparse":{"count":1,
          "indices":{"bufferView":1,"componentType":5125},"values":{"bufferView":0}}}],"bufferViews""#,
    );
    let mesh = Mesh::from_bytes(
        every_kind.as_bytes(),
        &LoadOptions {
            format: Some(meshray::mesh::Format::Gltf),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((mesh.triangle_count(), mesh.materials().len()), (1, 1));
    let path = scratch("every-kind-of-index.gltf");
    std::fs::write(&path, &every_kind).unwrap();
    assert_eq!(Scene::load(&path).unwrap().len(), 1);
}

#[test]
fn glb_header_shorter_than_itself_is_an_error() {
    let w = one_triangle(r#"{"mesh":0}"#);
    for length in [0u32, 4, 11] {
        let mut glb = w.glb(&[0]);
        glb[8..12].copy_from_slice(&length.to_le_bytes());
        let err = Mesh::from_bytes(
            &glb,
            &LoadOptions {
                format: Some(meshray::mesh::Format::Gltf),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(matches!(err, Error::Parse { .. }), "{err:?}");
    }
}

#[test]
fn gltf_node_transforms_that_cannot_place_a_mesh_are_reported() {
    // The node "shown" places the triangle; a second node (index 1) is the case.
    let document = |second: &str, third: Option<&str>| {
        let mut w = one_triangle(r#"{"name":"shown","mesh":0}"#);
        w.nodes.push(second.into());
        w.nodes.extend(third.map(String::from));
        w.json(Some(&w.data_uri()), &[0, 1])
    };
    let write = |name: &str, json: &str| {
        let path = scratch(name);
        std::fs::write(&path, json).unwrap();
        path
    };
    let no_debug_text = |err: &Error| {
        let shown = err.to_string();
        assert!(
            !shown.contains("Some(") && !shown.contains("None"),
            "{shown}"
        );
        shown
    };

    // A zero scale hides the node: the scene leaves it out, the flattened mesh keeps its
    // triangle (of no area); both say so.
    let path = write(
        "zero-scale.gltf",
        &document(r#"{"name":"hidden","mesh":0,"scale":[0,0,0]}"#, None),
    );
    let loaded = Scene::load(&path).unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded.instance(0).unwrap().name, "shown");
    let [warning] = loaded.load_warnings() else {
        panic!("{:?}", loaded.load_warnings())
    };
    assert!(
        matches!(warning, Error::NodeTransform { node: 1, name: Some(n), .. } if n == "hidden"),
        "{warning:?}"
    );
    let shown = no_debug_text(warning);
    assert!(
        shown.starts_with(&format!(
            "{}: node 1 \"hidden\" has a singular transform",
            path.display()
        )) && shown.ends_with("it gets no instance"),
        "{shown}"
    );
    let mesh = Mesh::load(&path).unwrap();
    assert_eq!(mesh.triangle_count(), 2);
    let [warning] = mesh.load_warnings() else {
        panic!("{:?}", mesh.load_warnings())
    };
    assert!(
        matches!(warning, Error::NodeTransform { node: 1, .. }),
        "{warning:?}"
    );
    assert!(no_debug_text(warning).ends_with("no ray hits them"));
    // Only hidden nodes: the scene is empty, and its error says why.
    let w = one_triangle(r#"{"mesh":0,"scale":[1,0,1]}"#);
    let path = write("only-zero-scale.gltf", &w.json(Some(&w.data_uri()), &[0]));
    let err = Scene::load(&path).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NodeTransform {
                node: 0,
                name: None,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(no_debug_text(&err).contains(": node 0 has a singular transform"));

    // Transforms that cannot place anything are errors naming the node, in both loaders.
    let cases = [
        (
            "infinite scale",
            document(r#"{"name":"huge","mesh":0,"scale":[1e39,1,1]}"#, None),
            1,
            "infinite or NaN",
        ),
        (
            "infinite matrix entry",
            document(
                r#"{"mesh":0,"matrix":[1,0,0,0, 0,1e39,0,0, 0,0,1,0, 0,0,0,1]}"#,
                None,
            ),
            1,
            "infinite or NaN",
        ),
        (
            "infinite translation",
            document(r#"{"mesh":0,"translation":[0,-1e40,0]}"#, None),
            1,
            "infinite or NaN",
        ),
        (
            "rotation that overflows",
            document(r#"{"mesh":0,"rotation":[1e20,0,0,1]}"#, None),
            1,
            "infinite or NaN",
        ),
        (
            "projective matrix",
            document(
                r#"{"mesh":0,"matrix":[1,0,0,0.5, 0,1,0,0, 0,0,1,0, 0,0,0,1]}"#,
                None,
            ),
            1,
            "not an affine transform",
        ),
        (
            "world beyond f32",
            document(
                r#"{"scale":[1e30,1e30,1e30],"children":[2]}"#,
                Some(r#"{"mesh":0,"scale":[1e30,1,1]}"#),
            ),
            2,
            "beyond the range of f32",
        ),
    ];
    for (name, json, node, reason) in cases {
        let path = write(&format!("{}.gltf", name.replace(' ', "-")), &json);
        for (way, result) in [
            ("mesh", Mesh::load(&path).map(drop)),
            ("scene", Scene::load(&path).map(drop)),
        ] {
            let err = result.expect_err(name);
            assert!(
                matches!(&err, Error::NodeTransform { node: n, .. } if *n == node),
                "{name} ({way}): {err:?}"
            );
            let shown = no_debug_text(&err);
            assert!(
                shown.contains(path.to_str().unwrap()) && shown.contains(reason),
                "{name} ({way}): {shown}"
            );
        }
    }
}

/// Loads every corruption of `bytes` the test makes: an error or a valid mesh, never a panic.
fn survives_corruption(name: &str, bytes: &[u8], parse: fn(&[u8]) -> meshray::Result<Mesh>) {
    let check = |b: &[u8]| {
        if let Ok(mesh) = parse(b) {
            meshray::diagnostics::validate(&Bvh::build(mesh)).unwrap();
        }
    };
    let step = (bytes.len() / 600).max(1);
    for end in (0..bytes.len()).step_by(step) {
        check(&bytes[..end]);
    }
    let mut rng = Rng::new(name.len() as u64);
    for _ in 0..1500 {
        let mut b = bytes.to_vec();
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(b.len());
            b[i] ^= 1 << rng.below(8);
        }
        check(&b);
    }
}

#[test]
fn truncated_and_corrupted_files_never_panic() {
    let obj = Mesh::load(common::asset("scene.obj")).unwrap();
    // A small piece keeps the many parses quick: the first 40 triangles.
    let small =
        Mesh::from_buffers(obj.positions().to_vec(), obj.triangles()[..40].to_vec()).unwrap();
    let options = LoadOptions::default();
    survives_corruption("ascii ply", &ascii_ply(&small), |b| {
        Mesh::from_bytes(
            b,
            &LoadOptions {
                format: Some(meshray::mesh::Format::Ply),
                ..Default::default()
            },
        )
    });
    survives_corruption("binary ply", &binary_ply(&small, false), |b| {
        Mesh::from_bytes(
            b,
            &LoadOptions {
                format: Some(meshray::mesh::Format::Ply),
                ..Default::default()
            },
        )
    });
    let (w, roots) = scene_as_gltf(&obj);
    survives_corruption("glb", &w.glb(&roots), |b| {
        Mesh::from_bytes(
            b,
            &LoadOptions {
                format: Some(meshray::mesh::Format::Gltf),
                ..Default::default()
            },
        )
    });
    survives_corruption(
        "gltf",
        w.json(Some(&w.data_uri()), &roots).as_bytes(),
        |b| {
            Mesh::from_bytes(
                b,
                &LoadOptions {
                    format: Some(meshray::mesh::Format::Gltf),
                    ..Default::default()
                },
            )
        },
    );
    assert!(
        Mesh::from_bytes(
            &ascii_ply(&small),
            &LoadOptions {
                format: Some(meshray::mesh::Format::Ply),
                ..options
            }
        )
        .is_ok()
    );
}

#[test]
fn loading_reports_progress_in_bytes() {
    // A 300 × 300 grid: a few megabytes of text, so several reports.
    let n = 300u32;
    let positions: Vec<Point3<f32>> = (0..n * n)
        .map(|i| {
            Point3::new(
                (i % n) as f32 * 0.37,
                (i / n) as f32 * 0.41,
                (i % 7) as f32 * 0.1,
            )
        })
        .collect();
    let mut triangles = Vec::new();
    for y in 0..n - 1 {
        for x in 0..n - 1 {
            let i = y * n + x;
            triangles.push([i, i + 1, i + n + 1]);
            triangles.push([i, i + n + 1, i + n]);
        }
    }
    let grid = Mesh::from_buffers(positions, triangles).unwrap();
    let mut obj = String::new();
    for p in grid.positions() {
        obj.push_str(&format!("v {:?} {:?} {:?}\n", p.x, p.y, p.z));
    }
    for t in grid.triangles() {
        obj.push_str(&format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1));
    }
    let (mut w, tris) = (GltfWriter::default(), grid.triangles().concat());
    w.mesh(grid.positions(), &tris, 4, None);
    w.nodes.push(r#"{"mesh":0}"#.into());
    let files = [
        ("grid.obj", obj.into_bytes(), 3),
        ("grid.ply", ascii_ply(&grid), 3),
        ("grid-binary.ply", binary_ply(&grid, false), 2),
        ("grid.glb", w.glb(&[0]), 1),
    ];
    for (name, bytes, at_least) in files {
        let path = scratch(name);
        std::fs::write(&path, &bytes).unwrap();
        let calls = std::sync::Mutex::new(Vec::new());
        let mesh = Mesh::load_with(
            &path,
            &LoadOptions {
                progress: Some(&|done, total| calls.lock().unwrap().push((done, total))),
                ..Default::default()
            },
        )
        .unwrap();
        same_triangles(&grid, &mesh);
        let calls = calls.into_inner().unwrap();
        let size = bytes.len() as u64;
        assert!(calls.len() >= at_least, "{name}: {calls:?}");
        assert!(
            calls
                .iter()
                .all(|&(done, total)| total == size && done <= size),
            "{name}"
        );
        assert!(
            calls.windows(2).all(|w| w[0].0 <= w[1].0),
            "{name}: {calls:?}"
        );
        assert_eq!(calls.last(), Some(&(size, size)), "{name}");
    }
    // A bad file is an error, its progress never claims the end.
    let path = scratch("grid-bad.ply");
    std::fs::write(&path, &ascii_ply(&grid)[..500_000]).unwrap();
    let last = std::sync::Mutex::new((0, 1));
    let err = Mesh::load_with(
        &path,
        &LoadOptions {
            format: Some(meshray::mesh::Format::Ply),
            progress: Some(&|d, t| *last.lock().unwrap() = (d, t)),
            ..Default::default()
        },
    );
    assert!(err.is_err());
    let (done, total) = *last.lock().unwrap();
    assert!(done < total);
}

#[test]
fn gltf_application_attributes_are_ignored_not_refused() {
    // glTF 2.0 lets applications add attributes whose names start with `_` (`_BATCHID` in
    // Cesium's 3D tiles); they once failed the load as "invalid value".
    let w = one_triangle(r#"{"mesh":0}"#);
    let text = w.json(Some(&w.data_uri()), &[0]).replacen(
        r#""POSITION":0"#,
        r#""POSITION":0,"_BATCHID":0"#,
        1,
    );
    assert!(text.contains("_BATCHID"), "the test must add the attribute");
    let mesh = Mesh::from_bytes(
        text.as_bytes(),
        &LoadOptions {
            format: Some(meshray::mesh::Format::Gltf),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(mesh.triangle_count(), 1);
}

#[test]
fn a_scene_loads_from_gltf_only() {
    // An OBJ has no nodes to place: a sentence, not a scene of one instance or a panic.
    let err = Scene::load(common::asset("scene.obj")).unwrap_err();
    assert!(
        matches!(&err, Error::Parse { .. }) && err.to_string().contains("loads from glTF only"),
        "{err}"
    );
}
