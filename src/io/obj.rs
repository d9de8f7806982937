//! Loading Wavefront OBJ files through `tobj`, with errors that name the file and line.
//!
//! Two readers see every line, and each does what the other cannot:
//!
//! - **The checking reader** ([`CheckingReader`], this module) reads each line first. It
//!   counts lines, so an error can name one (`tobj`'s errors carry no line); it refuses what
//!   `tobj` lets through or panics on (faces of fewer than three corners, indices out of
//!   range, short colour lines in a material file); and since it must read every `v` and
//!   `f` for those checks anyway, it keeps the positions and the fanned triangles itself,
//!   with the faces that really carry texture coordinates and normals (`tobj` invents them
//!   for faces without).
//! - **`tobj`** parses the rest: object and group names, material libraries and the
//!   materials faces use, texture coordinates and normals, indexed per corner. Writing that
//!   here would repeat a maintained parser. It is shown a placeholder `v 0 0 0` for each
//!   vertex line ([`VERTEX_FOR_TOBJ`]), whose position it would otherwise parse a second
//!   time for nothing, and a blank line for each `l` (polylines are not surfaces).
//!
//! A non-finite coordinate is found by a second look at the text, paid only on the error
//! path; a material library that fails to load leaves the geometry loaded, with a warning.

use super::name_file;
use super::options::{LoadOptions, inside, read_limited};
use super::progress::Progress;
use crate::mesh::{CornerAttribute, MeshParts, NO_INDEX, PerTriangle};
use crate::{Error, Mesh, Result};
use nalgebra::{Point2, Point3, Vector3};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{BufRead, Cursor, Read};
use std::path::Path;

/// Why the checking reader stopped `tobj`.
enum Refusal {
    Parse(String),
    Index {
        what: &'static str,
        index: i64,
        count: usize,
    },
    Limit {
        what: &'static str,
        limit: u64,
    },
}

/// Per triangle, in file order: whether its face gave texture coordinates / normals.
const HAS_UV: u8 = 1;
const HAS_NORMAL: u8 = 2;

/// What the checking reader learns while `tobj` reads.
#[derive(Default)]
struct Scan {
    line: usize,
    /// `v`, `vt`, `vn` lines so far.
    counts: [usize; 3],
    refusal: Option<Refusal>,
    /// One entry per triangle (a face of k corners gives k − 2), `HAS_UV | HAS_NORMAL`.
    triangle_flags: Vec<u8>,
    /// Every `v` in file order, as tobj computes it (divided by `w` when there is one).
    positions: Vec<Point3<f32>>,
    /// Per triangle, its corners' `v` numbers from 0, fanned from the face's first corner as
    /// tobj fans it.
    triangles: Vec<[u32; 3]>,
    /// The most triangles the file may give.
    max_triangles: usize,
}

/// Which syntax the checking reader checks.
#[derive(Clone, Copy, PartialEq)]
enum Syntax {
    Obj,
    Mtl,
}

/// A reader that checks each line before `tobj` parses it, counting lines so errors can
/// name one. It catches what `tobj` lets through or panics on: faces with fewer than three
/// corners, face indices out of range (which `tobj` reports late, or not at all for a `vt`
/// or `vn` index), colour lines with fewer than three numbers in a material file. It blanks
/// `l` (polyline) lines, which are not surfaces, and records which faces really carry
/// texture coordinates and normals, since `tobj` invents them for faces that have none.
struct CheckingReader<'a> {
    inner: Cursor<&'a [u8]>,
    syntax: Syntax,
    scan: &'a RefCell<Scan>,
    progress: &'a Progress<'a>,
}

impl Read for CheckingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.at(self.inner.position());
        Ok(n)
    }
}

impl BufRead for CheckingReader<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.progress.at(self.inner.position());
    }

    fn read_line(&mut self, buf: &mut String) -> std::io::Result<usize> {
        let start = buf.len();
        let mut scan = self.scan.borrow_mut();
        scan.line += 1;
        let n = match self.inner.read_line(buf) {
            Ok(n) => {
                self.progress.at(self.inner.position());
                n
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                scan.refusal = Some(Refusal::Parse("the line is not valid UTF-8".into()));
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        let checked = match self.syntax {
            Syntax::Obj => check_obj_line(&buf[start..], &mut scan),
            Syntax::Mtl => check_mtl_line(&buf[start..]),
        };
        match checked {
            Ok(None) => Ok(n),
            Ok(Some(replacement)) => {
                buf.truncate(start);
                buf.push_str(replacement);
                Ok(n)
            }
            Err(refusal) => {
                scan.refusal = Some(refusal);
                Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "refused",
                ))
            }
        }
    }
}

/// What `tobj` reads of a vertex line: the scan has the real position, and tobj's own copy
/// is never used, so it gets a line that costs nothing to parse.
const VERTEX_FOR_TOBJ: &str = "v 0 0 0\n";

/// Checks one OBJ line; `Ok(Some(text))` to show `tobj` `text` instead (a blank line to hide
/// it).
fn check_obj_line(line: &str, scan: &mut Scan) -> Result<Option<&'static str>, Refusal> {
    let mut words = line.split_whitespace();
    match words.next() {
        Some("v") => {
            scan.counts[0] += 1;
            scan.positions
                .push(parse_position(words).map_err(Refusal::Parse)?);
            return Ok(Some(VERTEX_FOR_TOBJ));
        }
        Some("vt") => scan.counts[1] += 1,
        Some("vn") => scan.counts[2] += 1,
        Some("l") => return Ok(Some("\n")),
        Some("f") => {
            let mut corners = 0;
            let mut flags = HAS_UV | HAS_NORMAL;
            // The face's first and latest `v` numbers, for the fan.
            let (mut first, mut previous) = (0, 0);
            for corner in words {
                corners += 1;
                let mut fields = corner.split('/');
                for (k, what) in ["vertex", "texture coordinate", "normal"]
                    .into_iter()
                    .enumerate()
                {
                    let field = fields.next().unwrap_or("");
                    if field.is_empty() {
                        if k == 0 {
                            return Err(Refusal::Parse(format!(
                                "face corner {corner:?} has no vertex index"
                            )));
                        }
                        flags &= ![0, HAS_UV, HAS_NORMAL][k];
                        continue;
                    }
                    let index: i64 = field
                        .parse()
                        .map_err(|_| Refusal::Parse(format!("bad face index {field:?}")))?;
                    let count = scan.counts[k];
                    let in_range = if index > 0 {
                        index as u64 <= count as u64
                    } else {
                        index < 0 && index.unsigned_abs() <= count as u64
                    };
                    if !in_range {
                        return Err(Refusal::Index { what, index, count });
                    }
                    if k == 0 {
                        let vertex = if index > 0 {
                            index - 1
                        } else {
                            count as i64 + index
                        } as u32;
                        if corners >= 3 {
                            scan.triangles.push([first, previous, vertex]);
                        } else if corners == 1 {
                            first = vertex;
                        }
                        previous = vertex;
                    }
                }
                if fields.next().is_some() {
                    return Err(Refusal::Parse(format!(
                        "face corner {corner:?} has more than 3 indices"
                    )));
                }
            }
            if corners < 3 {
                return Err(Refusal::Parse(format!(
                    "a face needs at least 3 corners, this one has {corners}"
                )));
            }
            if scan.triangle_flags.len() + (corners - 2) > scan.max_triangles {
                return Err(Refusal::Limit {
                    what: "triangles",
                    limit: scan.max_triangles as u64,
                });
            }
            scan.triangle_flags
                .extend(std::iter::repeat_n(flags, corners - 2));
        }
        _ => {}
    }
    Ok(None)
}

/// The position of a `v` line, read by the rules tobj reads it by: three numbers, then
/// either nothing, a `w` (not 0) that divides them, or three colour values (ignored).
fn parse_position(mut words: std::str::SplitWhitespace) -> Result<Point3<f32>, String> {
    let mut xyz = [0.0f32; 3];
    for c in &mut xyz {
        let word = words.next().unwrap_or("");
        *c = word
            .parse()
            .map_err(|_| format!("a vertex needs three numbers, not {word:?}"))?;
    }
    let p = Point3::from(xyz);
    match (words.next(), words.next(), words.next(), words.next()) {
        (None, ..) => Ok(p),
        (Some(w), None, ..) => match w.parse::<f32>() {
            Ok(w) if w != 0.0 => Ok(p / w),
            Ok(_) => Err("a vertex's w of 0 would scale it to infinity".into()),
            Err(_) => Err(format!("a vertex's w must be a number, not {w:?}")),
        },
        (Some(_), Some(_), Some(_), None) => Ok(p),
        _ => Err("a vertex takes three numbers, then a w or three colour values".into()),
    }
}

/// Checks one MTL line: colour statements need three numbers (`tobj` 4.0.5 panics on fewer).
fn check_mtl_line(line: &str) -> Result<Option<&'static str>, Refusal> {
    let mut words = line.split_whitespace();
    if let Some(key @ ("Ka" | "Kd" | "Ks" | "Ke")) = words.next()
        && words.count() < 3
    {
        return Err(Refusal::Parse(format!("{key} needs 3 numbers")));
    }
    Ok(None)
}

/// Parses OBJ text; material libraries are read from `dir`, or not at all without one.
pub(crate) fn parse(
    path: &Path,
    dir: Option<&Path>,
    bytes: &[u8],
    limits: &LoadOptions,
    progress: &Progress,
) -> Result<Mesh> {
    let scan = RefCell::new(Scan {
        max_triangles: limits.max_triangles,
        ..Scan::default()
    });
    let warnings = RefCell::new(Vec::new());
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ignore_points: true,
        ignore_lines: true,
    };
    let mut reader = CheckingReader {
        inner: Cursor::new(bytes),
        syntax: Syntax::Obj,
        scan: &scan,
        progress,
    };
    let loaded = tobj::load_obj_buf(&mut reader, &options, |mtl| {
        let mut warnings = warnings.borrow_mut();
        let Some(dir) = dir else {
            warnings.push(Error::Material {
                path: mtl.into(),
                line: None,
                message: "not read: the OBJ came from memory, with no directory".into(),
            });
            return Ok(Default::default());
        };
        if limits.confine_materials && !inside(dir, mtl) {
            warnings.push(Error::Material {
                path: dir.join(mtl),
                line: None,
                message:
                    "outside the OBJ's directory, not read (see LoadOptions::confine_materials)"
                        .into(),
            });
            return Ok(Default::default());
        }
        load_materials(&dir.join(mtl), limits.max_file_bytes, &mut warnings)
    });
    let scan = scan.into_inner();
    let (models, materials) = match loaded {
        Ok(ok) => ok,
        Err(e) => return Err(obj_error(path, e, scan)),
    };
    // The material loader above never fails, so this is always Ok.
    let materials = materials.unwrap_or_default();
    let mesh = assemble(path, models, materials, scan).map_err(|e| with_path(e, path, bytes))?;
    Ok(mesh.with_load_warnings(warnings.into_inner()))
}

/// Turns tobj's models (one per object and material run) into one mesh. Positions and
/// triangles come from the scan, so the mesh keeps the file's vertices, all of them, in the
/// file's order (tobj renumbers them per model, in order of first use, and copies a vertex
/// shared by two models); tobj gives the objects, materials, normals and uvs, per triangle
/// in the same order.
fn assemble(
    path: &Path,
    models: Vec<tobj::Model>,
    materials: Vec<tobj::Material>,
    scan: Scan,
) -> Result<Mesh> {
    let triangle_flags = &scan.triangle_flags;
    let mut mesh = MeshParts {
        positions: scan.positions,
        triangles: scan.triangles,
        normals: None,
        uvs: None,
        object_ids: PerTriangle::Same(0),
        objects: Vec::new(),
        material_ids: PerTriangle::Same(NO_INDEX),
        materials: materials.into_iter().map(|m| m.name).collect(),
    };
    let (mut object_ids, mut material_ids) = (Vec::new(), Vec::new());
    let mut normals = CornerAttribute {
        values: Vec::new(),
        corners: Vec::new(),
    };
    let mut uvs = CornerAttribute {
        values: Vec::new(),
        corners: Vec::new(),
    };
    let mut object_of_name: HashMap<String, u32> = HashMap::new();
    for model in models {
        let m = model.mesh;
        let object = *object_of_name.entry(model.name.clone()).or_insert_with(|| {
            mesh.objects.push(model.name);
            mesh.objects.len() as u32 - 1
        });
        let material = m
            .material_id
            .filter(|&id| id < mesh.materials.len())
            .map_or(NO_INDEX, |id| id as u32);
        let n = m.indices.len() / 3;
        object_ids.extend(std::iter::repeat_n(object, n));
        material_ids.extend(std::iter::repeat_n(material, n));
        push_corners(
            &mut normals,
            &m.normals,
            &m.normal_indices,
            n,
            |v| Vector3::new(v[0], v[1], v[2]),
            3,
        );
        push_corners(
            &mut uvs,
            &m.texcoords,
            &m.texcoord_indices,
            n,
            |v| Point2::new(v[0], v[1]),
            2,
        );
    }
    if object_ids.len() != mesh.triangles.len() {
        // Never seen: tobj fans every face the scan saw, in the same order.
        return Err(Error::Parse {
            path: path.into(),
            line: None,
            message: format!(
                "tobj read {} triangles where meshray counted {}",
                object_ids.len(),
                mesh.triangles.len()
            ),
        });
    }
    mesh.object_ids = PerTriangle::new(object_ids);
    mesh.material_ids = PerTriangle::new(material_ids);
    // tobj invents texture coordinates and normals for faces without them; drop those.
    if triangle_flags.len() == mesh.triangles.len() {
        for (t, &flags) in triangle_flags.iter().enumerate() {
            if flags & HAS_UV == 0 {
                uvs.corners[t] = [NO_INDEX; 3];
            }
            if flags & HAS_NORMAL == 0 {
                normals.corners[t] = [NO_INDEX; 3];
            }
        }
    }
    mesh.normals = has_any(&normals).then_some(normals);
    mesh.uvs = has_any(&uvs).then_some(uvs);
    Mesh::from_parts(mesh)
}

fn has_any<T>(a: &CornerAttribute<T>) -> bool {
    a.corners.iter().any(|c| c[0] != NO_INDEX)
}

fn push_corners<T>(
    attribute: &mut CornerAttribute<T>,
    flat: &[f32],
    indices: &[u32],
    triangles: usize,
    make: impl Fn(&[f32]) -> T,
    width: usize,
) {
    let base = attribute.values.len() as u32;
    if indices.len() == triangles * 3 && !flat.is_empty() {
        attribute.values.extend(flat.chunks_exact(width).map(make));
        attribute.corners.extend(
            indices
                .chunks_exact(3)
                .map(|t| [t[0] + base, t[1] + base, t[2] + base]),
        );
    } else {
        attribute
            .corners
            .extend(std::iter::repeat_n([NO_INDEX; 3], triangles));
    }
}

/// Loads one material library for tobj, never failing: problems become warnings, and the
/// material names are recovered from `newmtl` lines so `usemtl` still resolves.
fn load_materials(path: &Path, max_bytes: u64, warnings: &mut Vec<Error>) -> tobj::MTLLoadResult {
    let bytes = match read_limited(path, max_bytes) {
        Ok(b) => b,
        Err(e) => {
            let message = match e {
                Error::Io { source, .. } => source.to_string(),
                other => other.to_string(),
            };
            warnings.push(Error::Material {
                path: path.into(),
                line: None,
                message,
            });
            return Ok(Default::default());
        }
    };
    let scan = RefCell::new(Scan::default());
    let none = Progress::none();
    let mut reader = CheckingReader {
        inner: Cursor::new(&bytes),
        syntax: Syntax::Mtl,
        scan: &scan,
        progress: &none,
    };
    match tobj::load_mtl_buf(&mut reader) {
        Ok(ok) => Ok(ok),
        Err(e) => {
            let scan = scan.into_inner();
            let message = match scan.refusal {
                Some(Refusal::Parse(m)) => m,
                _ => e.to_string(),
            };
            warnings.push(Error::Material {
                path: path.into(),
                line: Some(scan.line),
                message,
            });
            let names: Vec<String> = String::from_utf8_lossy(&bytes)
                .lines()
                .filter_map(|l| l.trim().strip_prefix("newmtl"))
                .map(|name| name.trim().to_owned())
                .filter(|name| !name.is_empty())
                .collect();
            let map = names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i))
                .collect();
            let materials = names
                .into_iter()
                .map(|name| tobj::Material {
                    name,
                    ..Default::default()
                })
                .collect();
            Ok((materials, map))
        }
    }
}

/// Maps a tobj error to ours, with the line the checking reader stopped at.
fn obj_error(path: &Path, e: tobj::LoadError, scan: Scan) -> Error {
    let path = path.to_path_buf();
    let line = Some(scan.line);
    match scan.refusal {
        Some(Refusal::Parse(message)) => Error::Parse {
            path,
            line,
            message,
        },
        Some(Refusal::Limit { what, limit }) => Error::LimitExceeded {
            path,
            line,
            what,
            limit,
        },
        Some(Refusal::Index { what, index, count }) => Error::IndexOutOfRange {
            path: Some(path),
            line,
            what,
            index,
            count,
        },
        None => Error::Parse {
            path,
            line,
            message: e.to_string(),
        },
    }
}

/// Adds the file to an error from [`Mesh::check`], and for a vertex with a coordinate out of
/// range the line of its `v`.
fn with_path(mut e: Error, path: &Path, bytes: &[u8]) -> Error {
    if let Error::NonFiniteCoordinate { vertex, line, .. }
    | Error::CoordinateOutOfRange { vertex, line, .. } = &mut e
    {
        *line = vertex_line(bytes, *vertex);
    }
    name_file(e, path)
}

/// The lines of a file with their 1-based numbers and first word.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &str, std::str::SplitWhitespace<'_>)> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(i, l)| {
            let text = std::str::from_utf8(l).ok()?;
            let mut words = text.split_whitespace();
            let first = words.next()?;
            Some((i + 1, first, words))
        })
}

/// The 1-based line of the `vertex`th `v` (from 0).
fn vertex_line(bytes: &[u8], vertex: usize) -> Option<usize> {
    lines(bytes)
        .filter(|&(_, first, _)| first == "v")
        .nth(vertex)
        .map(|(line, _, _)| line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Mesh> {
        parse(
            Path::new("mem.obj"),
            None,
            text.as_bytes(),
            &LoadOptions::default(),
            &Progress::none(),
        )
    }

    const TRI: &str = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";

    #[test]
    fn loads_a_triangle() {
        let m = load(&format!("{TRI}f 1 2 3\n")).unwrap();
        assert_eq!(m.triangle_count(), 1);
        assert_eq!(m.triangle(0)[1], Point3::new(1.0, 0.0, 0.0));
        assert!(m.corner_normals(0).is_none());
    }

    #[test]
    fn fans_polygons_and_numbers_in_file_order() {
        let text = "o first\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0.5 2 0\nf 1 2 3 5 4\no second\nf 1 2 3\n";
        let m = load(text).unwrap();
        assert_eq!(m.triangle_count(), 4);
        assert_eq!(m.objects(), ["first", "second"]);
        assert_eq!(
            (0..4).map(|i| m.object_id(i)).collect::<Vec<_>>(),
            [0, 0, 0, 1]
        );
        // the fan: (1 2 3), (1 3 5), (1 5 4)
        let p = |i: usize| m.triangle(i).map(|p| (p.x, p.y));
        assert_eq!(p(0), [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)]);
        assert_eq!(p(1), [(0.0, 0.0), (1.0, 1.0), (0.5, 2.0)]);
        assert_eq!(p(2), [(0.0, 0.0), (0.5, 2.0), (0.0, 1.0)]);
    }

    #[test]
    fn keeps_normals_and_uvs() {
        let text = format!("{TRI}vn 0 0 1\nvt 0.5 0.25\nf 1/1/1 2/1/1 3/1/1\n");
        let m = load(&text).unwrap();
        assert_eq!(m.corner_normals(0).unwrap()[2], Vector3::z());
        assert_eq!(m.corner_uvs(0).unwrap()[0], Point2::new(0.5, 0.25));
    }

    #[test]
    fn syntax_errors_name_the_line() {
        for (text, want) in [
            (format!("{TRI}v 1 x 2\nf 1 2 3\n"), 4),
            (format!("{TRI}f 1 2\n"), 4),
            (format!("{TRI}f 1 a 3\n"), 4),
            (format!("v 0 0 0\nv 1 0\n{TRI}f 1 2 3\n"), 2),
        ] {
            match load(&text) {
                Err(Error::Parse { line, .. }) => assert_eq!(line, Some(want), "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn non_utf8_is_a_parse_error() {
        let mut bytes = TRI.as_bytes().to_vec();
        bytes.extend_from_slice(b"f 1 2 \xff\n");
        match parse(
            Path::new("x.obj"),
            None,
            &bytes,
            &LoadOptions::default(),
            &Progress::none(),
        ) {
            Err(Error::Parse { line: Some(4), .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn out_of_range_indices_name_the_line() {
        for (face, index) in [
            ("f 1 2 4", 4),
            ("f 0 1 2", 0),
            ("f -4 1 2", -4),
            ("f 1/2 2/1 3/1", 2),
        ] {
            let text = format!("{TRI}vt 0 0\n\n{face}\n");
            match load(&text) {
                Err(Error::IndexOutOfRange { line, index: i, .. }) => {
                    assert_eq!((line, i), (Some(6), index), "{face}");
                }
                other => panic!("{face}: {other:?}"),
            }
        }
    }

    #[test]
    fn non_finite_vertex_names_the_line() {
        for bad in ["nan", "inf", "-inf", "1e39"] {
            let text = format!("v 0 0 0\nv 1 {bad} 0\nv 0 1 0\nf 1 2 3\n");
            match load(&text) {
                Err(Error::NonFiniteCoordinate { line, vertex, .. }) => {
                    assert_eq!((line, vertex), (Some(2), 1), "{bad}")
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn non_finite_blame_goes_to_a_used_vertex() {
        let unused_first = "v nan 0 0\nv 0 0 0\nv 1 0 0\nv 0 inf 0\nf 2 3 4\n";
        let w_overflow = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1e30 0 0 1e-30\nf 1 2 3\nf 2 3 4\n";
        for (text, want) in [(unused_first, (4, 3)), (w_overflow, (4, 3))] {
            match load(text) {
                Err(Error::NonFiniteCoordinate { line, vertex, .. }) => {
                    assert_eq!((line, vertex), (Some(want.0), want.1), "{text}")
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        // an unused bad vertex is kept, in its place, but never read, so never refused
        let m = load("v nan 0 0\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 2 3 4\n").unwrap();
        assert!(m.positions()[0].x.is_nan());
        assert_eq!(m.triangles(), [[1, 2, 3]]);
    }

    #[test]
    fn coordinates_beyond_the_range_name_the_line() {
        for (bad, value) in [
            ("1e20", 1e20),
            ("-3e38", -3e38),
            ("1099511627777e1", 1.0995116e13),
        ] {
            let text = format!("v 0 0 0\nv 1 0 0\nv 0 1 {bad}\nf 1 2 3\n");
            match load(&text) {
                Err(e @ Error::CoordinateOutOfRange { .. }) => {
                    let Error::CoordinateOutOfRange {
                        line,
                        vertex,
                        value: v,
                        ..
                    } = e
                    else {
                        unreachable!()
                    };
                    assert_eq!((line, vertex, v), (Some(3), 2, value), "{bad}");
                    assert!(
                        e.to_string()
                            .starts_with("mem.obj:3: vertex 2 has the coordinate"),
                        "{e}"
                    );
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
        // a mesh too small to compute with
        let tiny = "v 0 0 0\nv 1e-20 0 0\nv 0 1e-20 0\nf 1 2 3\n";
        match load(tiny) {
            Err(e @ Error::MeshTooSmall { .. }) => {
                assert!(
                    e.to_string()
                        .starts_with("mem.obj: the mesh spans only 1e-20"),
                    "{e}"
                )
            }
            other => panic!("{other:?}"),
        }
        // the limit itself is accepted, also through a `w` divide
        let at_limit = "v 0 0 0\nv 1099511627776 0 0\nv 0 2199023255552 0 2\nf 1 2 3\n";
        let m = load(at_limit).unwrap();
        assert_eq!(m.positions()[2].y, Mesh::MAX_COORDINATE);
    }

    #[test]
    fn vertex_lines_follow_tobjs_rules() {
        // w divides, three colour values are ignored; w = 0, two extra values or too many
        // are errors naming the line (tobj itself now reads `v 0 0 0` in their place).
        let m = load("v 2 4 6 2\nv 1 0 0 0.5 0.5 0.5\nv 0 1 0\nf 1 2 3\n").unwrap();
        assert_eq!(m.positions()[0], Point3::new(1.0, 2.0, 3.0));
        assert_eq!(m.positions()[1], Point3::new(1.0, 0.0, 0.0));
        for bad in [
            "v 1 2 3 0",
            "v 1 2 3 4 5",
            "v 1 2 3 4 5 6 7",
            "v 1 2",
            "v 1 2 w",
        ] {
            match load(&format!("v 0 0 0\n{bad}\nv 0 1 0\nf 1 2 3\n")) {
                Err(Error::Parse { line: Some(2), .. }) => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn positions_are_the_files_vertices_in_the_files_order() {
        // `f 3 1 2` once gave [C, A, B]; an unused vertex was dropped and a vertex shared by
        // two objects copied.
        let text = "v 1 0 0\nv 0 1 0\nv 0 0 1\nv 9 9 9\nv 2 2 0\no a\nf 3 1 2\no b\nf -5 -4 5\n";
        let m = load(text).unwrap();
        let file: Vec<Point3<f32>> = [
            [1., 0., 0.],
            [0., 1., 0.],
            [0., 0., 1.],
            [9., 9., 9.],
            [2., 2., 0.],
        ]
        .into_iter()
        .map(Point3::from)
        .collect();
        assert_eq!(m.positions(), file);
        assert_eq!(m.triangles(), [[2, 0, 1], [0, 1, 4]]);
        assert_eq!(m.objects(), ["a", "b"]);
    }

    #[test]
    fn no_triangles() {
        for text in ["", "# nothing\n", TRI, "v 0 0 0\nv 1 1 1\nl 1 2\n"] {
            assert!(
                matches!(load(text), Err(Error::NoTriangles { path: Some(_) })),
                "{text:?}"
            );
        }
    }
}
