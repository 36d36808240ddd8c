//! `.npy` files of 2-d float32 arrays, the one kind drift reads (GloVe's vectors) and
//! writes (`drift embed`).
//!
//! By hand because the header is one Python dict literal of three known keys; a crate
//! (`npyz`) would bring a Python-literal parser for that one line.

/// Rows, columns and row-major values of a 2-d little-endian float32 `.npy` file.
///
/// Format: magic `\x93NUMPY`, version, header length (u16 LE for version 1, u32 LE for 2
/// and 3), the header, then the data.
pub fn read_f32_2d(bytes: &[u8]) -> std::result::Result<(usize, usize, Vec<f32>), String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file".into());
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes
        .get(start..start + header_len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or("truncated or non-UTF-8 .npy header")?;
    let after = |key: &str| {
        header
            .find(&format!("'{key}':"))
            .map(|at| header[at + key.len() + 3..].trim_start())
            .ok_or(format!("the .npy header has no {key:?}: {header}"))
    };
    if !after("descr")?.starts_with("'<f4'") {
        return Err(format!("expected little-endian float32 ('<f4'): {header}"));
    }
    let fortran = after("fortran_order")?.starts_with("True");
    let shape: Vec<usize> = after("shape")?
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or(format!("unreadable shape: {header}"))?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("unreadable shape: {header}")))
        .collect::<std::result::Result<_, _>>()?;
    let [rows, cols] = shape[..] else {
        return Err(format!("expected a 2-d array, found shape {shape:?}"));
    };
    let data = &bytes[start + header_len..];
    if data.len() != rows * cols * 4 {
        return Err(format!(
            "{} data bytes for a {rows} x {cols} float32 array",
            data.len()
        ));
    }
    let values: Vec<f32> = data
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    if !fortran {
        return Ok((rows, cols, values));
    }
    // Fortran order stores column j as values[j * rows..(j + 1) * rows].
    let mut out = vec![0f32; rows * cols];
    for (j, column) in values.chunks_exact(rows.max(1)).enumerate() {
        for (i, &v) in column.iter().enumerate() {
            out[i * cols + j] = v;
        }
    }
    Ok((rows, cols, out))
}

/// The `.npy` bytes (version 1.0, little-endian float32, C order) of the `rows x cols`
/// row-major `values`, as `numpy.save` writes them: the header padded with spaces to a
/// multiple of 64 bytes, ending in a newline.
pub fn write_f32_2d(rows: usize, cols: usize, values: &[f32]) -> Vec<u8> {
    assert_eq!(values.len(), rows * cols, "{rows} x {cols} values");
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    // magic (6) + version (2) + length (2) + dict + padding + newline
    let unpadded = 10 + dict.len() + 1;
    let header = format!(
        "{dict}{}\n",
        " ".repeat(unpadded.next_multiple_of(64) - unpadded)
    );
    let mut out = Vec::with_capacity(10 + header.len() + values.len() * 4);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back() {
        let values: Vec<f32> = (0..12).map(|i| i as f32 * 0.5 - 1.0).collect();
        let bytes = write_f32_2d(3, 4, &values);
        assert_eq!(
            (10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize) % 64,
            0
        );
        assert_eq!(read_f32_2d(&bytes).unwrap(), (3, 4, values));
        assert_eq!(
            read_f32_2d(&write_f32_2d(0, 7, &[])).unwrap(),
            (0, 7, vec![])
        );
    }
}
