//! Reading a PDF: its attachments and last page, the manifest hash printed there, and its
//! object graph in a canonical form that leaves out the metadata a publisher may re-stamp.

use std::collections::BTreeMap;
use std::path::Path;

use lopdf::{Document, Object};

use super::format::PRINTED;
use crate::{Error, Result};

/// What a PDF carries: its attachments by file name, and its last page's text.
#[derive(Clone, Debug)]
pub struct Carried {
    /// Attached files by their last path component.
    pub attachments: BTreeMap<String, Vec<u8>>,
    /// The text of the last page.
    pub last_page: String,
}

fn pdf_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Artifact {
        path: path.to_path_buf(),
        message: format!("not a readable PDF: {message}"),
    }
}

/// Reads a PDF's attachments and last page; errors name `path`.
pub fn read_pdf(path: &Path, bytes: &[u8]) -> Result<Carried> {
    let doc = Document::load_mem(bytes).map_err(|e| pdf_error(path, e))?;
    let pages = doc.get_pages();
    let last = *pages
        .keys()
        .next_back()
        .ok_or_else(|| pdf_error(path, "it has no pages"))?;
    let last_page = doc
        .extract_text(&[last])
        .map_err(|e| pdf_error(path, format!("page {last}: {e}")))?;
    let mut attachments = BTreeMap::new();
    if let Some(tree) = embedded_files(&doc) {
        collect_names(&doc, tree, 0, &mut attachments).map_err(|e| pdf_error(path, e))?;
    }
    Ok(Carried {
        attachments,
        last_page,
    })
}

/// The catalog's `/Names /EmbeddedFiles` name tree, if any.
fn embedded_files(doc: &Document) -> Option<&lopdf::Dictionary> {
    let names = doc.catalog().ok()?.get_deref(b"Names", doc).ok()?;
    let tree = names
        .as_dict()
        .ok()?
        .get_deref(b"EmbeddedFiles", doc)
        .ok()?;
    tree.as_dict().ok()
}

/// Walks a name tree node: `/Names [name filespec ...]` and `/Kids [node ...]`. The depth
/// bound keeps a crafted, cyclic tree from recursing forever.
fn collect_names(
    doc: &Document,
    node: &lopdf::Dictionary,
    depth: usize,
    out: &mut BTreeMap<String, Vec<u8>>,
) -> std::result::Result<(), String> {
    if depth > 32 {
        return Err("the attachments' name tree is deeper than 32 levels".into());
    }
    if let Ok(names) = node.get_deref(b"Names", doc).and_then(Object::as_array) {
        for pair in names.chunks(2) {
            let [name, spec] = pair else {
                return Err("an attachment name without its file".into());
            };
            let name = String::from_utf8_lossy(name.as_str().map_err(|e| e.to_string())?);
            let (_, spec) = doc.dereference(spec).map_err(|e| e.to_string())?;
            let stream = spec
                .as_dict()
                .and_then(|d| d.get_deref(b"EF", doc))
                .and_then(Object::as_dict)
                .and_then(|ef| ef.get_deref(b"F", doc))
                .and_then(Object::as_stream)
                .map_err(|e| format!("attachment {name}: {e}"))?;
            let bytes = if stream.dict.get(b"Filter").is_ok() {
                stream
                    .decompressed_content()
                    .map_err(|e| format!("attachment {name}: {e}"))?
            } else {
                stream.content.clone()
            };
            let file = name.rsplit('/').next().unwrap_or(&name).to_string();
            out.insert(file, bytes);
        }
    }
    if let Ok(kids) = node.get_deref(b"Kids", doc).and_then(Object::as_array) {
        for kid in kids {
            let (_, kid) = doc.dereference(kid).map_err(|e| e.to_string())?;
            let kid = kid.as_dict().map_err(|e| e.to_string())?;
            collect_names(doc, kid, depth + 1, out)?;
        }
    }
    Ok(())
}

/// The SHA-256 printed after [`PRINTED`] in `text`, whitespace ignored (text extraction
/// may break a line anywhere).
///
/// ```
/// use drift::report::proof::printed_hash;
/// let h = "0123456789abcdef".repeat(4);
/// assert_eq!(printed_hash(&format!("Manifest SHA-256:\n{h}\nCode SHA-256: ...")), Some(h));
/// assert_eq!(printed_hash("Manifest SHA-256: 0123"), None);
/// ```
pub fn printed_hash(text: &str) -> Option<String> {
    let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let marker: String = PRINTED.chars().filter(|c| !c.is_whitespace()).collect();
    let at = squeezed.find(&marker)? + marker.len();
    // Exactly 64 digits: with the whitespace gone, the next line's first letters may be
    // hex digits too ("Code ...").
    let hex: String = squeezed[at..].chars().take(64).collect();
    (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| hex.to_ascii_lowercase())
}

/// A PDF's object graph in a canonical form without its metadata: the objects reachable
/// from the catalog, numbered in the order a breadth-first walk meets them, dictionary
/// keys sorted, streams decompressed; the document information dictionary, the file
/// identifier and the catalog's XMP `/Metadata` left out. Two PDFs with equal forms
/// differ in metadata and layout of the file only.
pub fn canonical(path: &Path, bytes: &[u8]) -> Result<Vec<u8>> {
    let doc = Document::load_mem(bytes).map_err(|e| pdf_error(path, e))?;
    let root = doc
        .trailer
        .get(b"Root")
        .and_then(Object::as_reference)
        .map_err(|e| pdf_error(path, format!("trailer /Root: {e}")))?;
    let mut numbers: BTreeMap<lopdf::ObjectId, usize> = BTreeMap::from([(root, 0)]);
    let mut queue = std::collections::VecDeque::from([root]);
    let mut out = Vec::new();
    while let Some(id) = queue.pop_front() {
        let object = doc
            .get_object(id)
            .map_err(|e| pdf_error(path, format!("object {} {}: {e}", id.0, id.1)))?;
        out.extend_from_slice(format!("{} = ", numbers[&id]).as_bytes());
        let is_catalog = id == root;
        write_canonical(object, is_catalog, &mut numbers, &mut queue, &mut out)
            .map_err(|e| pdf_error(path, e))?;
        out.push(b'\n');
    }
    Ok(out)
}

fn write_canonical(
    object: &Object,
    is_catalog: bool,
    numbers: &mut BTreeMap<lopdf::ObjectId, usize>,
    queue: &mut std::collections::VecDeque<lopdf::ObjectId>,
    out: &mut Vec<u8>,
) -> std::result::Result<(), String> {
    // An explicit stack, not recursion: a crafted file cannot overflow it.
    enum Item<'a> {
        Object(&'a Object, bool),
        Raw(Vec<u8>),
    }
    let mut stack = vec![Item::Object(object, is_catalog)];
    while let Some(item) = stack.pop() {
        let object = match item {
            Item::Raw(bytes) => {
                out.extend_from_slice(&bytes);
                continue;
            }
            Item::Object(object, catalog) => match object {
                Object::Dictionary(dict) => {
                    push_dict(dict, catalog, &[], &mut stack);
                    continue;
                }
                Object::Stream(stream) => {
                    let content = if stream.dict.get(b"Filter").is_ok() {
                        stream.decompressed_content().map_err(|e| e.to_string())?
                    } else {
                        stream.content.clone()
                    };
                    let mut raw = format!("stream {} ", content.len()).into_bytes();
                    raw.extend_from_slice(&content);
                    stack.push(Item::Raw(raw));
                    let skip: &[&[u8]] = &[b"Length", b"Filter", b"DecodeParms"];
                    push_dict(&stream.dict, false, skip, &mut stack);
                    continue;
                }
                Object::Array(items) => {
                    stack.push(Item::Raw(b"]".to_vec()));
                    for item in items.iter().rev() {
                        stack.push(Item::Object(item, false));
                        stack.push(Item::Raw(b" ".to_vec()));
                    }
                    stack.push(Item::Raw(b"[".to_vec()));
                    continue;
                }
                other => other,
            },
        };
        match object {
            Object::Reference(id) => {
                let next = numbers.len();
                let n = *numbers.entry(*id).or_insert_with(|| {
                    queue.push_back(*id);
                    next
                });
                out.extend_from_slice(format!("@{n}").as_bytes());
            }
            Object::Null => out.extend_from_slice(b"null"),
            Object::Boolean(b) => out.extend_from_slice(format!("{b}").as_bytes()),
            Object::Integer(i) => out.extend_from_slice(format!("{i}").as_bytes()),
            Object::Real(r) => out.extend_from_slice(format!("{r:?}").as_bytes()),
            Object::Name(n) => {
                out.push(b'/');
                out.extend_from_slice(n);
            }
            Object::String(s, _) => {
                out.extend_from_slice(format!("({}:", s.len()).as_bytes());
                out.extend_from_slice(s);
                out.push(b')');
            }
            Object::Dictionary(_) | Object::Stream(_) | Object::Array(_) => {
                unreachable!("containers are expanded above")
            }
        }
    }
    return Ok(());

    fn push_dict<'a>(
        dict: &'a lopdf::Dictionary,
        catalog: bool,
        skip: &[&[u8]],
        stack: &mut Vec<Item<'a>>,
    ) {
        let mut entries: Vec<(&Vec<u8>, &Object)> = dict
            .iter()
            .filter(|(k, _)| !skip.contains(&k.as_slice()))
            .filter(|(k, _)| !(catalog && k.as_slice() == b"Metadata"))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        stack.push(Item::Raw(b">>".to_vec()));
        for (key, value) in entries.into_iter().rev() {
            stack.push(Item::Object(value, false));
            let mut raw = b" /".to_vec();
            raw.extend_from_slice(key);
            raw.push(b' ');
            stack.push(Item::Raw(raw));
        }
        stack.push(Item::Raw(b"<<".to_vec()));
    }
}
