//! R's lazy-load database, where an installed R package keeps its data sets, and the part
//! of R's serialisation (format 2 or 3, XDR) that holds a data frame.
//!
//! The database is two files in the package's `data/` folder:
//! - `Rdata.rdx`: a gzip-compressed serialised list whose `variables` element names each
//!   object with its offset and length in the `.rdb`, and whose `compressed` element says
//!   how the objects are compressed (`TRUE` or 1: zlib; 2 and 3, bzip2 and xz, are refused);
//! - `Rdata.rdb`: the objects, each a 4-byte big-endian length of the serialised bytes
//!   followed by their zlib stream.
//!
//! Read here, about 300 lines, rather than through a crate: the one general Rust reader
//! (`rds2rust`, 0.x, some 21,000 lines reading and writing every R type) is far more than
//! six vector types of two data frames need, and this reader checks every length against
//! the bytes left before it allocates, bounds decompression by the declared length and
//! nesting by [`MAX_DEPTH`], and names the object and byte at fault; the fuzz and damage
//! tests (`tests/hardening/`) hold it to that.
//!
//! Supported: `NULL`, logical, integer, double, character and generic vectors, symbols and
//! references to them, pairlists (attributes), with any attributes. Anything else
//! (environments, closures, ALTREP objects, ...) is an error naming its type code.

use std::io::Read;

/// Deepest nesting of objects read (a data frame needs 4).
pub const MAX_DEPTH: usize = 64;
/// Largest serialised object read (the dslabs objects are 4-6 MB).
pub const MAX_OBJECT_BYTES: usize = 1 << 30;

/// A value of R, as far as data frames need.
#[derive(Clone, Debug, PartialEq)]
pub enum RValue {
    /// `NULL`.
    Null,
    /// A logical vector; `None` is `NA`.
    Logical(Vec<Option<bool>>),
    /// An integer vector; `None` is `NA`.
    Integer(Vec<Option<i32>>),
    /// A double vector (`NA` is a NaN).
    Double(Vec<f64>),
    /// A character vector; `None` is `NA`.
    Strings(Vec<Option<String>>),
    /// A generic vector (`list`).
    List(Vec<RObject>),
    /// A symbol.
    Symbol(String),
    /// A pairlist: tagged elements.
    Pairlist(Vec<(Option<String>, RObject)>),
}

/// A value with its attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct RObject {
    /// The value.
    pub value: RValue,
    /// Its attributes, by name, in stored order.
    pub attributes: Vec<(String, RObject)>,
}

impl RObject {
    fn plain(value: RValue) -> RObject {
        RObject {
            value,
            attributes: Vec::new(),
        }
    }

    /// The attribute called `name`.
    pub fn attribute(&self, name: &str) -> Option<&RObject> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, o)| o)
    }

    /// The strings of a character attribute (`names`, `class`, `levels`), empty when absent.
    pub fn strings(&self, name: &str) -> Vec<String> {
        match self.attribute(name).map(|o| &o.value) {
            Some(RValue::Strings(s)) => s.iter().map(|s| s.clone().unwrap_or_default()).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether `class` names `class`.
    pub fn inherits(&self, class: &str) -> bool {
        self.strings("class").iter().any(|c| c == class)
    }

    /// A list's element called `name`.
    pub fn element(&self, name: &str) -> Option<&RObject> {
        let RValue::List(items) = &self.value else {
            return None;
        };
        let at = self.strings("names").iter().position(|n| n == name)?;
        items.get(at)
    }
}

/// Reads one serialised object (starting `X\n`); the error says what is wrong where.
pub fn unserialize(bytes: &[u8]) -> Result<RObject, String> {
    let mut r = Reader {
        bytes,
        pos: 0,
        symbols: Vec::new(),
    };
    let magic = r.take(2)?;
    if magic != b"X\n" {
        return Err("not R's XDR serialisation (it starts X\\n)".into());
    }
    let version = r.int()?;
    if !(2..=3).contains(&version) {
        return Err(format!("serialisation format {version} (2 or 3 are read)"));
    }
    r.int()?; // the writer's R version
    r.int()?; // the oldest R that reads it
    if version == 3 {
        let len = r.length(1)?;
        r.take(len)?; // native encoding, e.g. UTF-8: strings carry their own flags
    }
    let object = r.item(0)?;
    if r.pos != bytes.len() {
        return Err(format!(
            "{} bytes after the object, at byte {}",
            bytes.len() - r.pos,
            r.pos
        ));
    }
    Ok(object)
}

/// One object of a lazy-load database: its name, offset and length in the `.rdb`.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    /// The object's name.
    pub name: String,
    /// Offset in the `.rdb`.
    pub offset: usize,
    /// Length in the `.rdb`.
    pub length: usize,
}

/// Reads a database's index (`Rdata.rdx`, gzip-compressed).
pub fn index(rdx: &[u8]) -> Result<Vec<Stored>, String> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(rdx)
        .take(MAX_OBJECT_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("not gzip: {e}"))?;
    let index = unserialize(&bytes)?;
    match index.element("compressed").map(|c| &c.value) {
        Some(RValue::Logical(v)) if v == &[Some(true)] => {}
        Some(RValue::Integer(v)) if v == &[Some(1)] => {}
        Some(RValue::Double(v)) if v == &[1.0] => {}
        other => {
            return Err(format!(
                "compressed is {other:?}; only zlib (TRUE or 1) is read"
            ));
        }
    }
    let variables = index.element("variables").ok_or("no variables element")?;
    let RValue::List(places) = &variables.value else {
        return Err("variables is not a list".into());
    };
    let names = variables.strings("names");
    if names.len() != places.len() {
        return Err("variables has no name for every object".into());
    }
    names
        .into_iter()
        .zip(places)
        .map(|(name, place)| match &place.value {
            RValue::Integer(v) => match v.as_slice() {
                &[Some(offset), Some(length)] if offset >= 0 && length >= 4 => Ok(Stored {
                    name,
                    offset: offset as usize,
                    length: length as usize,
                }),
                _ => Err(format!("variables${name} is not an offset and a length")),
            },
            _ => Err(format!("variables${name} is not an integer vector")),
        })
        .collect()
}

/// Reads the object at `entry` out of the database's `.rdb` bytes.
pub fn object(rdb: &[u8], entry: &Stored) -> Result<RObject, String> {
    let at = |e: String| {
        format!(
            "object {} (bytes {}+{}): {e}",
            entry.name, entry.offset, entry.length
        )
    };
    let blob = entry
        .offset
        .checked_add(entry.length)
        .and_then(|end| rdb.get(entry.offset..end))
        .ok_or_else(|| at(format!("past the end of the file ({} bytes)", rdb.len())))?;
    let declared = u32::from_be_bytes(blob[..4].try_into().expect("4 bytes")) as usize;
    if declared > MAX_OBJECT_BYTES {
        return Err(at(format!(
            "declares {declared} bytes, over {MAX_OBJECT_BYTES}"
        )));
    }
    let mut bytes = Vec::with_capacity(declared);
    flate2::read::ZlibDecoder::new(&blob[4..])
        .take(declared as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| at(format!("not a zlib stream: {e}")))?;
    if bytes.len() != declared {
        return Err(at(format!(
            "declares {declared} bytes but its zlib stream holds {}{}",
            if bytes.len() > declared {
                "more than "
            } else {
                ""
            },
            bytes.len().min(declared)
        )));
    }
    unserialize(&bytes).map_err(at)
}

// R's type codes (R internals, "Serialization formats").
const SYMSXP: u32 = 1;
const LISTSXP: u32 = 2;
const CHARSXP: u32 = 9;
const LGLSXP: u32 = 10;
const INTSXP: u32 = 13;
const REALSXP: u32 = 14;
const STRSXP: u32 = 16;
const VECSXP: u32 = 19;
const REFSXP: u32 = 255;
const NILVALUE_SXP: u32 = 254;
const NA_INTEGER: i32 = i32::MIN;

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Symbols in the order read: what a reference points to.
    symbols: Vec<String>,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "ends at byte {} where {n} more bytes were due",
                self.bytes.len()
            ));
        };
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn int(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    /// A vector's length, checked against the bytes left at `size` bytes or more per
    /// element, so that no bad length allocates.
    fn length(&mut self, size: usize) -> Result<usize, String> {
        let at = self.pos;
        let n = self.int()?;
        let n = match n {
            -1 => {
                // A long vector: two more ints, upper then lower 32 bits.
                let (hi, lo) = (self.int()? as u32 as u64, self.int()? as u32 as u64);
                usize::try_from((hi << 32) | lo)
                    .map_err(|_| format!("byte {at}: length too large"))?
            }
            n if n < 0 => return Err(format!("byte {at}: negative length {n}")),
            n => n as usize,
        };
        if n.saturating_mul(size) > self.bytes.len() - self.pos {
            return Err(format!(
                "byte {at}: length {n} but only {} bytes are left",
                self.bytes.len() - self.pos
            ));
        }
        Ok(n)
    }

    fn item(&mut self, depth: usize) -> Result<RObject, String> {
        if depth > MAX_DEPTH {
            return Err(format!("byte {}: nested deeper than {MAX_DEPTH}", self.pos));
        }
        let at = self.pos;
        let flags = self.int()? as u32;
        let kind = flags & 0xff;
        let has_attributes = flags & (1 << 9) != 0;
        let has_tag = flags & (1 << 10) != 0;
        let value = match kind {
            NILVALUE_SXP => return Ok(RObject::plain(RValue::Null)),
            REFSXP => {
                let mut index = (flags >> 8) as usize;
                if index == 0 {
                    index = self.int()? as u32 as usize;
                }
                let name = index
                    .checked_sub(1)
                    .and_then(|i| self.symbols.get(i))
                    .ok_or_else(|| format!("byte {at}: reference {index} to nothing read"))?;
                return Ok(RObject::plain(RValue::Symbol(name.clone())));
            }
            SYMSXP => {
                let name = match self.item(depth + 1)?.value {
                    RValue::Strings(mut s) if s.len() == 1 => s.pop().flatten().unwrap_or_default(),
                    _ => return Err(format!("byte {at}: a symbol's name is not a string")),
                };
                self.symbols.push(name.clone());
                return Ok(RObject::plain(RValue::Symbol(name)));
            }
            LISTSXP => return self.pairlist(flags, depth),
            CHARSXP => {
                let n = self.int()?;
                if n == -1 {
                    return Ok(RObject::plain(RValue::Strings(vec![None])));
                }
                let n =
                    usize::try_from(n).map_err(|_| format!("byte {at}: negative length {n}"))?;
                let text = String::from_utf8_lossy(self.take(n)?).into_owned();
                return Ok(RObject::plain(RValue::Strings(vec![Some(text)])));
            }
            LGLSXP => {
                let n = self.length(4)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(match self.int()? {
                        NA_INTEGER => None,
                        x => Some(x != 0),
                    });
                }
                RValue::Logical(v)
            }
            INTSXP => {
                let n = self.length(4)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(Some(self.int()?).filter(|&x| x != NA_INTEGER));
                }
                RValue::Integer(v)
            }
            REALSXP => {
                let n = self.length(8)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(f64::from_be_bytes(
                        self.take(8)?.try_into().expect("8 bytes"),
                    ));
                }
                RValue::Double(v)
            }
            STRSXP => {
                let n = self.length(4)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    let string_at = self.pos;
                    let flags = self.int()? as u32;
                    if flags & 0xff != CHARSXP {
                        return Err(format!("byte {string_at}: a string is not a CHARSXP"));
                    }
                    self.pos = string_at;
                    match self.item(depth + 1)?.value {
                        RValue::Strings(mut s) => v.push(s.pop().flatten()),
                        _ => unreachable!("a CHARSXP reads as one string"),
                    }
                }
                RValue::Strings(v)
            }
            VECSXP => {
                let n = self.length(4)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(self.item(depth + 1)?);
                }
                RValue::List(v)
            }
            other => {
                return Err(format!(
                    "byte {at}: R type {other} is not read (vectors, lists, symbols and \
                     pairlists are)"
                ));
            }
        };
        if has_tag {
            return Err(format!("byte {at}: a tag on a vector"));
        }
        let attributes = if has_attributes {
            self.attributes(depth)?
        } else {
            Vec::new()
        };
        Ok(RObject { value, attributes })
    }

    /// A pairlist whose first cell's flags were just read; the cells follow one another
    /// (read in a loop, not by recursion, so a long pairlist needs no deep stack).
    fn pairlist(&mut self, mut flags: u32, depth: usize) -> Result<RObject, String> {
        let mut cells = Vec::new();
        let mut attributes = Vec::new();
        loop {
            if flags & (1 << 9) != 0 {
                let cell_attributes = self.attributes(depth)?;
                if cells.is_empty() {
                    attributes = cell_attributes;
                }
            }
            let tag = if flags & (1 << 10) != 0 {
                match self.item(depth + 1)?.value {
                    RValue::Symbol(name) => Some(name),
                    _ => return Err(format!("byte {}: a pairlist tag is not a symbol", self.pos)),
                }
            } else {
                None
            };
            cells.push((tag, self.item(depth + 1)?));
            let at = self.pos;
            flags = self.int()? as u32;
            match flags & 0xff {
                LISTSXP => {}
                NILVALUE_SXP => break,
                other => {
                    return Err(format!("byte {at}: a pairlist ends in R type {other}"));
                }
            }
        }
        Ok(RObject {
            value: RValue::Pairlist(cells),
            attributes,
        })
    }

    fn attributes(&mut self, depth: usize) -> Result<Vec<(String, RObject)>, String> {
        let at = self.pos;
        match self.item(depth + 1)?.value {
            RValue::Pairlist(cells) => cells
                .into_iter()
                .map(|(tag, o)| {
                    tag.map(|t| (t, o))
                        .ok_or_else(|| format!("byte {at}: an attribute without a name"))
                })
                .collect(),
            _ => Err(format!("byte {at}: attributes are not a pairlist")),
        }
    }
}
