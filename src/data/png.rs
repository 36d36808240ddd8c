//! PNG images as drift's image inputs read them: decoded (palette and 16-bit samples
//! expanded), alpha composited over white, values in `[0, 1]`. The emoji corpus and
//! `drift embed` on image files read them here; the portrait folders keep their own reader,
//! which averages blocks down to 32x32 and never met an alpha channel.

/// A decoded image, RGB per pixel, row-major.
pub struct DecodedPng {
    /// Pixels across.
    pub width: usize,
    /// Pixels down.
    pub height: usize,
    /// `[r, g, b]` in `[0, 1]`, `height * width` of them.
    pub pixels: Vec<[f64; 3]>,
}

impl DecodedPng {
    /// The image as float32 `[3, height, width]`, channel-major.
    pub fn channels_first(&self) -> Vec<f32> {
        (0..3)
            .flat_map(|c| self.pixels.iter().map(move |p| p[c] as f32))
            .collect()
    }
}

/// Decodes `bytes`, or says why not (what the `png` crate reports).
pub fn decode_over_white(bytes: &[u8]) -> Result<DecodedPng, String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let mut buf = vec![0; reader.output_buffer_size().ok_or("image too large")?];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    let (w, h) = (info.width as usize, info.height as usize);
    let channels = match info.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => return Err("palette not expanded".into()),
    };
    let mut pixels = Vec::with_capacity(w * h);
    for y in 0..h {
        let row = &buf[y * info.line_size..][..w * channels];
        for px in row.chunks_exact(channels) {
            let v = |i: usize| f64::from(px[i]) / 255.0;
            let (rgb, alpha) = match channels {
                1 => ([v(0); 3], 1.0),
                2 => ([v(0); 3], v(1)),
                3 => ([v(0), v(1), v(2)], 1.0),
                _ => ([v(0), v(1), v(2)], v(3)),
            };
            pixels.push(rgb.map(|c| alpha * c + (1.0 - alpha)));
        }
    }
    Ok(DecodedPng {
        width: w,
        height: h,
        pixels,
    })
}
