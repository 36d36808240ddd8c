//! The loaders of the paper's real formats (src/data/formats/), each on a small fixture
//! written here in exactly that format, and each rejecting a malformed file with an error
//! naming the file and the line or entry.

use std::path::{Path, PathBuf};

use drift::data::{self, Dataset, Inputs, Targets};
use drift::data::{DataOptions, DataSpec};
use drift::slices::Timestamp;

fn load(path: &Path, options: &[(&str, serde_json::Value)]) -> drift::Result<Dataset> {
    let options: DataOptions = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    // JSON lines give text; data::load keeps it as text (drift::text::load turns it
    // into what models read).
    data::load(
        &DataSpec::Path(path.to_path_buf()),
        &options,
        Path::new("/"),
    )
}

fn error(path: &Path, options: &[(&str, serde_json::Value)]) -> String {
    load(path, options)
        .expect_err("malformed input is refused")
        .to_string()
}

fn write_png(path: &Path, width: u32, height: u32, color: png::ColorType, data: &[u8]) {
    let file = std::fs::File::create(path).unwrap();
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    encoder.set_color(color);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .unwrap()
        .write_image_data(data)
        .unwrap();
}

fn pixel(data: &Dataset, row: usize, channel: usize, y: usize, x: usize) -> f32 {
    let Inputs::Images { pixels, .. } = &data.inputs else {
        panic!("images")
    };
    pixels[((row * 3 + channel) * 32 + y) * 32 + x]
}

fn labels(data: &Dataset) -> Vec<u32> {
    let Targets::Classes { labels, .. } = &data.targets else {
        panic!("classes")
    };
    labels.clone()
}

fn years(data: &Dataset) -> Vec<i32> {
    data.timestamps.iter().map(|t| t.year()).collect()
}

/// F/1950_a.png: 64x64 grey of 2x2 blocks (block mean exact); M/1961_b.png: 48x48 RGB
/// (ratio 1.5); F/1949_c.png: 32x32 grey; a text file that is ignored.
fn yearbook_folder(dir: &Path) -> PathBuf {
    let root = dir.join("faces");
    std::fs::create_dir_all(root.join("F")).unwrap();
    std::fs::create_dir_all(root.join("M")).unwrap();
    let blocks: Vec<u8> = (0..64 * 64)
        .map(|p| {
            let (y, x) = (p / 64, p % 64);
            (4 * ((y / 2 + x / 2) % 60) + (y % 2) * 2 + x % 2) as u8
        })
        .collect();
    write_png(
        &root.join("F/1950_a.png"),
        64,
        64,
        png::ColorType::Grayscale,
        &blocks,
    );
    let rgb: Vec<u8> = (0..48 * 48)
        .flat_map(|p| [(3 * (p % 48)) as u8, 0, 255])
        .collect();
    write_png(
        &root.join("M/1961_b.png"),
        48,
        48,
        png::ColorType::Rgb,
        &rgb,
    );
    write_png(
        &root.join("F/1949_c.png"),
        32,
        32,
        png::ColorType::Grayscale,
        &[51; 1024],
    );
    std::fs::write(root.join("M/notes.txt"), "not a portrait").unwrap();
    root
}

#[test]
fn yearbook_folder_reads_resizes_and_maps_labels() {
    let dir = tempfile::tempdir().unwrap();
    let root = yearbook_folder(dir.path());
    let data = load(&root, &[]).unwrap();
    // Rows in relative-path order: F/1949_c, F/1950_a, M/1961_b.
    assert_eq!(data.rows(), 3);
    assert_eq!(years(&data), [1949, 1950, 1961]);
    assert_eq!(data.timestamps[0], Timestamp::from_year(1949).unwrap());
    assert_eq!(labels(&data), [0, 0, 1]);
    assert_eq!(data.class_names, ["F", "M"]);
    assert_eq!(
        (data.source.name.as_str(), data.source.version.as_str()),
        ("yearbook", "folder")
    );
    let close = |a: f32, b: f64| assert!((f64::from(a) - b).abs() < 1e-6, "{a} vs {b}");
    close(pixel(&data, 0, 1, 7, 9), 51.0 / 255.0);
    // 64 -> 32: each output pixel is the mean of one 2x2 block, 4k + 1.5; grey in all 3 channels.
    for (y, x) in [(0, 0), (3, 5), (31, 31), (17, 2)] {
        let want = (4 * ((y + x) % 60)) as f64 + 1.5;
        for c in 0..3 {
            close(pixel(&data, 1, c, y, x), want / 255.0);
        }
    }
    // 48 -> 32 (ratio 1.5): output column 2k covers input columns 3k (weight 1) and 3k+1
    // (0.5), column 2k+1 covers 3k+1 (0.5) and 3k+2 (1); with input 3x: 9k+1 and 9k+5.
    for (x, want) in [
        (0, 1.0),
        (1, 5.0),
        (2, 10.0),
        (3, 14.0),
        (31, 9.0 * 15.0 + 5.0),
    ] {
        close(pixel(&data, 2, 0, 11, x), want / 255.0);
        close(pixel(&data, 2, 1, 11, x), 0.0);
        close(pixel(&data, 2, 2, 11, x), 1.0);
    }
    // Wild-Time's mapping on request.
    let swapped = load(&root, &[("labels", "m0-f1".into())]).unwrap();
    assert_eq!(labels(&swapped), [1, 1, 0]);
    assert_eq!(swapped.class_names, ["M", "F"]);
    assert_eq!(swapped.source, data.source);
    // Explicit format, and an unknown option is refused.
    assert_eq!(load(&root, &[("format", "yearbook".into())]).unwrap(), data);
    assert!(error(&root, &[("sample", 3.into())]).starts_with("data.options.sample: "));
}

#[test]
fn yearbook_folder_rejects_bad_names_and_bad_pngs() {
    let dir = tempfile::tempdir().unwrap();
    let root = yearbook_folder(dir.path());
    let bad = root.join("M/19x1_d.png");
    std::fs::copy(root.join("M/1961_b.png"), &bad).unwrap();
    assert_eq!(
        error(&root, &[]),
        format!(
            "{}: file name does not start with a four-digit year and `_`",
            bad.display()
        )
    );
    std::fs::remove_file(&bad).unwrap();
    let broken = root.join("F/1955_e.png");
    std::fs::write(&broken, b"\x89PNG\r\n\x1a\n truncated").unwrap();
    let message = error(&root, &[]);
    assert!(
        message.starts_with(&format!("{}: not a readable PNG: ", broken.display())),
        "{message}"
    );
}

/// Written by numpy 2.4 and `pickle.dumps` (protocol 4), exactly as Wild-Time does:
/// ```python
/// img = lambda n, o: (np.arange(n * 12, dtype=np.uint8).reshape(n, 2, 2, 3) + o) / 255.0
/// d = {1931: {0: {"images": img(1, 10), "labels": np.array([1])},
///             1: {"images": img(1, 20), "labels": np.array([0])}},
///      1930: {0: {"images": img(1, 0), "labels": np.array([0])},
///             1: {"images": img(1, 0), "labels": np.array([1])},
///             2: {"images": img(2, 0), "labels": np.array([0, 1])}}}
/// pickle.dumps(d).hex()
/// ```
pub const WILD_TIME_PICKLE: &str = "8004959e040000000000007d94284d8b077d94284b007d94288c06696d61676573948c166e756d70792e5f636f72652e6d756c74696172726179948c0c5f7265636f6e7374727563749493948c056e756d7079948c076e6461727261799493944b0085944301629487945294284b01284b014b024b024b03749468078c0564747970659493948c02663894898887945294284b038c013c944e4e4e4affffffff4affffffff4b00749462894360141414141414a43f161616161616a63f181818181818a83f1a1a1a1a1a1aaa3f1c1c1c1c1c1cac3f1e1e1e1e1e1eae3f101010101010b03f111111111111b13f121212121212b23f131313131313b33f141414141414b43f151515151515b53f947494628c066c6162656c7394680668094b008594680b87945294284b014b01859468108c02693894898887945294284b0368144e4e4e4affffffff4affffffff4b00749462894308010000000000000094749462754b017d94286803680668094b008594680b87945294284b01284b014b024b024b0374946813894360141414141414b43f151515151515b53f161616161616b63f171717171717b73f181818181818b83f191919191919b93f1a1a1a1a1a1aba3f1b1b1b1b1b1bbb3f1c1c1c1c1c1cbc3f1d1d1d1d1d1dbd3f1e1e1e1e1e1ebe3f1f1f1f1f1f1fbf3f947494626818680668094b008594680b87945294284b014b018594681f89430800000000000000009474946275754d8a077d94284b007d94286803680668094b008594680b87945294284b01284b014b024b024b03749468138943600000000000000000101010101010703f101010101010803f181818181818883f101010101010903f141414141414943f181818181818983f1c1c1c1c1c1c9c3f101010101010a03f121212121212a23f141414141414a43f161616161616a63f947494626818680668094b008594680b87945294284b014b018594681f894308000000000000000094749462754b017d94286803680668094b008594680b87945294284b01284b014b024b024b03749468138943600000000000000000101010101010703f101010101010803f181818181818883f101010101010903f141414141414943f181818181818983f1c1c1c1c1c1c9c3f101010101010a03f121212121212a23f141414141414a43f161616161616a63f947494626818680668094b008594680b87945294284b014b018594681f894308010000000000000094749462754b027d94286803680668094b008594680b87945294284b01284b024b024b024b03749468138943c00000000000000000101010101010703f101010101010803f181818181818883f101010101010903f141414141414943f181818181818983f1c1c1c1c1c1c9c3f101010101010a03f121212121212a23f141414141414a43f161616161616a63f181818181818a83f1a1a1a1a1a1aaa3f1c1c1c1c1c1cac3f1e1e1e1e1e1eae3f101010101010b03f111111111111b13f121212121212b23f131313131313b33f141414141414b43f151515151515b53f161616161616b63f171717171717b73f947494626818680668094b008594680b87945294284b014b028594681f89431000000000000000000100000000000000947494627575752e";
/// The same with `d[1930][2]["labels"] = np.array([0, 2])`.
const BAD_LABEL_PICKLE: &str = "8004959e040000000000007d94284d8b077d94284b007d94288c06696d61676573948c166e756d70792e5f636f72652e6d756c74696172726179948c0c5f7265636f6e7374727563749493948c056e756d7079948c076e6461727261799493944b0085944301629487945294284b01284b014b024b024b03749468078c0564747970659493948c02663894898887945294284b038c013c944e4e4e4affffffff4affffffff4b00749462894360141414141414a43f161616161616a63f181818181818a83f1a1a1a1a1a1aaa3f1c1c1c1c1c1cac3f1e1e1e1e1e1eae3f101010101010b03f111111111111b13f121212121212b23f131313131313b33f141414141414b43f151515151515b53f947494628c066c6162656c7394680668094b008594680b87945294284b014b01859468108c02693894898887945294284b0368144e4e4e4affffffff4affffffff4b00749462894308010000000000000094749462754b017d94286803680668094b008594680b87945294284b01284b014b024b024b0374946813894360141414141414b43f151515151515b53f161616161616b63f171717171717b73f181818181818b83f191919191919b93f1a1a1a1a1a1aba3f1b1b1b1b1b1bbb3f1c1c1c1c1c1cbc3f1d1d1d1d1d1dbd3f1e1e1e1e1e1ebe3f1f1f1f1f1f1fbf3f947494626818680668094b008594680b87945294284b014b018594681f89430800000000000000009474946275754d8a077d94284b007d94286803680668094b008594680b87945294284b01284b014b024b024b03749468138943600000000000000000101010101010703f101010101010803f181818181818883f101010101010903f141414141414943f181818181818983f1c1c1c1c1c1c9c3f101010101010a03f121212121212a23f141414141414a43f161616161616a63f947494626818680668094b008594680b87945294284b014b018594681f894308000000000000000094749462754b017d94286803680668094b008594680b87945294284b01284b014b024b024b03749468138943600000000000000000101010101010703f101010101010803f181818181818883f101010101010903f141414141414943f181818181818983f1c1c1c1c1c1c9c3f101010101010a03f121212121212a23f141414141414a43f161616161616a63f947494626818680668094b008594680b87945294284b014b018594681f894308010000000000000094749462754b027d94286803680668094b008594680b87945294284b01284b024b024b024b03749468138943c00000000000000000101010101010703f101010101010803f181818181818883f101010101010903f141414141414943f181818181818983f1c1c1c1c1c1c9c3f101010101010a03f121212121212a23f141414141414a43f161616161616a63f181818181818a83f1a1a1a1a1a1aaa3f1c1c1c1c1c1cac3f1e1e1e1e1e1eae3f101010101010b03f111111111111b13f121212121212b23f131313131313b33f141414141414b43f151515151515b53f161616161616b63f171717171717b73f947494626818680668094b008594680b87945294284b014b028594681f89431000000000000000000200000000000000947494627575752e";

pub fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn yearbook_pickle_reads_numpy_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("yearbook.pkl");
    std::fs::write(&path, unhex(WILD_TIME_PICKLE)).unwrap();
    let data = load(&path, &[]).unwrap();
    // 1930 from split 2 (2 rows), 1931 from splits 0 and 1 (it has no split 2).
    assert_eq!(years(&data), [1930, 1930, 1931, 1931]);
    // Stored M = 0, F = 1; the default mapping is F = 0, M = 1.
    assert_eq!(labels(&data), [1, 0, 0, 1]);
    assert_eq!(data.class_names, ["F", "M"]);
    assert_eq!(data.source.version, "wild-time-pkl");
    let wild = load(&path, &[("labels", "m0-f1".into())]).unwrap();
    assert_eq!(labels(&wild), [0, 1, 1, 0]);
    // 2x2 images are area-resized to 32x32: each stored pixel becomes a 16x16 block.
    // Row 1 (second image of 1930), pixel (y=1, x=0), channel c: (12 + 6 + c) / 255.
    let close = |a: f32, b: f64| assert!((f64::from(a) - b).abs() < 1e-6, "{a} vs {b}");
    for c in 0..3 {
        close(pixel(&data, 1, c, 20, 3), (18 + c) as f64 / 255.0);
        // Row 3 (1931 split 1), pixel (0, 1): 20 + 3 + c.
        close(pixel(&data, 3, c, 0, 31), (23 + c) as f64 / 255.0);
    }
    // A label that is neither 0 nor 1 names the entry.
    std::fs::write(&path, unhex(BAD_LABEL_PICKLE)).unwrap();
    assert_eq!(
        error(&path, &[]),
        format!(
            "{}: entry [1930][2][\"labels\"]: row 1: expected 0 (M) or 1 (F), got 2",
            path.display()
        )
    );
    // Regression (found by fuzzing): a year out of the timeline's range was an error that
    // named neither the file nor the entry. 1931 (BININT2 0x078b) becomes 10122 (0x278a).
    let far = WILD_TIME_PICKLE.replacen("4d8b07", "4d8a27", 1);
    assert_ne!(far, WILD_TIME_PICKLE);
    std::fs::write(&path, unhex(&far)).unwrap();
    let message = error(&path, &[]);
    assert!(
        message.starts_with(&format!("{}: entry [10122]: ", path.display())),
        "{message}"
    );
    // A truncated file names the root entry.
    std::fs::write(&path, &unhex(WILD_TIME_PICKLE)[..100]).unwrap();
    assert!(error(&path, &[]).starts_with(&format!(
        "{}: entry (root): not a readable pickle",
        path.display()
    )));
}

pub fn amazon_line(rating: &str, text: &str, ms: i64) -> String {
    format!(
        r#"{{"rating": {rating}, "title": "t", "text": {text}, "images": [], "asin": "B0", "parent_asin": "B0", "user_id": "U", "timestamp": {ms}, "helpful_vote": 0, "verified_purchase": true}}"#
    )
}

/// Milliseconds of a date.
pub fn ms(year: i32, month: u8, day: u8) -> i64 {
    Timestamp::from_date(year, month, day).unwrap().0 * 1000
}

#[test]
fn amazon_reviews_filters_and_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("All_Beauty.jsonl");
    let lines = [
        amazon_line("5.0", r#""Great""#, ms(2014, 1, 1) + 999),
        amazon_line("4.0", r#""too early""#, ms(2013, 12, 31)),
        amazon_line("3.0", r#""too late""#, ms(2024, 1, 1)),
        String::new(),
        amazon_line("2.5", r#""half star""#, ms(2015, 3, 1)),
        amazon_line("1.0", r#""  ""#, ms(2016, 3, 1)),
        amazon_line("1", r#""Bad\nreally""#, ms(2023, 12, 31) + 86_399_999),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let data = load(&path, &[]).unwrap();
    assert_eq!(data.rows(), 2);
    assert_eq!(
        data.inputs,
        Inputs::Text(vec!["Great".into(), "Bad\nreally".into()])
    );
    assert_eq!(data.targets, Targets::Values(vec![5.0, 1.0]));
    assert_eq!(
        data.timestamps,
        [
            Timestamp(ms(2014, 1, 1) / 1000),
            Timestamp(ms(2024, 1, 1) / 1000 - 1)
        ]
    );
    assert_eq!(data.source.name, "amazon-reviews");
    assert_eq!(
        data.source.sha256,
        drift::checksum::sha256_hex(&std::fs::read(&path).unwrap())
    );
    // Gzipped, and named by the explicit format.
    let gz = dir.path().join("reviews.jsonl.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut encoder, (lines.join("\n") + "\n").as_bytes()).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let unzipped = load(&gz, &[]).unwrap();
    assert_eq!(
        (unzipped.inputs, unzipped.targets),
        (data.inputs.clone(), data.targets.clone())
    );
    let other = dir.path().join("reviews.txt");
    std::fs::copy(&path, &other).unwrap();
    assert_eq!(
        load(&other, &[("format", "amazon-reviews".into())])
            .unwrap()
            .targets,
        data.targets
    );
}

#[test]
fn amazon_reviews_sample_keeps_one_row_per_stratum() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reviews.jsonl");
    // 200 rows in stratum (2015-H1, 5); one row in each of 2015-H2 x {1, 2} and 2020-H1 x 3.
    let mut lines: Vec<String> = (0..200)
        .map(|i| amazon_line("5.0", &format!(r#""row {i}""#), ms(2015, 2, 1) + i))
        .collect();
    lines.push(amazon_line("1.0", r#""rare 1""#, ms(2015, 8, 1)));
    lines.push(amazon_line("2.0", r#""rare 2""#, ms(2015, 12, 31)));
    lines.insert(17, amazon_line("3.0", r#""rare 3""#, ms(2020, 6, 30)));
    std::fs::write(&path, lines.join("\n")).unwrap();
    let texts = |data: &Dataset| match &data.inputs {
        Inputs::Text(t) => t.clone(),
        _ => panic!("text"),
    };
    for seed in 0..5 {
        let options = [("sample", 10.into()), ("seed", seed.into())];
        let data = load(&path, &options).unwrap();
        assert_eq!(data.rows(), 10);
        let t = texts(&data);
        for rare in ["rare 1", "rare 2", "rare 3"] {
            assert!(
                t.iter().any(|x| x == rare),
                "seed {seed}: {rare} missing from {t:?}"
            );
        }
        // File order is kept, and the draw is deterministic.
        let positions: Vec<usize> = t
            .iter()
            .map(|x| {
                lines
                    .iter()
                    .position(|l| l.contains(&format!("\"{x}\"")))
                    .unwrap()
            })
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(load(&path, &options).unwrap(), data);
    }
    let a = texts(&load(&path, &[("sample", 10.into()), ("seed", 0.into())]).unwrap());
    let b = texts(&load(&path, &[("sample", 10.into()), ("seed", 1.into())]).unwrap());
    assert_ne!(a, b);
    assert_eq!(
        error(&path, &[("sample", 3.into())]),
        "data.options.sample: 3 rows cannot hold one of each of the 4 (half-year, rating) strata"
    );
    assert_eq!(load(&path, &[("sample", 203.into())]).unwrap().rows(), 203);
}

#[test]
fn amazon_reviews_rejects_malformed_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("amazon.jsonl");
    let good = amazon_line("5.0", r#""ok""#, ms(2018, 1, 1));
    let cases = [
        (
            amazon_line(r#""x""#, r#""ok""#, ms(2018, 1, 1)),
            r#"rating: expected a number 1-5, got "x""#.to_string(),
        ),
        (
            amazon_line("4.0", "7", ms(2018, 1, 1)),
            "text: expected a string, got 7".into(),
        ),
        (
            good.replace(r#""timestamp": "#, r#""timestamp": 1.5e3, "x": "#),
            "timestamp: expected milliseconds since 1970 (an integer), got 1500.0".into(),
        ),
        (
            r#"{"rating": 5.0, "timestamp": 1}"#.into(),
            "text: missing".into(),
        ),
        (
            "{\"rating\": 5.0,".into(),
            "not a JSON object: EOF while parsing a value at line 1 column 15".into(),
        ),
    ];
    for (line, message) in cases {
        std::fs::write(&path, format!("{good}\n\n{line}\n{good}\n")).unwrap();
        let options = [("format", serde_json::Value::from("amazon-reviews"))];
        assert_eq!(
            error(&path, &options),
            format!("{}: line 3: {message}", path.display())
        );
    }
}

pub fn arxiv_line(
    id: &str,
    categories: &str,
    created: &str,
    title: &str,
    abstract_: &str,
) -> String {
    serde_json::json!({
        "id": id, "submitter": "A. Author", "authors": "A. Author", "title": title,
        "comments": null, "journal-ref": null, "doi": null, "report-no": null,
        "categories": categories, "license": null, "abstract": abstract_,
        "versions": [{"version": "v1", "created": created}, {"version": "v2", "created": "Tue, 3 Apr 2012 10:00:00 GMT"}],
        "update_date": "2012-04-03", "authors_parsed": [["Author", "A.", ""]]
    })
    .to_string()
}

#[test]
fn arxiv_snapshot_keeps_papers_of_the_seven_categories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arxiv-metadata-oai-snapshot.json");
    let lines = [
        arxiv_line(
            "0704.0001",
            "hep-ph",
            "Mon, 2 Apr 2007 19:18:42 GMT",
            "Calculation of\n  prompt diphoton",
            "  A fully differential\n  calculation.\n",
        ),
        arxiv_line(
            "0704.0002",
            "math.CO cs.CG",
            "Sat, 31 Mar 2007 02:26:18 GMT",
            "Sparsity",
            "Graphs.",
        ),
        arxiv_line(
            "0704.0003",
            "cs.LG cs.AI stat.ML",
            "Sun, 1 Apr 2007 20:46:54 GMT",
            "Mixed",
            "Dropped.",
        ),
        arxiv_line(
            "1905.0004",
            "gr-qc quant-ph cs.LG",
            "Wed, 1 May 2019 00:00:00 GMT",
            "Three",
            "Kept   here.",
        ),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let data = load(&path, &[]).unwrap();
    assert_eq!(data.rows(), 2);
    assert_eq!(
        data.inputs,
        Inputs::Text(vec![
            "Calculation of prompt diphoton\n\nA fully differential calculation.".into(),
            "Three\n\nKept here.".into()
        ])
    );
    assert_eq!(
        data.timestamps[0],
        Timestamp(Timestamp::from_date(2007, 4, 2).unwrap().0 + 19 * 3600 + 18 * 60 + 42)
    );
    assert_eq!(
        data.timestamps[1],
        Timestamp::from_date(2019, 5, 1).unwrap()
    );
    assert_eq!(
        data.class_names,
        [
            "cs.LG", "hep-ph", "cs.CV", "cs.AI", "hep-th", "quant-ph", "gr-qc"
        ]
    );
    let f = false;
    let t = true;
    assert_eq!(
        data.targets,
        Targets::MultiLabel {
            classes: 7,
            labels: vec![f, t, f, f, f, f, f, t, f, f, f, f, t, t]
        }
    );
    assert_eq!(data.source.name, "arxiv");
}

#[test]
fn arxiv_snapshot_rejects_malformed_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arxiv.jsonl");
    let good = arxiv_line("1", "cs.CV", "Mon, 2 Apr 2007 19:18:42 GMT", "T", "A");
    let cases = [
        (
            arxiv_line("2", "cs.CV", "yesterday", "T", "A"),
            r#"versions[0].created: expected a date like "Mon, 2 Apr 2007 19:18:42 GMT", got "yesterday""#,
        ),
        (
            arxiv_line("2", "cs.CV", "Mon, 31 Feb 2007 19:18:42 GMT", "T", "A"),
            r#"versions[0].created: expected a date like "Mon, 2 Apr 2007 19:18:42 GMT", got "Mon, 31 Feb 2007 19:18:42 GMT""#,
        ),
        (
            good.replace(r#""title":"T""#, r#""title":3"#),
            "title: expected a string, got 3",
        ),
        (
            r#"{"id": "3", "title": "T", "abstract": "A", "categories": "cs.AI", "versions": []}"#
                .into(),
            "versions: expected a non-empty list, got []",
        ),
    ];
    for (line, message) in cases {
        std::fs::write(&path, format!("{good}\n{good}\n{line}\n")).unwrap();
        assert_eq!(
            error(&path, &[]),
            format!("{}: line 3: {message}", path.display())
        );
    }
}

#[test]
fn unknown_files_are_refused_with_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.jsonl");
    std::fs::write(&path, "\n{\"id\": 1}\n").unwrap();
    assert_eq!(
        error(&path, &[]),
        format!(
            "{}: line 2: expected Amazon Reviews 2023 (fields rating, timestamp) or the arXiv metadata snapshot (fields categories, versions)",
            path.display()
        )
    );
    let csv = dir.path().join("data.csv");
    std::fs::write(&csv, "a,b\n").unwrap();
    assert!(error(&csv, &[]).starts_with(&format!("{}: unknown data format", csv.display())));
}
