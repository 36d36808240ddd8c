//! Reading a Hugging Face `tokenizer.json` without letting the `tokenizers` crate panic.

/// Parses a Hugging Face `tokenizer.json`, or says why it cannot. The `tokenizers` crate
/// panics on some malformed files (an `expect` in its decoder deserialisation, found by
/// fuzzing: a number out of range), so the parse runs under `catch_unwind` and such a file
/// is an error like any other, for the caller to name.
pub fn parse_tokenizer(bytes: &[u8]) -> std::result::Result<tokenizers::Tokenizer, String> {
    match std::panic::catch_unwind(|| tokenizers::Tokenizer::from_bytes(bytes)) {
        Ok(parsed) => parsed.map_err(|e| e.to_string()),
        Err(_) => Err("malformed (the tokenizers crate panicked reading it)".into()),
    }
}
