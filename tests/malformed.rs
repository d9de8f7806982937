//! The malformed-OBJ corpus: every file in `assets/malformed/` gives the error that
//! `expected.tsv` names, with the file and line, and no load panics.

use meshray::{Error, Mesh};
use std::collections::BTreeSet;
use std::panic::catch_unwind;
use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/malformed")).to_path_buf()
}

/// One row of `expected.tsv`.
#[derive(Debug)]
struct Row {
    file: String,
    kind: String,
    line: Option<usize>,
    triangles: Option<usize>,
}

fn read_expected() -> Vec<Row> {
    let path = corpus_dir().join("expected.tsv");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(
        lines.next().map(|h| h.split('\t').collect::<Vec<_>>()),
        Some(vec!["file", "kind", "line", "triangles"]),
        "header of {}",
        path.display()
    );
    let optional = |field: &str, what: &str| -> Option<usize> {
        (field != "-").then(|| {
            field
                .parse()
                .unwrap_or_else(|_| panic!("bad {what} {field:?} in expected.tsv"))
        })
    };
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let fields: Vec<&str> = l.split('\t').collect();
            assert_eq!(fields.len(), 4, "expected.tsv row {l:?}");
            Row {
                file: fields[0].to_owned(),
                kind: fields[1].to_owned(),
                line: optional(fields[2], "line"),
                triangles: optional(fields[3], "triangle count"),
            }
        })
        .collect()
}

/// Loads a file, turning a panic into a message.
fn load(path: &Path) -> Result<meshray::Result<Mesh>, String> {
    catch_unwind(|| Mesh::load(path)).map_err(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        format!("load panicked: {message}")
    })
}

/// The file and line an error reports, and whether its kind is the one wanted.
fn located(error: &Error, kind: &str) -> Option<(Option<PathBuf>, Option<usize>)> {
    match (kind, error) {
        ("parse", Error::Parse { path, line, .. }) => Some((Some(path.clone()), *line)),
        ("index", Error::IndexOutOfRange { path, line, .. }) => Some((path.clone(), *line)),
        ("nonfinite", Error::NonFiniteCoordinate { path, line, .. }) => Some((path.clone(), *line)),
        ("empty", Error::NoTriangles { path }) => Some((path.clone(), None)),
        ("material", Error::Material { path, line, .. }) => Some((Some(path.clone()), *line)),
        _ => None,
    }
}

/// Checks that `error` is of `kind`, names `path` and `line`, and says so in its Display.
fn check_error(error: &Error, kind: &str, path: &Path, line: Option<usize>) -> Vec<String> {
    let mut problems = Vec::new();
    let Some((got_path, got_line)) = located(error, kind) else {
        return vec![format!("wanted a `{kind}` error, got {error:?}")];
    };
    if got_path.as_deref() != Some(path) {
        problems.push(format!(
            "the error names {got_path:?}, not {}: {error:?}",
            path.display()
        ));
    }
    if got_line != line {
        problems.push(format!(
            "the error gives line {got_line:?}, not {line:?}: {error:?}"
        ));
    }
    let display = error.to_string();
    let name = path.file_name().unwrap().to_string_lossy();
    if !display.contains(&*name) {
        problems.push(format!("the message {display:?} does not name {name}"));
    }
    if let Some(l) = line
        && !display.contains(&format!("{name}:{l}:"))
    {
        problems.push(format!(
            "the message {display:?} does not contain \"{name}:{l}:\""
        ));
    }
    problems
}

/// The material library an OBJ names in its `mtllib` line.
fn mtllib_of(obj: &Path) -> PathBuf {
    let text = std::fs::read_to_string(obj).unwrap();
    let name = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("mtllib "))
        .unwrap_or_else(|| panic!("{} has no mtllib line", obj.display()));
    obj.with_file_name(name.trim())
}

/// The `newmtl` names of a material library, in order (none when it is missing).
fn newmtl_names(mtl: &Path) -> Vec<String> {
    std::fs::read_to_string(mtl)
        .map(|text| {
            text.lines()
                .filter_map(|l| l.trim().strip_prefix("newmtl "))
                .map(|n| n.trim().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn check_row(row: &Row) -> Vec<String> {
    let path = corpus_dir().join(&row.file);
    let loaded = match load(&path) {
        Ok(loaded) => loaded,
        Err(panic) => return vec![panic],
    };
    match (row.kind.as_str(), loaded) {
        ("material", Err(e)) => vec![format!("the load failed, it should succeed: {e}")],
        ("material", Ok(mesh)) => {
            let mut problems = Vec::new();
            if Some(mesh.triangle_count()) != row.triangles {
                problems.push(format!(
                    "{} triangles, expected {:?}",
                    mesh.triangle_count(),
                    row.triangles
                ));
            }
            let mtl = mtllib_of(&path);
            match mesh.load_warnings() {
                [warning] => problems.extend(check_error(warning, "material", &mtl, row.line)),
                other => problems.push(format!("wanted one material warning, got {other:?}")),
            }
            // The names survive a broken library (from its `newmtl` lines), so `usemtl`
            // still resolves; a missing library gives none.
            let names = newmtl_names(&mtl);
            if mesh.materials() != names.as_slice() {
                problems.push(format!(
                    "materials {:?}, expected {names:?} from the newmtl lines",
                    mesh.materials()
                ));
            }
            let want_id = (!names.is_empty()).then_some(0);
            for t in 0..mesh.triangle_count() {
                if mesh.attributes(t).material != want_id {
                    problems.push(format!(
                        "triangle {t} has material {:?}, expected {want_id:?}",
                        mesh.attributes(t).material
                    ));
                }
            }
            problems
        }
        (kind, Ok(mesh)) => vec![format!(
            "loaded {} triangles, expected a `{kind}` error",
            mesh.triangle_count()
        )],
        (kind, Err(e)) => check_error(&e, kind, &path, row.line),
    }
}

#[test]
fn every_file_gives_its_expected_error() {
    let rows = read_expected();
    assert!(rows.len() >= 30, "only {} rows in expected.tsv", rows.len());
    let mut failures = Vec::new();
    for row in &rows {
        if !["parse", "index", "nonfinite", "empty", "material"].contains(&row.kind.as_str()) {
            failures.push(format!("{}: unknown kind {:?}", row.file, row.kind));
            continue;
        }
        if (row.kind == "material") != row.triangles.is_some() {
            failures.push(format!(
                "{}: a triangle count belongs to material rows only",
                row.file
            ));
        }
        for problem in check_row(row) {
            failures.push(format!("{} ({}): {problem}", row.file, row.kind));
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems in {} files:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

#[test]
fn every_obj_file_is_in_the_table_once() {
    let rows = read_expected();
    let mut listed = BTreeSet::new();
    for row in &rows {
        assert!(
            listed.insert(row.file.as_str()),
            "{} is listed twice",
            row.file
        );
        assert!(
            corpus_dir().join(&row.file).is_file(),
            "{} is listed but does not exist",
            row.file
        );
    }
    let on_disk: BTreeSet<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".obj"))
        .collect();
    let untested: Vec<&String> = on_disk
        .iter()
        .filter(|name| !listed.contains(name.as_str()))
        .collect();
    assert!(untested.is_empty(), "not in expected.tsv: {untested:?}");
}

#[test]
fn a_missing_file_is_an_io_error() {
    let path = corpus_dir().join("there_is_no_such_file.obj");
    match load(&path).unwrap() {
        Err(
            ref e @ Error::Io {
                path: ref p,
                ref source,
            },
        ) => {
            assert_eq!(p, &path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            assert!(e.to_string().contains("there_is_no_such_file.obj"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_directory_is_an_io_error() {
    let path = corpus_dir();
    match load(&path).unwrap() {
        Err(ref e @ Error::Io { path: ref p, .. }) => {
            assert_eq!(p, &path);
            assert!(e.to_string().contains("malformed"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}
