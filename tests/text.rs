//! Text to model input: words, token vectors, the bag of embeddings as token ids, and a
//! Hugging Face `tokenizer.json` (a WordPiece one written here in exactly that format).

use std::path::Path;

use drift::data::DataOptions;
use drift::data::DataSource;
use drift::data::{Dataset, Inputs, SourceOptions, Targets};
use drift::slices::Timestamp;
use drift::text::{self, TextInput};
use serde_json::json;

fn dataset(texts: &[&str]) -> Dataset {
    Dataset {
        source: DataSource::new("texts", "1", "0".repeat(64)),
        timestamps: vec![Timestamp(0); texts.len()],
        inputs: Inputs::Text(texts.iter().map(|t| t.to_string()).collect()),
        targets: Targets::Values(vec![1.0; texts.len()]),
        class_names: Vec::new(),
    }
}

fn options(pairs: serde_json::Value) -> DataOptions {
    serde_json::from_value(pairs).unwrap()
}

fn text_input(values: &DataOptions, base: &Path) -> drift::Result<TextInput> {
    let opts = SourceOptions::new("texts", values);
    let input = TextInput::from_options(&opts, base)?;
    opts.finish()?;
    Ok(input)
}

#[test]
fn words_are_lower_cased_runs_of_letters_and_digits() {
    let words: Vec<String> = text::words("The 2 models' drift-rate: 3.5%, Éclair").collect();
    assert_eq!(
        words,
        ["the", "2", "models", "drift", "rate", "3", "5", "éclair"]
    );
}

#[test]
fn token_vectors_are_fixed_per_token() {
    let a = text::token_vector("drift", 16);
    assert_eq!(a, text::token_vector("drift", 16));
    assert_ne!(a, text::token_vector("drifts", 16));
    assert_eq!(a.len(), 16);
    assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
    // The first values of a longer vector are the same stream.
    assert_eq!(&text::token_vector("drift", 32)[..16], &a[..]);
}

#[test]
fn hashed_text_becomes_token_ids_into_a_table() {
    let data = dataset(&["the model drifts", "", "Drift the drift the model away"]);
    let input = text_input(
        &options(json!({"text_dim": 4, "max_tokens": 5})),
        Path::new("."),
    )
    .unwrap();
    let out = text::apply(data, &input).unwrap();
    out.check().unwrap();
    let Inputs::TokenIds {
        tokens,
        dim,
        ids,
        lengths,
        table,
    } = &out.inputs
    else {
        panic!("{:?}", out.inputs)
    };
    assert_eq!((*tokens, *dim), (5, 4));
    // Vocabulary in order of first appearance: the=1, model=2, drifts=3, drift=4; 0 pads.
    assert_eq!(ids, &[1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 4, 1, 4, 1, 2]);
    // An empty row keeps one (zero) token; a long row is cut at max_tokens.
    assert_eq!(lengths, &[3, 1, 5]);
    assert_eq!(table.len(), 5 * 4);
    assert!(table[..4].iter().all(|&v| v == 0.0));
    assert_eq!(&table[4..8], &text::token_vector("the", 4)[..]);
    assert_eq!(&table[16..20], &text::token_vector("drift", 4)[..]);
}

#[test]
fn raw_text_stays_text_and_other_inputs_pass_through() {
    let input = text_input(&options(json!({"text": "raw"})), Path::new(".")).unwrap();
    let out = text::apply(dataset(&["a b"]), &input).unwrap();
    assert_eq!(out.inputs, Inputs::Text(vec!["a b".into()]));
}

#[test]
fn a_tokenizer_json_gives_its_ids() {
    let dir = tempfile::tempdir().unwrap();
    let tokenizer = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": true,
            "handle_chinese_chars": true,
            "strip_accents": null,
            "lowercase": true
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": null,
        "decoder": null,
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": {"[PAD]": 0, "[UNK]": 1, "the": 2, "drift": 3, "##s": 4, "model": 5}
        }
    });
    std::fs::write(dir.path().join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let values =
        options(json!({"text": "tokenizer", "tokenizer": "tokenizer.json", "text_dim": 2}));
    let input = text_input(&values, dir.path()).unwrap();
    let out = text::apply(dataset(&["The models drift, xyz"]), &input).unwrap();
    let Inputs::TokenIds {
        ids,
        lengths,
        table,
        ..
    } = &out.inputs
    else {
        panic!()
    };
    // WordPiece ids: the=2, model=5, ##s=4, drift=3, ","=[UNK]=1, xyz=[UNK]=1; drift's own
    // ids number them in order of first appearance.
    assert_eq!(lengths, &[6]);
    assert_eq!(&ids[..6], &[1, 2, 3, 4, 5, 5]);
    assert_eq!(&table[2..4], &text::token_vector("id:2", 2)[..]);
    assert_eq!(&table[10..12], &text::token_vector("id:1", 2)[..]);
}

/// Regression (found by fuzzing): a `tokenizer.json` whose decoder is a number out of
/// range made the `tokenizers` crate panic; it is an error naming the file.
#[test]
fn a_tokenizer_json_the_tokenizers_crate_panics_on_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = r###"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,"pre_tokenizer":{"type":"BertPreTokenizer"},"post_processor":null,"decoder":1e309,"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,"vocab":{"[UNK]":0,"the":1}}}"###;
    std::fs::write(dir.path().join("tokenizer.json"), text).unwrap();
    let values = options(json!({"text": "tokenizer", "tokenizer": "tokenizer.json"}));
    let Err(error) = text_input(&values, dir.path()) else {
        panic!("a malformed tokenizer.json was read")
    };
    let path = dir.path().join("tokenizer.json");
    assert!(
        error.to_string().starts_with(&format!(
            "{}: not a readable tokenizer.json: ",
            path.display()
        )),
        "{error}"
    );
}

#[test]
fn bad_text_options_are_named() {
    let error = |values: serde_json::Value| {
        text_input(&options(values), Path::new("/nonexistent"))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        error(json!({"text": "bytes"})),
        "data.options.text: expected one of hashed, tokenizer, raw, encoder for texts, got \"bytes\""
    );
    assert_eq!(
        error(json!({"text": "tokenizer"})),
        "data.options.tokenizer: text = \"tokenizer\" needs the path of a tokenizer.json"
    );
    assert!(
        error(json!({"text": "tokenizer", "tokenizer": "t.json"}))
            .starts_with("/nonexistent/t.json: not a readable tokenizer.json: ")
    );
    assert_eq!(
        error(json!({"text_dims": 3})),
        "data.options.text_dims: texts has no such option (it reads max_tokens, text, \
         text_dim, tokenizer)"
    );
}

/// Ids looked up in the table give the same batches as the dense token states.
#[cfg(feature = "torch")]
#[test]
fn token_ids_and_dense_states_give_the_same_batches() {
    use drift::data::States;
    use drift::models::Input;
    use drift::train::DataTensors;
    let input = text_input(
        &options(json!({"text_dim": 3, "max_tokens": 4})),
        Path::new("."),
    )
    .unwrap();
    let ids = text::apply(dataset(&["a b c", "b", "c a"]), &input).unwrap();
    let Inputs::TokenIds {
        tokens,
        dim,
        ids: id_list,
        lengths,
        table,
    } = &ids.inputs
    else {
        panic!()
    };
    let states: Vec<f32> = id_list
        .iter()
        .flat_map(|&id| table[id as usize * dim..(id as usize + 1) * dim].to_vec())
        .collect();
    // Half-precision states (as encoder caches give) widen to the f32 of their values.
    let halves: Vec<half::f16> = states.iter().map(|&x| half::f16::from_f32(x)).collect();
    let with_states = |states| Dataset {
        inputs: Inputs::Tokens {
            tokens: *tokens,
            dim: *dim,
            states,
            lengths: lengths.clone(),
        },
        ..ids.clone()
    };
    let dense = with_states(States::F32(states.clone()));
    let widened = with_states(States::F32(halves.iter().map(|x| x.to_f32()).collect()));
    let half = with_states(States::F16(halves));
    for (a, b) in [(&ids, &dense), (&widened, &half)] {
        let (a, b) = (DataTensors::new(a).unwrap(), DataTensors::new(b).unwrap());
        for rows in [&[0usize, 1, 2][..], &[1], &[2, 1]] {
            let (
                Input::Tokens {
                    states: s1,
                    mask: m1,
                },
                Input::Tokens {
                    states: s2,
                    mask: m2,
                },
            ) = (
                a.input(rows, tch::Device::Cpu),
                b.input(rows, tch::Device::Cpu),
            )
            else {
                panic!()
            };
            assert_eq!(s1.size(), s2.size());
            assert_eq!((s1.kind(), s2.kind()), (tch::Kind::Float, tch::Kind::Float));
            assert!(s1.equal(&s2) && m1.equal(&m2));
        }
    }
}
