//! `[data.options]` as a source reads them: typed getters with defaults and ranges, and an
//! error for every option the source does not know, so a typo never passes silently.

use std::cell::RefCell;
use std::collections::BTreeSet;

use serde_json::Value;

use super::dataset::DataOptions;
use crate::{Error, Result};

/// The options of one source, read once each.
#[derive(Debug)]
pub struct SourceOptions<'a> {
    source: &'a str,
    values: &'a DataOptions,
    read: RefCell<BTreeSet<String>>,
}

impl<'a> SourceOptions<'a> {
    /// The options given to `source`.
    pub fn new(source: &'a str, values: &'a DataOptions) -> Self {
        SourceOptions {
            source,
            values,
            read: RefCell::new(BTreeSet::new()),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.read.borrow_mut().insert(key.to_string());
        self.values.get(key)
    }

    fn invalid(&self, key: &str, expected: &str, got: &Value) -> Error {
        Error::Invalid(format!(
            "data.options.{key}: expected {expected} for {}, got {got}",
            self.source
        ))
    }

    /// A number in `min..=max`, `default` when absent.
    pub fn number(&self, key: &str, default: f64, min: f64, max: f64) -> Result<f64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_f64()
                .filter(|x| (min..=max).contains(x))
                .ok_or_else(|| self.invalid(key, &format!("a number in [{min}, {max}]"), v)),
        }
    }

    /// An integer in `min..=max`, `default` when absent.
    pub fn integer(&self, key: &str, default: i64, min: i64, max: i64) -> Result<i64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_i64()
                .filter(|x| (min..=max).contains(x))
                .ok_or_else(|| self.invalid(key, &format!("an integer in [{min}, {max}]"), v)),
        }
    }

    /// One of `choices`, `default` when absent.
    pub fn choice(&self, key: &str, default: &'a str, choices: &[&'a str]) -> Result<&'a str> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_str()
                .and_then(|s| choices.iter().find(|c| **c == s).copied())
                .ok_or_else(|| self.invalid(key, &format!("one of {}", choices.join(", ")), v)),
        }
    }

    /// A string, `None` when absent.
    pub fn string(&self, key: &str) -> Result<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| self.invalid(key, "a string", v)),
        }
    }

    /// Whether the preset sets `key` (without reading it), for options that only some
    /// settings of another option accept.
    pub fn given(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    /// The string value of `key`, without reading it (so that which options are read can
    /// depend on it).
    pub fn peek(&self, key: &str) -> Option<&'a str> {
        self.values.get(key).and_then(Value::as_str)
    }

    /// Fails on any option that was never read.
    pub fn finish(&self) -> Result<()> {
        let read = self.read.borrow();
        match self.values.keys().find(|k| !read.contains(*k)) {
            None => Ok(()),
            Some(key) => Err(Error::Invalid(format!(
                "data.options.{key}: {} has no such option (it reads {})",
                self.source,
                if read.is_empty() {
                    "none".to_string()
                } else {
                    read.iter().cloned().collect::<Vec<_>>().join(", ")
                }
            ))),
        }
    }

    /// The options' canonical JSON, for a generator's content hash.
    pub fn canonical(&self) -> String {
        serde_json::to_string(self.values).expect("options serialise")
    }
}
