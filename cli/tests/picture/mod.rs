//! The PNG files the command writes, read back as RGB pixels for the picture tests.

use std::path::Path;

/// An RGB picture read back from a PNG.
pub struct Picture {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Picture {
    /// Reads `path`, which must hold an 8-bit RGB PNG.
    pub fn read(path: &Path) -> Picture {
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut rgb).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        rgb.truncate(info.buffer_size());
        Picture {
            width: info.width,
            height: info.height,
            rgb,
        }
    }

    /// The pixel in column `x`, row `y` (top down).
    pub fn at(&self, x: u32, y: u32) -> [u8; 3] {
        let i = 3 * (y * self.width + x) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// Every pixel, row by row.
    pub fn pixels(&self) -> impl Iterator<Item = [u8; 3]> + '_ {
        self.rgb.chunks(3).map(|p| [p[0], p[1], p[2]])
    }
}
