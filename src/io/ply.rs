//! PLY, ASCII and binary, through `ply-rs-bw` (the `ply` feature, on by default).
//!
//! The parser fills our own element types (only `x y z` of a vertex and the index list of a
//! face are kept), so a mesh of millions of vertices costs no map per vertex. Other
//! elements (edges, materials...) are read past and dropped.

use super::progress::{Progress, Reporting};
use super::{name_file, too_many_triangles};
use crate::{Error, LoadOptions, Mesh, Result};
use nalgebra::Point3;
use ply_rs_bw::parser::{Parser, Reader};
use ply_rs_bw::ply::{Encoding, Property, PropertyAccess, PropertyAccessResult};
use std::io::Cursor;
use std::path::Path;

/// A vertex: its position, and which of `x y z` the file gave.
struct Vertex {
    position: [f64; 3],
    seen: u8,
}

impl PropertyAccess for Vertex {
    fn new() -> Self {
        Vertex {
            position: [0.0; 3],
            seen: 0,
        }
    }

    fn set_property(&mut self, name: &str, property: Property) -> PropertyAccessResult {
        let axis = match name {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            _ => return PropertyAccessResult::Ignored,
        };
        let value = match property {
            Property::Char(v) => v.into(),
            Property::UChar(v) => v.into(),
            Property::Short(v) => v.into(),
            Property::UShort(v) => v.into(),
            Property::Int(v) => v.into(),
            Property::UInt(v) => v.into(),
            Property::Float(v) => v.into(),
            Property::Double(v) => v,
            _ => return PropertyAccessResult::UnsupportedType,
        };
        self.position[axis] = value;
        self.seen |= 1 << axis;
        PropertyAccessResult::Set
    }
}

/// A face: its corners, as signed numbers so a negative index can be reported as written.
struct Face {
    corners: Vec<i64>,
}

impl PropertyAccess for Face {
    fn new() -> Self {
        Face {
            corners: Vec::new(),
        }
    }

    fn set_property(&mut self, name: &str, property: Property) -> PropertyAccessResult {
        if name != "vertex_indices" && name != "vertex_index" {
            return PropertyAccessResult::Ignored;
        }
        self.corners = match property {
            Property::ListChar(v) => v.into_iter().map(i64::from).collect(),
            Property::ListUChar(v) => v.into_iter().map(i64::from).collect(),
            Property::ListShort(v) => v.into_iter().map(i64::from).collect(),
            Property::ListUShort(v) => v.into_iter().map(i64::from).collect(),
            Property::ListInt(v) => v.into_iter().map(i64::from).collect(),
            Property::ListUInt(v) => v.into_iter().map(i64::from).collect(),
            _ => return PropertyAccessResult::UnsupportedType,
        };
        PropertyAccessResult::Set
    }
}

/// Any other element: read past, nothing kept.
struct Skipped;

impl PropertyAccess for Skipped {
    fn new() -> Self {
        Skipped
    }
}

pub(crate) fn parse_ply(
    path: &Path,
    bytes: &[u8],
    options: &LoadOptions,
    progress: &Progress,
) -> Result<Mesh> {
    let error = |line: Option<usize>, message: String| Error::Parse {
        path: path.into(),
        line,
        message,
    };
    let ply_error = |e: ply_rs_bw::parser::ParseError| {
        // The parser's text starts with its own "Line N: "; the error names the line anyway.
        let text = e.to_string();
        let message = match e.line() {
            Some(line) => text
                .trim_start_matches(&format!("Line {line}: "))
                .to_owned(),
            None => text,
        };
        error(e.line(), message)
    };
    let mut reader = Reader::new(Reporting::new(Cursor::new(bytes), progress));
    let header = Parser::<Skipped>::new()
        .read_header(&mut reader)
        .map_err(ply_error)?;
    let ascii = header.encoding == Encoding::Ascii;
    // Every entry of an element takes at least a byte (a line of ASCII; a property, binary),
    // so a count the file cannot hold is refused before any entry is read; and a vertex or
    // face element without properties, whose entries the parser would collect from no
    // bytes at all, is refused outright (found by fuzzing: 557 bytes that declared 444
    // million property-less vertices, and the parser kept allocating).
    for (name, element) in &header.elements {
        let empty = element.properties.is_empty() && (name == "vertex" || name == "face");
        if element.count > bytes.len() || (empty && element.count > 0) {
            let message = if empty {
                format!("element `{name}` has no properties")
            } else {
                format!(
                    "element `{name}` declares {} entries, which the file's {} bytes cannot hold",
                    element.count,
                    bytes.len()
                )
            };
            return Err(error(None, message));
        }
    }
    let (mut vertices, mut faces, mut face_line) = (None, None, None);
    for (name, element) in &header.elements {
        match name.as_str() {
            "vertex" => {
                let read =
                    Parser::<Vertex>::new().read_payload_for_element(&mut reader, element, &header);
                vertices = Some(read.map_err(ply_error)?);
            }
            "face" => {
                if element.count > options.max_triangles {
                    return Err(too_many_triangles(path, options));
                }
                // The line of the first face, for errors about a face's corners (ASCII only:
                // one element per line).
                face_line = ascii.then(|| reader.line() + 1);
                let read =
                    Parser::<Face>::new().read_payload_for_element(&mut reader, element, &header);
                faces = Some(read.map_err(ply_error)?);
            }
            _ => {
                Parser::<Skipped>::new()
                    .read_payload_for_element(&mut reader, element, &header)
                    .map_err(ply_error)?;
            }
        }
    }
    let (Some(vertices), Some(faces)) = (vertices, faces) else {
        return Err(error(None, "no `vertex` and `face` elements".into()));
    };
    let mut positions = Vec::with_capacity(vertices.len());
    for (i, vertex) in vertices.iter().enumerate() {
        if vertex.seen != 0b111 {
            return Err(error(None, format!("vertex {i} lacks x, y or z")));
        }
        positions.push(Point3::from(vertex.position.map(|c| c as f32)));
    }
    let count = positions.len();
    let mut triangles = Vec::with_capacity(faces.len());
    for (i, face) in faces.iter().enumerate() {
        let line = face_line.map(|first| first + i);
        if face.corners.len() < 3 {
            return Err(error(
                line,
                format!(
                    "face {i} has {} corners; a face needs 3",
                    face.corners.len()
                ),
            ));
        }
        if let Some(&index) = face.corners.iter().find(|&&c| c < 0 || c as usize >= count) {
            return Err(Error::IndexOutOfRange {
                path: Some(path.into()),
                line,
                what: "vertex",
                index,
                count,
            });
        }
        if triangles.len() + face.corners.len() - 2 > options.max_triangles {
            return Err(too_many_triangles(path, options));
        }
        let first = face.corners[0] as u32;
        triangles.extend(
            face.corners[1..]
                .windows(2)
                .map(|w| [first, w[0] as u32, w[1] as u32]),
        );
    }
    Mesh::from_buffers(positions, triangles).map_err(|e| name_file(e, path))
}
