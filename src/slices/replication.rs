//! What a replication (one seed of a preset) varies, and the seeds it derives from the
//! run's seed.
//!
//! A preset's `vary` lists what its seeds vary: `init` (the initialisation and batch
//! order, always), `split` (the once-per-slice train/test split, with the down-sampling
//! and the `max_rows` cap that precede it) and `data` (the draw of a synthetic generator
//! that reads a `seed` option). For run seed `s`, a varied part's seed is
//!
//! ```text
//! first 8 bytes, little-endian, of SHA-256("drift-replication-v1:{part}:{base}:{s}")
//! ```
//!
//! where `part` is `split` or `data` and `base` the preset's own seed of that part
//! (`split.seed`; the generator's `seed` option, 0 when unset). A generator's option is
//! at most `2^63 - 1`, so the data seed has its top bit cleared. The derived values depend
//! on nothing but these, so every model of a preset at seed `s` trains on the same data
//! and split (model comparisons stay paired), and presets that share data and split
//! share them at every seed too.

use serde::{Deserialize, Serialize};
use sha2::Digest;

/// One part of a replication that its seed may vary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Varied {
    /// The initialisation and batch order (every replication varies it).
    Init,
    /// The once-per-slice train/test split.
    Split,
    /// The draw of a generated data set.
    Data,
}

impl Varied {
    /// Every part, in canonical order.
    pub const ALL: [Varied; 3] = [Varied::Init, Varied::Split, Varied::Data];

    /// The word a preset's `vary` and `run.json` use.
    pub fn name(self) -> &'static str {
        match self {
            Varied::Init => "init",
            Varied::Split => "split",
            Varied::Data => "data",
        }
    }

    /// The part a word names.
    pub fn from_name(word: &str) -> Option<Varied> {
        Varied::ALL.into_iter().find(|v| v.name() == word)
    }
}

/// What runs made before replications varied anything but the initialisation varied: the
/// meaning of a `run.json` without `varied`.
pub fn only_init() -> Vec<Varied> {
    vec![Varied::Init]
}

/// Whether `vary` is exactly `[init]` (left out of a preset's canonical JSON, so that a
/// preset that fixes its data and split hashes as it did before `vary` existed). A `&Vec`
/// for serde's `skip_serializing_if`.
#[allow(clippy::ptr_arg)]
pub fn is_only_init(vary: &Vec<Varied>) -> bool {
    vary.as_slice() == [Varied::Init]
}

/// The seed of `part` for run seed `seed`, from the preset's own seed `base` of that part
/// (see the module doc).
pub fn derived_seed(part: Varied, base: u64, seed: u64) -> u64 {
    let digest = sha2::Sha256::digest(
        format!("drift-replication-v1:{}:{base}:{seed}", part.name()).as_bytes(),
    );
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    let value = u64::from_le_bytes(first);
    match part {
        Varied::Data => value & (u64::MAX >> 1),
        _ => value,
    }
}

/// A preset's `vary`: known words, none twice, `init` among them; every part when absent. Kept in
/// canonical order, so the order written does not change the content hash.
pub fn parse_vary(vary: Option<&[String]>) -> Result<Vec<Varied>, String> {
    let Some(words) = vary else {
        return Ok(Varied::ALL.to_vec());
    };
    let mut parts: Vec<Varied> = Vec::new();
    for (k, word) in words.iter().enumerate() {
        let part = Varied::from_name(word).ok_or_else(|| {
            format!("vary[{k}]: unknown part {word:?} (known: init, split, data)")
        })?;
        if parts.contains(&part) {
            return Err(format!("vary[{k}]: {word:?} appears twice"));
        }
        parts.push(part);
    }
    if !parts.contains(&Varied::Init) {
        return Err(
            "vary: must include \"init\" (every seed varies the initialisation and batch \
             order)"
                .into(),
        );
    }
    parts.sort();
    Ok(parts)
}
