//! The crate's structure, read from its source with syn and checked:
//!
//! - the modules follow the data flow: a stage imports only the stages before it, in the
//!   order the numbered list of `src/lib.rs`'s doc gives (written there once; read here),
//!   and the README's module table lists them in that order;
//! - no loop between files anywhere in `src/`: a file that names an item of another file
//!   (a `use`, a `crate::`/`super::` path, a child module's path) depends on it, re-exports
//!   followed to the file that defines the item, and those dependencies form no cycle;
//! - no file over [`MAX_FILE_LINES`] lines and no function over [`MAX_FN_LINES`];
//! - no two public types share a name, but for the names one module each defines by
//!   convention ([`CONVENTIONAL`]).
//!
//! `cargo test --test tests -- stages` runs these checks alone.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The longest a file under `src/` may be.
const MAX_FILE_LINES: usize = 700;
/// The longest a function may be, from its `fn` line to its closing brace.
const MAX_FN_LINES: usize = 150;
/// Public type names that many modules define once each, by convention: a subcommand's
/// `Args` and `Command`, a model file's `Size`.
const CONVENTIONAL: &[&str] = &["Args", "Command", "Size"];

/// One parsed file of the library.
struct Source {
    /// Its path under `src/`.
    rel: String,
    /// Its module path (`report::figures` for `report/figures/mod.rs`).
    module: Vec<String>,
    text: String,
    ast: syn::File,
}

impl Source {
    fn parse(rel: &str, text: String) -> Source {
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("src/{rel}: {e}"));
        let mut module: Vec<String> = rel
            .trim_end_matches(".rs")
            .split('/')
            .map(str::to_string)
            .collect();
        if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
            module.pop();
        }
        Source {
            rel: rel.to_string(),
            module,
            text,
            ast,
        }
    }
}

/// Every `.rs` file under `src/`, parsed, in path order.
fn sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    walkdir::WalkDir::new(&src)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| {
            let rel = e.path().strip_prefix(&src).unwrap().to_str().unwrap();
            Source::parse(rel, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect()
}

/// The library's files: the binaries (`main.rs`, `bin/`) are crates of their own above it.
fn library(all: &[Source]) -> Vec<&Source> {
    all.iter()
        .filter(|s| s.rel != "main.rs" && !s.rel.starts_with("bin/"))
        .collect()
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

// ---- what each module defines and imports ----------------------------------------------

/// The names a module defines and the names its `use` items bring in.
#[derive(Default)]
struct Scope {
    /// The file that holds the module.
    file: usize,
    items: BTreeSet<String>,
    /// `use` aliases: the name in this module and the absolute path it stands for.
    uses: BTreeMap<String, Vec<String>>,
    /// `use path::*` of modules of this crate.
    globs: Vec<Vec<String>>,
}

/// A `use` tree flattened into (name, absolute path) pairs; `*` gives the name `*`.
fn flatten_use(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut prefix = prefix;
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, out);
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                out.push((prefix.last().cloned().unwrap_or_default(), prefix));
            } else {
                let mut path = prefix;
                path.push(name.clone());
                out.push((name, path));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix;
            path.push(r.ident.to_string());
            out.push((r.rename.to_string(), path));
        }
        syn::UseTree::Glob(_) => out.push(("*".into(), prefix)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix.clone(), out);
            }
        }
    }
}

/// The crate's modules (files and inline `mod x { }`), each with its scope.
struct Crate {
    files: Vec<String>,
    modules: BTreeMap<Vec<String>, Scope>,
    /// Every module path, known before any scope is read (a `use child::x` needs it).
    names: BTreeSet<Vec<String>>,
}

/// The module paths of `items` (inline modules) below `module`.
fn module_names(module: &[String], items: &[syn::Item], out: &mut BTreeSet<Vec<String>>) {
    out.insert(module.to_vec());
    for item in items {
        if let syn::Item::Mod(m) = item
            && let Some((_, content)) = &m.content
            && !is_test_only(&m.attrs)
        {
            let mut inner = module.to_vec();
            inner.push(m.ident.to_string());
            module_names(&inner, content, out);
        }
    }
}

impl Crate {
    fn new(sources: &[&Source]) -> Crate {
        let mut names = BTreeSet::new();
        for s in sources {
            module_names(&s.module, &s.ast.items, &mut names);
        }
        let mut krate = Crate {
            files: sources.iter().map(|s| s.rel.clone()).collect(),
            modules: BTreeMap::new(),
            names,
        };
        for (i, s) in sources.iter().enumerate() {
            krate.collect(i, &s.module, &s.ast.items);
        }
        krate
    }

    fn collect(&mut self, file: usize, module: &[String], items: &[syn::Item]) {
        let mut scope = Scope {
            file,
            ..Scope::default()
        };
        let mut inline = Vec::new();
        for item in items {
            let name = match item {
                syn::Item::Use(u) => {
                    let mut flat = Vec::new();
                    flatten_use(&u.tree, Vec::new(), &mut flat);
                    for (name, path) in flat {
                        let Some(path) = absolute(module, &path, |m| self.is_module(m)) else {
                            continue;
                        };
                        if name == "*" {
                            scope.globs.push(path);
                        } else {
                            scope.uses.insert(name, path);
                        }
                    }
                    None
                }
                syn::Item::Mod(m) => {
                    if let Some((_, content)) = &m.content
                        && !is_test_only(&m.attrs)
                    {
                        inline.push((m.ident.to_string(), content));
                    }
                    Some(&m.ident)
                }
                syn::Item::Fn(f) => Some(&f.sig.ident),
                syn::Item::Struct(s) => Some(&s.ident),
                syn::Item::Enum(e) => Some(&e.ident),
                syn::Item::Type(t) => Some(&t.ident),
                syn::Item::Trait(t) => Some(&t.ident),
                syn::Item::Const(c) => Some(&c.ident),
                syn::Item::Static(s) => Some(&s.ident),
                syn::Item::Union(u) => Some(&u.ident),
                syn::Item::Macro(m) => m.ident.as_ref(),
                _ => None,
            };
            if let Some(name) = name {
                scope.items.insert(name.to_string());
            }
        }
        self.modules.insert(module.to_vec(), scope);
        for (name, content) in inline {
            let mut inner = module.to_vec();
            inner.push(name);
            self.collect(file, &inner, content);
        }
    }

    fn is_module(&self, path: &[String]) -> bool {
        self.names.contains(path)
    }

    /// The file that defines what the absolute `path` names, following `use` re-exports;
    /// `None` for another crate's item.
    fn resolve(&self, path: &[String], depth: usize) -> Option<usize> {
        let k = (0..=path.len())
            .rev()
            .find(|&k| self.is_module(&path[..k]))?;
        let scope = &self.modules[&path[..k]];
        let Some(name) = path.get(k) else {
            return Some(scope.file);
        };
        if scope.items.contains(name) || depth > 16 {
            return Some(scope.file);
        }
        if let Some(target) = scope.uses.get(name) {
            let mut next = target.clone();
            next.extend_from_slice(&path[k + 1..]);
            // Another crate's item re-exported here is this file's business only.
            return self.resolve(&next, depth + 1);
        }
        for glob in &scope.globs {
            let defines = self
                .modules
                .get(glob)
                .is_some_and(|g| g.items.contains(name) || g.uses.contains_key(name));
            if defines {
                let mut next = glob.clone();
                next.extend_from_slice(&path[k..]);
                return self.resolve(&next, depth + 1);
            }
        }
        Some(scope.file)
    }
}

/// `path` as written in `module` made absolute (`crate::`, `super::`, `self::`, or a name of
/// this module such as a child module); `None` when it names another crate.
fn absolute(
    module: &[String],
    path: &[String],
    is_module: impl Fn(&[String]) -> bool,
) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut base = match first.as_str() {
        "crate" => return Some(rest.to_vec()),
        "self" => module.to_vec(),
        "super" => module[..module.len().checked_sub(1)?].to_vec(),
        _ => {
            let mut child = module.to_vec();
            child.push(first.clone());
            return is_module(&child).then(|| {
                child.extend_from_slice(rest);
                child
            });
        }
    };
    let mut rest = rest;
    while rest.first().is_some_and(|s| s == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    base.extend_from_slice(rest);
    Some(base)
}

/// Every path a file's code names, per module it is written in: `use` items are read by
/// [`Crate::new`]; this adds the paths in code and inside macro calls.
struct PathsInCode<'a> {
    krate: &'a Crate,
    module: Vec<String>,
    found: BTreeSet<usize>,
}

impl PathsInCode<'_> {
    fn add(&mut self, segments: Vec<String>) {
        if segments.len() < 2 {
            return; // a local name, or `self` the receiver
        }
        let scope = &self.krate.modules[&self.module];
        let path = match scope.uses.get(&segments[0]) {
            Some(alias) => {
                let mut p = alias.clone();
                p.extend_from_slice(&segments[1..]);
                Some(p)
            }
            None => absolute(&self.module, &segments, |m| self.krate.is_module(m)),
        };
        self.reach(path);
    }

    /// The file that defines what the absolute `path` names, if it is of this crate.
    fn reach(&mut self, path: Option<Vec<String>>) {
        if let Some(file) = path.and_then(|p| self.krate.resolve(&p, 0)) {
            self.found.insert(file);
        }
    }

    /// `a::b::c` sequences in a macro's tokens (`format!("{}", crate::x::y())`).
    fn tokens(&mut self, tokens: TokenStream) {
        let mut run: Vec<String> = Vec::new();
        let mut colons = 0;
        for token in tokens {
            match token {
                TokenTree::Ident(i) if run.is_empty() || colons == 2 => {
                    run.push(i.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() && colons < 2 => {
                    colons += 1;
                }
                other => {
                    self.add(std::mem::take(&mut run));
                    colons = 0;
                    match other {
                        TokenTree::Group(g) => self.tokens(g.stream()),
                        TokenTree::Ident(i) => run.push(i.to_string()),
                        _ => {}
                    }
                }
            }
        }
        self.add(run);
    }
}

impl<'ast> Visit<'ast> for PathsInCode<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.add(segments);
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        // Module-level `use` items are also aliases in Crate's scopes; a function's own
        // `use` items count here too.
        let mut flat = Vec::new();
        flatten_use(&u.tree, Vec::new(), &mut flat);
        for (_, path) in flat {
            self.reach(absolute(&self.module, &path, |m| self.krate.is_module(m)));
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_test_only(&m.attrs) || m.content.is_none() {
            return;
        }
        self.module.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.module.pop();
    }
}

/// For each file of the library, the other files it depends on.
fn dependencies(sources: &[&Source]) -> (Crate, Vec<BTreeSet<usize>>) {
    let krate = Crate::new(sources);
    let mut deps = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let mut visitor = PathsInCode {
            krate: &krate,
            module: s.module.clone(),
            found: BTreeSet::new(),
        };
        visitor.visit_file(&s.ast);
        let mut found = visitor.found;
        // A module's `mod child;` is not a use of the child, nor a file of itself.
        found.remove(&i);
        deps.push(found);
    }
    (krate, deps)
}

/// The loops among files: each a cycle of file paths, the first repeated at the end.
fn loops(files: &[String], deps: &[BTreeSet<usize>]) -> Vec<Vec<String>> {
    // Depth-first search; a back edge closes a cycle, reported once per strongly connected
    // set (its nodes are then marked done).
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn walk(
        v: usize,
        deps: &[BTreeSet<usize>],
        mark: &mut [Mark],
        stack: &mut Vec<usize>,
        found: &mut Vec<Vec<usize>>,
    ) {
        mark[v] = Mark::Open;
        stack.push(v);
        for &w in &deps[v] {
            match mark[w] {
                Mark::New => walk(w, deps, mark, stack, found),
                Mark::Open => {
                    let at = stack.iter().position(|&x| x == w).unwrap();
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(w);
                    found.push(cycle);
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        mark[v] = Mark::Done;
    }
    let mut mark = vec![Mark::New; files.len()];
    let mut found = Vec::new();
    for v in 0..files.len() {
        if mark[v] == Mark::New {
            walk(v, deps, &mut mark, &mut Vec::new(), &mut found);
        }
    }
    found
        .into_iter()
        .map(|c| c.into_iter().map(|i| files[i].clone()).collect())
        .collect()
}

// ---- the stage order -------------------------------------------------------------------

/// The top-level modules `lib.rs` declares.
fn declared_modules(lib: &Source) -> Vec<(String, bool)> {
    lib.ast
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Mod(m) => Some((
                m.ident.to_string(),
                matches!(m.vis, syn::Visibility::Public(_)),
            )),
            _ => None,
        })
        .collect()
}

/// The backquoted names in `text`, in order.
fn quoted(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The stage order, as the numbered list in `lib.rs`'s doc writes it: the modules in the
/// order of their first mention.
fn stage_order(lib: &Source) -> Vec<String> {
    let modules: BTreeSet<String> = declared_modules(lib).into_iter().map(|m| m.0).collect();
    let doc: Vec<&str> = lib
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let starts_item = |l: &str| {
        l.split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    let first = doc
        .iter()
        .position(|l| starts_item(l))
        .expect("src/lib.rs: its doc has no numbered list of stages");
    let list = doc[first..].iter().take_while(|l| !l.is_empty());
    let mut order: Vec<String> = Vec::new();
    for name in list.flat_map(|l| quoted(l)) {
        let name = name.split("::").next().unwrap().to_string();
        if modules.contains(&name) && !order.contains(&name) {
            order.push(name);
        }
    }
    order
}

#[test]
fn every_module_has_a_stage_in_the_lib_doc() {
    let all = sources();
    let lib = all.iter().find(|s| s.rel == "lib.rs").unwrap();
    let order = stage_order(lib);
    let missing: Vec<String> = declared_modules(lib)
        .into_iter()
        .map(|m| m.0)
        .filter(|m| !order.contains(m))
        .collect();
    assert!(
        missing.is_empty(),
        "src/lib.rs declares modules its numbered stage list does not name: {missing:?}"
    );
}

#[test]
fn no_module_imports_a_later_stage() {
    let all = sources();
    let lib = all.iter().find(|s| s.rel == "lib.rs").unwrap();
    let order = stage_order(lib);
    let sources = library(&all);
    let (_, deps) = dependencies(&sources);
    let rank = |s: &Source| {
        s.module
            .first()
            .and_then(|m| order.iter().position(|o| o == m))
    };
    let mut violations = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let Some(own) = rank(s) else { continue }; // lib.rs sits above every stage
        for &d in &deps[i] {
            if rank(sources[d]).is_some_and(|other| other > own) {
                let names = (&s.module[0], &sources[d].module[0]);
                violations.push(format!(
                    "src/{} ({}) uses src/{} ({})",
                    s.rel, names.0, sources[d].rel, names.1
                ));
            }
        }
    }
    assert!(sources.len() > 50, "{} files under src/", sources.len());
    assert!(
        violations.is_empty(),
        "imports of later stages (order: src/lib.rs):\n{}",
        violations.join("\n")
    );
}

#[test]
fn no_loop_between_files() {
    let all = sources();
    let sources = library(&all);
    let (krate, deps) = dependencies(&sources);
    let found = loops(&krate.files, &deps);
    let lines: Vec<String> = found.iter().map(|c| c.join(" -> ")).collect();
    assert!(
        lines.is_empty(),
        "{} loop(s) between files under src/:\n{}",
        lines.len(),
        lines.join("\n")
    );
}

#[test]
fn the_readme_lists_the_public_modules_in_stage_order() {
    let all = sources();
    let lib = all.iter().find(|s| s.rel == "lib.rs").unwrap();
    let order = stage_order(lib);
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let table: Vec<Vec<String>> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| module | owns |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| quoted(l.split('|').nth(1).unwrap()))
        .collect();
    assert!(!table.is_empty(), "README.md: no `| module | owns |` table");
    let listed: Vec<&String> = table.iter().flatten().collect();
    let public: Vec<String> = declared_modules(lib)
        .into_iter()
        .filter(|m| m.1)
        .map(|m| m.0)
        .collect();
    let missing: Vec<&String> = public.iter().filter(|m| !listed.contains(m)).collect();
    assert!(
        missing.is_empty(),
        "README.md's module table lacks {missing:?}"
    );
    let ranks: Vec<usize> = listed
        .iter()
        .map(|m| {
            order
                .iter()
                .position(|o| o == *m)
                .unwrap_or_else(|| panic!("README.md's module table names `{m}`, no module"))
        })
        .collect();
    assert!(
        ranks.windows(2).all(|w| w[0] < w[1]),
        "README.md's module table is not in the stage order of src/lib.rs: {listed:?} against {order:?}"
    );
}

// ---- sizes and names -------------------------------------------------------------------

/// Every function (free, in an impl or a trait, nested ones too) with its first and last
/// line.
#[derive(Default)]
struct Functions(Vec<(String, usize, usize)>);

impl Functions {
    fn add(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let start = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().end().line;
        self.0.push((sig.ident.to_string(), start, end));
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.add(&f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.add(&f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.add(&f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

#[test]
fn no_file_or_function_is_too_long() {
    let mut long = Vec::new();
    for s in sources() {
        let lines = s.text.lines().count();
        if lines > MAX_FILE_LINES {
            long.push(format!("src/{}: {lines} lines", s.rel));
        }
        let mut functions = Functions::default();
        functions.visit_file(&s.ast);
        for (name, start, end) in functions.0 {
            let n = end - start + 1;
            if n > MAX_FN_LINES {
                long.push(format!("src/{}:{start}: fn {name}: {n} lines", s.rel));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_FILE_LINES} lines a file or {MAX_FN_LINES} a function:\n{}",
        long.join("\n")
    );
}

/// Every public type (struct, enum, union, type alias, trait) outside test code, by name,
/// with the modules that define one.
#[derive(Default)]
struct PublicTypes {
    module: Vec<String>,
    found: BTreeMap<String, Vec<String>>,
}

impl PublicTypes {
    fn add(&mut self, vis: &syn::Visibility, ident: &syn::Ident) {
        if matches!(vis, syn::Visibility::Public(_)) {
            let entry = self.found.entry(ident.to_string()).or_default();
            entry.push(self.module.join("::"));
        }
    }
}

impl<'ast> Visit<'ast> for PublicTypes {
    fn visit_item_struct(&mut self, i: &'ast syn::ItemStruct) {
        self.add(&i.vis, &i.ident);
    }
    fn visit_item_enum(&mut self, i: &'ast syn::ItemEnum) {
        self.add(&i.vis, &i.ident);
    }
    fn visit_item_union(&mut self, i: &'ast syn::ItemUnion) {
        self.add(&i.vis, &i.ident);
    }
    fn visit_item_type(&mut self, i: &'ast syn::ItemType) {
        self.add(&i.vis, &i.ident);
    }
    fn visit_item_trait(&mut self, i: &'ast syn::ItemTrait) {
        self.add(&i.vis, &i.ident);
    }
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_test_only(&m.attrs) {
            return;
        }
        self.module.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.module.pop();
    }
}

#[test]
fn no_two_public_types_share_a_name() {
    let all = sources();
    let mut types = PublicTypes::default();
    for s in library(&all) {
        types.module = s.module.clone();
        types.visit_file(&s.ast);
    }
    let shared: Vec<String> = types
        .found
        .iter()
        .filter(|(name, modules)| modules.len() > 1 && !CONVENTIONAL.contains(&name.as_str()))
        .map(|(name, modules)| format!("{name}: {}", modules.join(", ")))
        .collect();
    assert!(
        shared.is_empty(),
        "public types with the same name in several modules:\n{}",
        shared.join("\n")
    );
}

// ---- the checker checked ---------------------------------------------------------------

fn toy(files: &[(&str, &str)]) -> Vec<Source> {
    files
        .iter()
        .map(|(rel, text)| Source::parse(rel, text.to_string()))
        .collect()
}

fn toy_loops(files: &[(&str, &str)]) -> Vec<String> {
    let sources = toy(files);
    let refs: Vec<&Source> = sources.iter().collect();
    let (krate, deps) = dependencies(&refs);
    loops(&krate.files, &deps)
        .iter()
        .map(|c| c.join(" -> "))
        .collect()
}

#[test]
fn a_child_that_uses_its_parent_which_uses_it_is_a_loop() {
    // The parent calls the child; the child takes a helper the parent defines.
    let found = toy_loops(&[
        ("lib.rs", "pub mod a;"),
        (
            "a/mod.rs",
            "mod b; pub fn helper() {} pub fn run() { b::go() }",
        ),
        ("a/b.rs", "use super::helper; pub fn go() { helper() }"),
    ]);
    assert_eq!(found, ["a/mod.rs -> a/b.rs -> a/mod.rs"]);
    // The helper in a leaf of its own, re-exported by the parent: no loop.
    let found = toy_loops(&[
        ("lib.rs", "pub mod a;"),
        (
            "a/mod.rs",
            "mod b; mod h; pub use h::helper; pub fn run() { b::go() }",
        ),
        ("a/h.rs", "pub fn helper() {}"),
        ("a/b.rs", "use super::h::helper; pub fn go() { helper() }"),
    ]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn paths_in_code_and_macros_count_and_reexports_are_followed() {
    // x.rs names y through the crate root's re-export, inside a macro call; y names x in
    // an expression: a loop.
    let found = toy_loops(&[
        ("lib.rs", "pub mod x; pub mod y; pub use y::Y;"),
        ("x.rs", "pub fn f() { println!(\"{:?}\", crate::Y::new()) }"),
        (
            "y.rs",
            "pub struct Y; impl Y { pub fn new() -> Y { crate::x::f(); Y } }",
        ),
    ]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("x.rs -> y.rs") || found[0].contains("y.rs -> x.rs"));
    // Another crate's path and a test module's `use super::*` are not dependencies.
    let found = toy_loops(&[
        ("lib.rs", "pub mod x; pub mod y;"),
        ("x.rs", "use std::fmt; pub fn f() { crate::y::g() }"),
        (
            "y.rs",
            "pub fn g() {} #[cfg(test)] mod tests { use crate::x::f; }",
        ),
    ]);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn the_stage_order_is_read_from_the_numbered_list() {
    let lib = Source::parse(
        "lib.rs",
        "//! Intro naming `b` first.\n//!\n//! 0. Foundations: `a` and [`b`](mod@b).\n\
         //! 1. [`c::Thing`] reads `a`.\n//!\n//! After the list, `d`.\n\
         pub mod a; mod b; pub mod c; pub mod d;"
            .into(),
    );
    assert_eq!(stage_order(&lib), ["a", "b", "c"]);
}
