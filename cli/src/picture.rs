//! An RGB picture in memory, and writing it as a PNG without ever leaving a half-written or
//! empty file behind.

use crate::Failure;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// An 8-bit RGB picture, rows top to bottom.
pub struct Picture {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Picture {
    /// A black picture of `width × height` pixels.
    pub fn new(width: u32, height: u32) -> Picture {
        Picture {
            width,
            height,
            rgb: vec![0; width as usize * height as usize * 3],
        }
    }

    /// Sets pixel (x, y) (from the top left).
    pub fn set(&mut self, x: u32, y: u32, colour: [u8; 3]) {
        let i = (y as usize * self.width as usize + x as usize) * 3;
        self.rgb[i..i + 3].copy_from_slice(&colour);
    }

    /// Writes the picture to `path`, which must end in `.png` (checked first, see
    /// [`check_png_path`]). The PNG goes to a temporary file beside `path` that is renamed
    /// over it when complete, so a failure leaves `path` as it was.
    ///
    /// # Errors
    /// A sentence naming the file.
    pub fn save_png(&self, path: &Path) -> Result<(), Failure> {
        check_png_path(path)?;
        let temporary = temporary_beside(path);
        let written = self
            .write_png(&temporary)
            .and_then(|()| std::fs::rename(&temporary, path).map_err(|e| e.to_string()));
        written.map_err(|e| {
            // Best effort: the temporary file may never have been created.
            let _ = std::fs::remove_file(&temporary);
            Failure::failed(format!("{}: {e}", path.display()))
        })
    }

    fn write_png(&self, path: &Path) -> Result<(), String> {
        let file = File::create(path).map_err(|e| e.to_string())?;
        let mut encoder = png::Encoder::new(BufWriter::new(file), self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer
            .write_image_data(&self.rgb)
            .map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())
    }
}

/// Refuses a path that does not end in `.png` (any case): the only format written. Called
/// before any work, so a wrong name costs nothing and creates nothing.
///
/// # Errors
/// A usage error naming the file.
pub fn check_png_path(path: &Path) -> Result<(), Failure> {
    let png = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if png {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "{}: pictures are written as PNG only; give a file name ending in .png",
            path.display()
        )))
    }
}

/// A name for the temporary file beside `path`: hidden, and unique to this process.
fn temporary_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.partial", std::process::id()))
}
