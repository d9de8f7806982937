//! Reading a command's arguments: each command has a handful of flags, so they are read by
//! hand, front to back, with one error sentence per way a value can be wrong.

use crate::Failure;
use crate::camera::{Placement, orbit_direction};
use meshray::Culling;
use meshray::tree::BuildQuality;
use nalgebra::Point3;
use std::fmt::Display;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::str::FromStr;

/// The program's arguments after its name, as text.
///
/// # Errors
/// A usage error naming an argument that is not valid UTF-8 (rather than the panic of
/// `std::env::args`).
pub fn command_line() -> Result<Vec<String>, Failure> {
    std::env::args_os()
        .skip(1)
        .map(|word| {
            word.into_string().map_err(|word| {
                Failure::usage(format!(
                    "the argument {} is not valid UTF-8; rename the file or give it another way",
                    word.to_string_lossy()
                ))
            })
        })
        .collect()
}

/// Whether the words ask for help (`-h` or `--help` anywhere): the command then prints its
/// usage and exits 0, whatever else is on the line.
pub fn wants_help(words: &[String]) -> bool {
    words.iter().any(|w| w == "-h" || w == "--help")
}

/// The error for a word starting with `-` that the command does not know.
pub fn unknown(flag: &str) -> Failure {
    Failure::usage(format!("unknown option {flag}"))
}

/// Takes `path` as the command's one mesh (replacing the default); a second mesh on the line
/// is a usage error rather than silently winning.
pub fn set_mesh(
    mesh: &mut PathBuf,
    given: &mut bool,
    path: &str,
    command: &str,
) -> Result<(), Failure> {
    if std::mem::replace(given, true) {
        return Err(Failure::usage(format!(
            "\"{path}\" is a second mesh; {command} takes one"
        )));
    }
    *mesh = PathBuf::from(path);
    Ok(())
}

/// A command's arguments, consumed front to back.
pub struct Args {
    words: std::vec::IntoIter<String>,
}

impl Args {
    /// The words after the command's name.
    pub fn new(words: Vec<String>) -> Args {
        Args {
            words: words.into_iter(),
        }
    }

    /// The next word, if any.
    pub fn next_word(&mut self) -> Option<String> {
        self.words.next()
    }

    /// The word after `flag`, described as `what` when it is missing ("--out needs a file
    /// name").
    pub fn value(&mut self, flag: &str, what: &str) -> Result<String, Failure> {
        self.words
            .next()
            .ok_or_else(|| Failure::usage(format!("{flag} needs {what}")))
    }

    /// The `N` finite numbers after `flag`.
    pub fn numbers<const N: usize>(&mut self, flag: &str) -> Result<[f32; N], Failure> {
        let mut out = [0.0; N];
        let need = || {
            if N == 1 {
                format!("{flag} needs a number")
            } else {
                format!("{flag} needs {N} numbers")
            }
        };
        for x in &mut out {
            let word = self.words.next().ok_or_else(|| Failure::usage(need()))?;
            *x = word
                .parse::<f32>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| Failure::usage(format!("{}, and \"{word}\" is not one", need())))?;
        }
        Ok(out)
    }

    /// The point (three finite numbers) after `flag`.
    pub fn point(&mut self, flag: &str) -> Result<Point3<f32>, Failure> {
        let [x, y, z] = self.numbers(flag)?;
        Ok(Point3::new(x, y, z))
    }

    /// The whole number in `range` after `flag`.
    pub fn whole<T>(&mut self, flag: &str, range: RangeInclusive<T>) -> Result<T, Failure>
    where
        T: FromStr + PartialOrd + Display,
    {
        let expected = format!(
            "{flag} takes a whole number from {} to {}",
            range.start(),
            range.end()
        );
        let word = self.words.next().ok_or_else(|| Failure::usage(&expected))?;
        match word.parse::<T>() {
            Ok(n) if range.contains(&n) => Ok(n),
            _ => Err(Failure::usage(format!("{expected}, not \"{word}\""))),
        }
    }

    /// The word after `flag`, one of `choices` (name, value).
    pub fn choice<T: Copy>(&mut self, flag: &str, choices: &[(&str, T)]) -> Result<T, Failure> {
        let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
        let expected = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        };
        let word = self
            .words
            .next()
            .ok_or_else(|| Failure::usage(format!("{flag} takes {expected}")))?;
        choices
            .iter()
            .find(|(name, _)| *name == word)
            .map(|(_, value)| *value)
            .ok_or_else(|| Failure::usage(format!("{flag} takes {expected}, not \"{word}\"")))
    }

    /// Reads the camera flags every command that looks at a mesh shares, when `flag` is one
    /// of them, into `placement`; returns whether it was:
    ///
    /// - `--eye X Y Z`: where the eye is (the target stays the bounds' centre unless given);
    /// - `--target X Y Z`: the point looked at;
    /// - `--orbit YAW PITCH`: without `--eye`, the eye's direction from the target in degrees
    ///   (yaw about +y from +z, pitch up).
    pub fn camera_flag(&mut self, flag: &str, placement: &mut Placement) -> Result<bool, Failure> {
        match flag {
            "--eye" => placement.eye = Some(self.point(flag)?),
            "--target" => placement.target = Some(self.point(flag)?),
            "--orbit" => {
                let [yaw, pitch] = self.numbers(flag)?;
                placement.direction = Some(orbit_direction(yaw, pitch));
            }
            _ => return Ok(false),
        }
        if placement.eye.is_some() && placement.direction.is_some() {
            return Err(Failure::usage(
                "--eye and --orbit both place the eye: give one of them",
            ));
        }
        Ok(true)
    }
}

/// The cullings by the names `--cull` takes (the faces culled, as Python and JavaScript
/// name them).
pub const CULLINGS: [(&str, Culling); 3] = [
    ("none", Culling::None),
    ("back", Culling::Back),
    ("front", Culling::Front),
];

/// The build qualities by the names `--quality` takes.
pub const QUALITIES: [(&str, BuildQuality); 3] = [
    ("fast", BuildQuality::Fast),
    ("default", BuildQuality::Default),
    ("high", BuildQuality::High),
];

/// `quality`'s name in [`QUALITIES`].
pub fn quality_name(quality: BuildQuality) -> &'static str {
    QUALITIES
        .iter()
        .find(|(_, q)| *q == quality)
        .map_or("?", |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Args {
        Args::new(words.iter().map(|w| w.to_string()).collect())
    }

    #[test]
    fn errors_are_sentences_without_debug_text() {
        let cull = [("none", 0), ("back", 1), ("front", 2)];
        let error = args(&["sideways"]).choice("--cull", &cull).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--cull takes none, back or front, not \"sideways\" (see --help)"
        );
        let error = args(&[]).choice("--cull", &cull).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--cull takes none, back or front (see --help)"
        );
        let error = args(&["1", "x"]).numbers::<2>("--pixel").unwrap_err();
        assert_eq!(
            error.to_string(),
            "--pixel needs 2 numbers, and \"x\" is not one (see --help)"
        );
        let error = args(&["0"]).whole::<u32>("--samples", 1..=64).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--samples takes a whole number from 1 to 64, not \"0\" (see --help)"
        );
        assert!(args(&["nan"]).numbers::<1>("--x").is_err());
    }

    #[test]
    fn eye_and_orbit_exclude_each_other() {
        let mut placement = Placement::default();
        let mut a = args(&["1", "2", "3", "10", "20"]);
        assert!(a.camera_flag("--eye", &mut placement).unwrap());
        assert!(a.camera_flag("--orbit", &mut placement).is_err());
        assert!(!a.camera_flag("--size", &mut placement).unwrap());
    }
}
