//! How outputs and inputs relate, read from the manifest: what an output is made from and
//! what an input feeds (`build-report --why`).

use std::collections::BTreeSet;

use super::format::Manifest;

impl Manifest {
    /// How `path` relates to the build, for `build-report --why`: backward, if it is an
    /// output, the inputs it was made from (and, for an input that is itself an output,
    /// that output's inputs, and so on); forward, if it is an input, every output made
    /// from it (and every output made from those). One line per step, indented by depth;
    /// `None` when the manifest neither lists it nor records it as an input.
    pub fn why(&self, path: &str) -> Option<String> {
        let mut out = String::new();
        if self.outputs.contains_key(path) {
            out.push_str(&format!("{path} is made from:\n"));
            let mut seen = BTreeSet::from([path.to_string()]);
            self.backward(path, 1, &mut seen, &mut out);
        }
        let users = self.users(path);
        if !users.is_empty() {
            out.push_str(&format!("{path} feeds:\n"));
            let mut seen = BTreeSet::from([path.to_string()]);
            self.forward(path, 1, &mut seen, &mut out);
        }
        (!out.is_empty()).then_some(out)
    }

    /// Every output made from `input`, directly or through other outputs, sorted.
    pub fn feeds(&self, input: &str) -> Vec<&str> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![input];
        while let Some(next) = todo.pop() {
            for user in self.users(next) {
                if seen.insert(user) {
                    todo.push(user);
                }
            }
        }
        seen.into_iter().collect()
    }

    /// The outputs that list `input` among their inputs, sorted.
    fn users(&self, input: &str) -> Vec<&str> {
        self.outputs
            .iter()
            .filter(|(_, e)| e.inputs.contains_key(input))
            .map(|(p, _)| p.as_str())
            .collect()
    }

    fn backward(&self, path: &str, depth: usize, seen: &mut BTreeSet<String>, out: &mut String) {
        let Some(entry) = self.outputs.get(path) else {
            return;
        };
        for (input, sha256) in &entry.inputs {
            let note = if self.outputs.contains_key(input) {
                " (an output)"
            } else {
                ""
            };
            out.push_str(&format!("{}{input}  {sha256}{note}\n", "  ".repeat(depth)));
            if seen.insert(input.clone()) {
                self.backward(input, depth + 1, seen, out);
            }
        }
    }

    fn forward(&self, input: &str, depth: usize, seen: &mut BTreeSet<String>, out: &mut String) {
        for user in self.users(input) {
            out.push_str(&format!("{}{user}\n", "  ".repeat(depth)));
            if seen.insert(user.to_string()) {
                self.forward(user, depth + 1, seen, out);
            }
        }
    }
}
