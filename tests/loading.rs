//! Loading real OBJ files: the demo scene in `assets/`, and the shared test meshes (when
//! present) against their manifest.
//!
//! Besides the documented numbers, every loaded mesh is compared triangle by triangle with a
//! small reference reading of the same file written here: positions, normals and texture
//! coordinates of each corner, object and material of each triangle, all in file order with
//! polygons fanned from their first corner.

mod common;

use meshray::{Error, Mesh};
use nalgebra::{Point2, Point3, Vector3};
use std::path::{Path, PathBuf};
use std::time::Instant;

// ---------------------------------------------------------------------------------------
// A reference reading of an OBJ file
// ---------------------------------------------------------------------------------------

/// One triangle as the file gives it: 0-based indices into the file's `v`, `vt`, `vn`
/// lists, and indices into [`Reference::names`].
struct RefTriangle {
    v: [usize; 3],
    vt: Option<[usize; 3]>,
    vn: Option<[usize; 3]>,
    object: usize,
    material: Option<usize>,
}

#[derive(Default)]
struct Reference {
    positions: Vec<Point3<f32>>,
    texcoords: Vec<Point2<f32>>,
    normals: Vec<Vector3<f32>>,
    /// Object and material names (interned).
    names: Vec<String>,
    triangles: Vec<RefTriangle>,
    mtllibs: Vec<String>,
    /// Per face with more than three corners: (its first triangle, its corners' `v`).
    polygons: Vec<(usize, Vec<usize>)>,
}

impl Reference {
    fn intern(&mut self, name: &str) -> usize {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_owned());
                self.names.len() - 1
            }
        }
    }

    /// Reads OBJ text: `v` (with an optional `w` or colour), `vt`, `vn`, `f` (fanned), `o`
    /// and `g` (one name for the rest of the line), `usemtl`, `mtllib`; ignores the rest.
    fn parse(text: &str) -> Reference {
        let mut r = Reference::default();
        let mut object = r.intern("unnamed_object");
        let mut material = None;
        for (number, raw) in text.split('\n').enumerate() {
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            let where_ = || format!("line {}: {line:?}", number + 1);
            let mut words = line.split_whitespace();
            let floats = |words: std::str::SplitWhitespace| -> Vec<f32> {
                words
                    .map(|w| w.parse().unwrap_or_else(|_| panic!("{}", where_())))
                    .collect()
            };
            match words.next() {
                Some("v") => {
                    let c = floats(words);
                    let w = match c.len() {
                        3 | 6 => 1.0,
                        4 => c[3],
                        _ => panic!("{}", where_()),
                    };
                    r.positions.push(Point3::new(c[0] / w, c[1] / w, c[2] / w));
                }
                Some("vt") => {
                    let c = floats(words);
                    r.texcoords.push(Point2::new(c[0], c[1]));
                }
                Some("vn") => {
                    let c = floats(words);
                    r.normals.push(Vector3::new(c[0], c[1], c[2]));
                }
                Some("f") => {
                    let counts = [r.positions.len(), r.texcoords.len(), r.normals.len()];
                    let corners: Vec<[Option<usize>; 3]> = words
                        .map(|corner| {
                            let mut fields = corner.split('/');
                            std::array::from_fn(|k| {
                                let field = fields.next().unwrap_or("");
                                (!field.is_empty()).then(|| {
                                    let i: i64 =
                                        field.parse().unwrap_or_else(|_| panic!("{}", where_()));
                                    let resolved = if i < 0 { counts[k] as i64 + i } else { i - 1 };
                                    assert!(
                                        (0..counts[k] as i64).contains(&resolved),
                                        "{}",
                                        where_()
                                    );
                                    resolved as usize
                                })
                            })
                        })
                        .collect();
                    assert!(corners.len() >= 3, "{}", where_());
                    let all =
                        |k: usize| -> Option<Vec<usize>> { corners.iter().map(|c| c[k]).collect() };
                    let (v, vt, vn) = (all(0).unwrap(), all(1), all(2));
                    if v.len() > 3 {
                        r.polygons.push((r.triangles.len(), v.clone()));
                    }
                    let fan = |ids: &[usize], j: usize| [ids[0], ids[j], ids[j + 1]];
                    for j in 1..v.len() - 1 {
                        r.triangles.push(RefTriangle {
                            v: fan(&v, j),
                            vt: vt.as_deref().map(|ids| fan(ids, j)),
                            vn: vn.as_deref().map(|ids| fan(ids, j)),
                            object,
                            material,
                        });
                    }
                }
                Some(key @ ("o" | "g")) => {
                    let name = line.trim_start()[key.len()..].trim();
                    object = r.intern(if name.is_empty() {
                        "unnamed_object"
                    } else {
                        name
                    });
                }
                Some("usemtl") => {
                    let name = line.split_once(' ').map_or("", |(_, n)| n.trim());
                    material = Some(r.intern(name));
                }
                Some("mtllib") => {
                    let name = line.split_once(' ').map_or("", |(_, n)| n.trim());
                    r.mtllibs.push(name.to_owned());
                }
                _ => {}
            }
        }
        r
    }
}

/// The `newmtl` names of a material library, in order.
fn newmtl_names(mtl: &Path) -> Vec<String> {
    let bytes = std::fs::read(mtl).unwrap_or_else(|e| panic!("{}: {e}", mtl.display()));
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("newmtl"))
        .map(|name| name.trim().to_owned())
        .collect()
}

/// Compares a loaded mesh with the reference reading of its file; returns the problems
/// (a count per kind and the first few examples).
fn compare_with_reference(mesh: &Mesh, r: &Reference, materials: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    if mesh.triangle_count() != r.triangles.len() {
        return vec![format!(
            "{} triangles, the file has {}",
            mesh.triangle_count(),
            r.triangles.len()
        )];
    }
    if mesh.materials() != materials {
        problems.push(format!(
            "materials {:?}, the libraries name {materials:?}",
            mesh.materials()
        ));
    }
    let mut counts = [0usize; 5];
    let kinds = ["positions", "object", "material", "normals", "uvs"];
    for (i, t) in r.triangles.iter().enumerate() {
        let mut report = |kind: usize, detail: String| {
            counts[kind] += 1;
            if counts[kind] <= 3 {
                problems.push(format!("triangle {i}: {} {detail}", kinds[kind]));
            }
        };
        let want = t.v.map(|v| r.positions[v]);
        if mesh.triangle(i) != want {
            report(
                0,
                format!("{:?}, the file gives {want:?}", mesh.triangle(i)),
            );
        }
        let object = &mesh.objects()[mesh.attributes(i).object as usize];
        if *object != r.names[t.object] {
            report(
                1,
                format!("{object:?}, the file gives {:?}", r.names[t.object]),
            );
        }
        // `usemtl` of a name the libraries do not define gives no material.
        let want_material = t
            .material
            .map(|m| r.names[m].as_str())
            .filter(|name| materials.iter().any(|n| n == name));
        let got_material = mesh
            .attributes(i)
            .material
            .map(|m| mesh.materials().get(m as usize).map(String::as_str));
        if got_material != want_material.map(Some) {
            report(
                2,
                format!("{got_material:?}, the file gives {want_material:?}"),
            );
        }
        let want = t.vn.map(|c| c.map(|n| r.normals[n]));
        if mesh.attributes(i).normals != want {
            report(
                3,
                format!("{:?}, the file gives {want:?}", mesh.attributes(i).normals),
            );
        }
        let want = t.vt.map(|c| c.map(|n| r.texcoords[n]));
        if mesh.attributes(i).uvs != want {
            report(
                4,
                format!("{:?}, the file gives {want:?}", mesh.attributes(i).uvs),
            );
        }
    }
    for (kind, count) in kinds.iter().zip(counts) {
        if count > 0 {
            problems.push(format!("{count} triangles with wrong {kind}"));
        }
    }
    problems
}

// ---------------------------------------------------------------------------------------
// The demo scene
// ---------------------------------------------------------------------------------------

fn scene_path() -> PathBuf {
    common::repository().join("assets/scene.obj")
}

/// (object, triangles, material), in file order, from assets/README.md.
const SCENE: [(&str, usize, &str); 5] = [
    ("ground", 512, "ground_grey"),
    ("sphere", 960, "sphere_red"),
    ("box", 12, "box_green"),
    ("torus", 576, "torus_blue"),
    ("cone", 30, "cone_gold"),
];

#[test]
fn scene_objects_materials_and_attributes() {
    let mesh = Mesh::load(scene_path()).unwrap();
    assert_eq!(mesh.triangle_count(), 2090);
    assert!(
        mesh.load_warnings().is_empty(),
        "{:?}",
        mesh.load_warnings()
    );
    assert_eq!(mesh.objects(), SCENE.map(|(o, _, _)| o));
    assert_eq!(mesh.materials(), SCENE.map(|(_, _, m)| m));
    let mut first = 0;
    for (k, (object, count, material)) in SCENE.into_iter().enumerate() {
        for i in first..first + count {
            assert_eq!(
                mesh.attributes(i).object,
                k as u32,
                "triangle {i} should be {object}"
            );
            let m = mesh
                .attributes(i)
                .material
                .expect("every face follows a usemtl");
            assert_eq!(mesh.materials()[m as usize], material, "triangle {i}");
            let (normals, uvs) = (mesh.attributes(i).normals, mesh.attributes(i).uvs);
            match object {
                "ground" => assert!(normals.is_none() && uvs.is_none(), "triangle {i}"),
                "sphere" => assert!(normals.is_some() && uvs.is_some(), "triangle {i}"),
                // tobj makes up texture coordinates for these; the loader drops them.
                _ => assert!(normals.is_some() && uvs.is_none(), "{object} triangle {i}"),
            }
        }
        first += count;
    }
    // The bounds the README gives.
    let b = mesh.bounds();
    assert_eq!(b.min, Point3::new(-4.0, 0.0, -4.0));
    assert_eq!(b.max, Point3::new(4.0, 2.0, 4.0));
}

#[test]
fn scene_matches_the_file_triangle_by_triangle() {
    let path = scene_path();
    let mesh = Mesh::load(&path).unwrap();
    let reference = Reference::parse(&std::fs::read_to_string(&path).unwrap());
    let materials = newmtl_names(&path.with_file_name("scene.mtl"));
    let problems = compare_with_reference(&mesh, &reference, &materials);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn scene_cone_base_is_fanned_from_its_first_corner() {
    let path = scene_path();
    let mesh = Mesh::load(&path).unwrap();
    let reference = Reference::parse(&std::fs::read_to_string(&path).unwrap());
    // The cone's base is the file's only 16-gon, its last face: triangles 2076 to 2089.
    let big: Vec<&(usize, Vec<usize>)> = reference
        .polygons
        .iter()
        .filter(|(_, corners)| corners.len() > 4)
        .collect();
    let [(first, corners)] = big.as_slice() else {
        panic!("the scene should have exactly one face with more than 4 corners");
    };
    assert_eq!((*first, corners.len()), (2076, 16));
    let v = |k: usize| reference.positions[corners[k]];
    for j in 0..14 {
        assert_eq!(
            mesh.triangle(first + j),
            [v(0), v(j + 1), v(j + 2)],
            "fan triangle {j}"
        );
        assert_eq!(mesh.attributes(first + j).object, 4);
        assert_eq!(
            mesh.attributes(first + j).normals,
            Some([-Vector3::y(); 3]),
            "fan triangle {j}"
        );
    }
    // The same, written out: the fan's first triangle uses the file's vertices 1068, 1069
    // and 1070 (`v 2.200000 0.000000 1.900000` and the next two).
    assert_eq!(
        mesh.triangle(2076),
        [
            Point3::new(2.2, 0.0, 1.9),
            Point3::new(2.154328, 0.0, 2.12961),
            Point3::new(2.024264, 0.0, 2.324264),
        ]
    );
    // And the last one, vertices 1068, 1082 and 1083.
    assert_eq!(
        mesh.triangle(2089),
        [
            Point3::new(2.2, 0.0, 1.9),
            Point3::new(2.024264, 0.0, 1.475736),
            Point3::new(2.154328, 0.0, 1.67039),
        ]
    );
}

/// tobj makes up normals and texture coordinates for faces without them when the file
/// defined some before (the scene only shows this for texture coordinates): each face must
/// get exactly what it gives.
#[test]
fn each_face_keeps_only_the_attributes_it_gives() {
    let text = "\
# every mix of vt and vn, after both exist
v 0 0 0
v 1 0 0
v 0 1 0
v 1 1 0
vt 0.25 0.5
vt 0.75 0.5
vn 0 0 1
vn 0 0.6 0.8
f 1/1/1 2/2/2 3/1/2
f 2 4 3
f 2//2 4//1 3//2
f 2/2 4/1 3/2
f 1/1/1 2/2 3//2 4/1/1
f 1/2/2 2/1/1 4/2/1
";
    let dir = common::scratch_dir("meshray-loading");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("attributes.obj");
    std::fs::write(&path, text).unwrap();
    let loaded = Mesh::load(&path);
    std::fs::remove_dir_all(&dir).unwrap();
    let mesh = loaded.unwrap();
    let presence: Vec<(bool, bool)> = (0..mesh.triangle_count())
        .map(|i| {
            (
                mesh.attributes(i).normals.is_some(),
                mesh.attributes(i).uvs.is_some(),
            )
        })
        .collect();
    // (normals, uvs) per triangle; the mixed quad gives two triangles with neither.
    assert_eq!(
        presence,
        [
            (true, true),
            (false, false),
            (true, false),
            (false, true),
            (false, false),
            (false, false),
            (true, true),
        ]
    );
    let problems = compare_with_reference(&mesh, &Reference::parse(text), &[]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------
// The shared meshes
// ---------------------------------------------------------------------------------------

/// The `.obj` rows of the manifest: (file, triangles, bytes).
fn manifest_objs(dir: &Path) -> Vec<(String, usize, u64)> {
    let text = std::fs::read_to_string(dir.join("manifest.tsv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().map(|h| h.split('\t').collect::<Vec<_>>()),
        Some(vec!["file", "triangles", "vertices", "bytes", "sha256"]),
        "manifest header"
    );
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f[0].ends_with(".obj"))
        .map(|f| {
            assert_eq!(f.len(), 5, "manifest row {f:?}");
            (
                f[0].to_owned(),
                f[1].parse().expect("triangle count"),
                f[3].parse().expect("byte count"),
            )
        })
        .collect()
}

/// The one file whose material library is broken (see the meshes' README, "Quirk").
const SPORTS_CAR: &str = "sports-car/sportsCar.obj";

/// Checks the sports car's broken library: the geometry and the material names survive,
/// with one warning naming the library and the bad line.
fn check_sports_car(path: &Path, mesh: &Mesh, reference: &Reference) -> Vec<String> {
    let mut problems = Vec::new();
    let mtl = path.with_file_name("sportsCar.mtl");
    // The bad line: a colour whose numbers do not all parse (`Ka 0.0000 0.0000 0.0000c`).
    let text = std::fs::read_to_string(&mtl).unwrap();
    let bad_lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let mut words = l.split_whitespace();
            matches!(words.next(), Some("Ka" | "Kd" | "Ks" | "Ke"))
                && words.any(|w| w.parse::<f32>().is_err())
        })
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(bad_lines.len(), 1, "bad colour lines in sportsCar.mtl");
    match mesh.load_warnings() {
        [
            warning @ Error::Material {
                path: warned, line, ..
            },
        ] => {
            if warned.file_name() != mtl.file_name() {
                problems.push(format!("the warning names {}", warned.display()));
            }
            if *line != Some(bad_lines[0]) {
                problems.push(format!(
                    "the warning gives line {line:?}, the bad line is {}",
                    bad_lines[0]
                ));
            }
            let display = warning.to_string();
            if !display.contains(&format!("sportsCar.mtl:{}:", bad_lines[0])) {
                problems.push(format!("the warning says {display:?}"));
            }
        }
        other => problems.push(format!("wanted one material warning, got {other:?}")),
    }
    let names = newmtl_names(&mtl);
    if mesh.materials().len() != names.len() || names.len() != 38 {
        problems.push(format!(
            "{} materials, the library has {} newmtl lines (the README says 38)",
            mesh.materials().len(),
            names.len()
        ));
    }
    // Every face follows a usemtl naming one of them, so every triangle has a material.
    let with_usemtl = reference
        .triangles
        .iter()
        .filter(|t| t.material.is_some())
        .count();
    let with_material = (0..mesh.triangle_count())
        .filter(|&i| mesh.attributes(i).material.is_some())
        .count();
    if with_usemtl == 0 || with_material != with_usemtl {
        problems.push(format!(
            "{with_material} triangles have a material, {with_usemtl} follow a usemtl"
        ));
    }
    problems
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn shared_meshes_load_as_the_manifest_says() {
    let dir = common::meshes_dir().expect("compiled in only with the shared meshes");
    let rows = manifest_objs(&dir);
    assert!(!rows.is_empty(), "no .obj rows in the manifest");
    assert!(
        rows.iter().any(|(file, _, _)| file == SPORTS_CAR),
        "{SPORTS_CAR} is not in the manifest"
    );
    let mut failures = Vec::new();
    let start = Instant::now();
    for (file, triangles, bytes) in &rows {
        let path = dir.join(file);
        let size = std::fs::metadata(&path).map(|m| m.len());
        if size.as_ref().ok() != Some(bytes) {
            failures.push(format!("{file}: size {size:?}, the manifest says {bytes}"));
            continue;
        }
        let t = Instant::now();
        let mesh = match Mesh::load(&path) {
            Ok(mesh) => mesh,
            Err(e) => {
                failures.push(format!("{file}: {e}"));
                continue;
            }
        };
        let load_time = t.elapsed();
        let mut problems = Vec::new();
        if mesh.triangle_count() != *triangles {
            problems.push(format!(
                "{} triangles, the manifest says {triangles}",
                mesh.triangle_count()
            ));
        }
        let reference = Reference::parse(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        let materials: Vec<String> = reference
            .mtllibs
            .iter()
            .flat_map(|lib| newmtl_names(&path.with_file_name(lib)))
            .collect();
        if file == SPORTS_CAR {
            problems.extend(check_sports_car(&path, &mesh, &reference));
        } else if !mesh.load_warnings().is_empty() {
            problems.push(format!("warnings {:?}", mesh.load_warnings()));
        }
        problems.extend(compare_with_reference(&mesh, &reference, &materials));
        println!(
            "{file}: {} triangles, {} objects, {} materials, loaded in {load_time:.2?}",
            mesh.triangle_count(),
            mesh.objects().len(),
            mesh.materials().len(),
        );
        failures.extend(problems.into_iter().map(|p| format!("{file}: {p}")));
    }
    println!(
        "{} meshes loaded and checked in {:.2?}",
        rows.len(),
        start.elapsed()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
