//! R's lazy-load database reader (`drift::data::corpora::rdata`) on objects written here,
//! and the dslabs loaders on a small `.deb` built here in r-cran-dslabs's layout: values,
//! attributes, NA, references, and the refusals. The real package is compared with the
//! `rdata` Python package in `tests/corpora.rs`; `tests/hardening/fuzz.rs` fuzzes the
//! reader from the documents built here.

use std::io::Write;
use std::path::Path;

use drift::data::corpora::dslabs;
use drift::data::corpora::rdata::{self, RObject, RValue, Stored};
use drift::data::{Inputs, Targets};

/// `value` with attributes `attributes`.
pub fn with(value: RValue, attributes: Vec<(&str, RObject)>) -> RObject {
    RObject {
        value,
        attributes: attributes
            .into_iter()
            .map(|(n, o)| (n.to_string(), o))
            .collect(),
    }
}

fn plain(value: RValue) -> RObject {
    with(value, vec![])
}

fn strings(items: &[&str]) -> RObject {
    plain(RValue::Strings(
        items.iter().map(|s| Some(s.to_string())).collect(),
    ))
}

/// A data frame of `columns`, as R saves one (names, class, compact row names).
pub fn frame(columns: Vec<(&str, RObject)>) -> RObject {
    let rows = match &columns[0].1.value {
        RValue::Integer(v) => v.len(),
        RValue::Double(v) => v.len(),
        RValue::Strings(v) => v.len(),
        _ => 0,
    };
    let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
    with(
        RValue::List(columns.iter().map(|(_, c)| c.clone()).collect()),
        vec![
            ("names", strings(&names)),
            ("class", strings(&["data.frame"])),
            (
                "row.names",
                plain(RValue::Integer(vec![None, Some(-(rows as i32))])),
            ),
        ],
    )
}

/// R's XDR serialisation (format 3) of `object`, as `serialize()` writes it: symbols
/// after their first use are references.
pub fn serialize(object: &RObject) -> Vec<u8> {
    let mut out = b"X\n".to_vec();
    for n in [3, 0x0004_0101, 0x0003_0500, 5] {
        out.extend(i32::to_be_bytes(n));
    }
    out.extend(b"UTF-8");
    let mut symbols = Vec::new();
    item(&mut out, object, &mut symbols);
    out
}

fn int(out: &mut Vec<u8>, n: i32) {
    out.extend(n.to_be_bytes());
}

fn charsxp(out: &mut Vec<u8>, s: &Option<String>) {
    match s {
        None => {
            int(out, 9);
            int(out, -1);
        }
        Some(s) => {
            int(out, 9 | (1 << 15)); // UTF-8
            int(out, s.len() as i32);
            out.extend(s.as_bytes());
        }
    }
}

fn symbol(out: &mut Vec<u8>, name: &str, symbols: &mut Vec<String>) {
    if let Some(i) = symbols.iter().position(|s| s == name) {
        int(out, 255 | (((i + 1) as i32) << 8));
    } else {
        int(out, 1);
        charsxp(out, &Some(name.to_string()));
        symbols.push(name.to_string());
    }
}

fn item(out: &mut Vec<u8>, object: &RObject, symbols: &mut Vec<String>) {
    let attr = if object.attributes.is_empty() {
        0
    } else {
        1 << 9
    };
    match &object.value {
        RValue::Null => return int(out, 254),
        RValue::Symbol(name) => return symbol(out, name, symbols),
        RValue::Pairlist(cells) => {
            for (i, (tag, car)) in cells.iter().enumerate() {
                let first_attr = if i == 0 { attr } else { 0 };
                int(
                    out,
                    2 | first_attr | if tag.is_some() { 1 << 10 } else { 0 },
                );
                if i == 0 && attr != 0 {
                    attributes(out, &object.attributes, symbols);
                }
                if let Some(tag) = tag {
                    symbol(out, tag, symbols);
                }
                item(out, car, symbols);
            }
            return int(out, 254);
        }
        RValue::Logical(v) => {
            int(out, 10 | attr);
            int(out, v.len() as i32);
            for x in v {
                int(out, x.map_or(i32::MIN, i32::from));
            }
        }
        RValue::Integer(v) => {
            int(out, 13 | attr);
            int(out, v.len() as i32);
            for x in v {
                int(out, x.unwrap_or(i32::MIN));
            }
        }
        RValue::Double(v) => {
            int(out, 14 | attr);
            int(out, v.len() as i32);
            for x in v {
                out.extend(x.to_be_bytes());
            }
        }
        RValue::Strings(v) => {
            int(out, 16 | attr);
            int(out, v.len() as i32);
            for s in v {
                charsxp(out, s);
            }
        }
        RValue::List(v) => {
            int(out, 19 | attr);
            int(out, v.len() as i32);
            for o in v {
                item(out, o, symbols);
            }
        }
    }
    if attr != 0 {
        attributes(out, &object.attributes, symbols);
    }
}

fn attributes(out: &mut Vec<u8>, attributes: &[(String, RObject)], symbols: &mut Vec<String>) {
    let cells = attributes
        .iter()
        .map(|(n, o)| (Some(n.clone()), o.clone()))
        .collect();
    item(out, &plain(RValue::Pairlist(cells)), symbols);
}

/// A lazy-load database (`.rdx` gzip bytes, `.rdb` bytes) holding `objects`.
pub fn database(objects: &[(&str, RObject)]) -> (Vec<u8>, Vec<u8>) {
    let mut rdb = Vec::new();
    let mut places = Vec::new();
    for (_, object) in objects {
        let bytes = serialize(object);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&bytes).unwrap();
        let compressed = z.finish().unwrap();
        let offset = rdb.len() as i32;
        rdb.extend((bytes.len() as u32).to_be_bytes());
        rdb.extend(&compressed);
        places.push(plain(RValue::Integer(vec![
            Some(offset),
            Some(rdb.len() as i32 - offset),
        ])));
    }
    let names: Vec<&str> = objects.iter().map(|(n, _)| *n).collect();
    let index = with(
        RValue::List(vec![
            with(RValue::List(places), vec![("names", strings(&names))]),
            with(RValue::List(vec![]), vec![("names", strings(&[]))]),
            plain(RValue::Logical(vec![Some(true)])),
        ]),
        vec![("names", strings(&["variables", "references", "compressed"]))],
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&serialize(&index)).unwrap();
    (gz.finish().unwrap(), rdb)
}

/// A `.deb` in r-cran-dslabs's layout whose database holds `objects`.
pub fn deb(objects: &[(&str, RObject)]) -> Vec<u8> {
    let (rdx, rdb) = database(objects);
    let mut tar = tar::Builder::new(Vec::new());
    for (name, bytes) in [("Rdata.rdx", &rdx), ("Rdata.rdb", &rdb)] {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        let path = format!("./usr/lib/R/site-library/dslabs/data/{name}");
        tar.append_data(&mut header, path, bytes.as_slice())
            .unwrap();
    }
    let tar = tar.into_inner().unwrap();
    let mut xz = Vec::new();
    lzma_rs::xz_compress(&mut tar.as_slice(), &mut xz).unwrap();
    let mut ar = ar::Builder::new(Vec::new());
    for (name, bytes) in [("debian-binary", b"2.0\n".to_vec()), ("data.tar.xz", xz)] {
        let header = ar::Header::new(name.as_bytes().to_vec(), bytes.len() as u64);
        ar.append(&header, bytes.as_slice()).unwrap();
    }
    ar.into_inner().unwrap()
}

fn text(v: &[Option<&str>]) -> RObject {
    plain(RValue::Strings(
        v.iter().map(|s| s.map(str::to_string)).collect(),
    ))
}

fn ints(v: &[Option<i32>]) -> RObject {
    plain(RValue::Integer(v.to_vec()))
}

/// A small `trump_tweets`: five tweets, one from a client that is not a device kept.
pub fn tweets() -> RObject {
    let source = with(
        RValue::Integer(vec![Some(1), Some(2), Some(3), Some(1), Some(4)]),
        vec![
            (
                "levels",
                strings(&[
                    "Twitter Web Client",
                    "Twitter for Android",
                    "TweetDeck",
                    "Twitter for iPhone",
                ]),
            ),
            ("class", strings(&["factor"])),
        ],
    );
    frame(vec![
        ("source", source),
        (
            "text",
            text(&[Some("a"), Some("b"), Some("c"), None, Some("é")]),
        ),
        (
            "created_at",
            with(
                RValue::Double(vec![1.3e9, 1.4e9, 1.45e9, 1.2e9, 1.5e9]),
                vec![("class", strings(&["POSIXct", "POSIXt"]))],
            ),
        ),
        (
            "is_retweet",
            plain(RValue::Logical(vec![
                Some(false),
                Some(true),
                None,
                Some(false),
                Some(false),
            ])),
        ),
    ])
}

/// A small `movielens`: four rating rows of three films, one film without a title.
pub fn movies() -> RObject {
    frame(vec![
        ("movieId", ints(&[Some(31), Some(7), Some(31), Some(9)])),
        (
            "title",
            text(&[
                Some("Dangerous Minds"),
                Some("Dumbo"),
                Some("Dangerous Minds"),
                None,
            ]),
        ),
        ("year", ints(&[Some(1995), Some(1941), Some(1995), None])),
        (
            "genres",
            text(&[
                Some("Drama"),
                Some("Animation|Children|Drama|Crime"),
                Some("Drama"),
                Some("Comedy"),
            ]),
        ),
        ("rating", plain(RValue::Double(vec![2.5, 3.0, 4.0, 1.0]))),
    ])
}

#[test]
fn objects_read_back_as_written() {
    for object in [tweets(), movies(), plain(RValue::Null), strings(&[])] {
        assert_eq!(rdata::unserialize(&serialize(&object)).unwrap(), object);
    }
    let (rdx, rdb) = database(&[("tweets", tweets()), ("movies", movies())]);
    let index = rdata::index(&rdx).unwrap();
    assert_eq!(
        index.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
        ["tweets", "movies"]
    );
    assert_eq!(rdata::object(&rdb, &index[1]).unwrap(), movies());
    assert!(movies().inherits("data.frame"));
    assert_eq!(
        movies().element("year").unwrap().value,
        RValue::Integer(vec![Some(1995), Some(1941), Some(1995), None])
    );
}

#[test]
fn dslabs_loaders_apply_their_rules() {
    let deb = deb(&[("trump_tweets", tweets()), ("movielens", movies())]);
    let path = Path::new("/cache/r-cran-dslabs_0.7.4-1_all.deb");
    let data = dslabs::parse_trump_tweets(path, &deb).unwrap();
    // TweetDeck's tweet is left out; the NA text reads as empty.
    assert_eq!(data.rows(), 4);
    assert_eq!(
        data.class_names,
        [
            "Twitter for Android",
            "Twitter for iPhone",
            "Twitter Web Client"
        ]
    );
    let Targets::Classes { labels, .. } = &data.targets else {
        panic!()
    };
    assert_eq!(labels, &[2, 0, 2, 1]);
    let Inputs::Text(texts) = &data.inputs else {
        panic!()
    };
    assert_eq!(texts, &["a", "b", "", "é"]);
    assert_eq!(data.timestamps[0].0, 1_300_000_000);

    let data = dslabs::parse_movielens(path, &deb).unwrap();
    // One row per film; the film without a title or year is left out.
    let Inputs::Text(texts) = &data.inputs else {
        panic!()
    };
    assert_eq!(texts, &["Dangerous Minds", "Dumbo"]);
    assert_eq!(data.timestamps[1].year(), 1941);
    let Targets::MultiLabel { classes: 7, labels } = &data.targets else {
        panic!()
    };
    let on = |row: usize| -> Vec<&str> {
        (0..7)
            .filter(|&c| labels[row * 7 + c])
            .map(|c| dslabs::GENRES[c])
            .collect()
    };
    assert_eq!((on(0), on(1)), (vec!["Drama"], vec!["Drama", "Crime"]));
}

#[test]
fn bad_databases_are_refused_with_the_place() {
    let path = Path::new("/cache/r-cran-dslabs_0.7.4-1_all.deb");
    let refuse = |objects: &[(&str, RObject)], want: &str| {
        let err = dslabs::parse_movielens(path, &deb(objects))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/cache/r-cran-dslabs_0.7.4-1_all.deb: "),
            "{err}"
        );
        assert!(err.contains(want), "{want} not in {err}");
    };
    refuse(&[("trump_tweets", tweets())], "no object movielens");
    refuse(
        &[("movielens", strings(&["x"]))],
        "movielens: not a data frame",
    );
    let mut no_year = movies();
    no_year.attributes[0].1 = strings(&["movieId", "title", "yr", "genres", "rating"]);
    refuse(&[("movielens", no_year)], "no column year");

    // Truncated, trailing and mistyped streams name the byte.
    let bytes = serialize(&movies());
    let err = rdata::unserialize(&bytes[..bytes.len() - 3]).unwrap_err();
    assert!(err.contains("more bytes were due"), "{err}");
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(
        rdata::unserialize(&longer)
            .unwrap_err()
            .contains("1 bytes after the object")
    );
    let mut closure = bytes.clone();
    closure[26] = 3; // the data frame's VECSXP (its flags end at byte 26) becomes a CLOSXP
    let err = rdata::unserialize(&closure).unwrap_err();
    assert!(err.contains("R type 3 is not read"), "{err}");
    // A length larger than the bytes left allocates nothing.
    let mut huge = serialize(&plain(RValue::Double(vec![1.0])));
    let at = huge.len() - 12;
    huge[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
    assert!(
        rdata::unserialize(&huge)
            .unwrap_err()
            .contains("bytes are left")
    );
    // An object whose zlib stream holds other than it declares.
    let (_, rdb) = database(&[("m", movies())]);
    let entry = Stored {
        name: "m".into(),
        offset: 0,
        length: rdb.len(),
    };
    let mut wrong = rdb.clone();
    wrong[3] ^= 1;
    let err = rdata::object(&wrong, &entry).unwrap_err();
    assert!(err.starts_with("object m (bytes 0+"), "{err}");
    assert!(err.contains("declares"), "{err}");
}
