//! The paper's minijinja templates: strict undefined values, no auto-escaping, and the two
//! filters every value from data must go through (`typst_str`, `fixed`).

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Serde, Value, ValueKind};
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior};

use crate::report::tables::typst_string;
use crate::{Error, Result};

/// The most decimals `fixed` writes.
const MAX_DECIMALS: usize = 12;

/// Fills `template_text` (a Typst source named `name` in errors, e.g. `paper.typ`) from
/// `context` (a JSON object whose keys are the template's variables).
///
/// An undefined variable or attribute is an error naming the template, the line and the
/// expression; so is any other template error. The filters `typst_str` and `fixed(n)` are
/// described in the [module docs](super): every value from data must go through one of
/// them.
pub fn render_template(
    template_text: &str,
    name: &str,
    context: &serde_json::Value,
) -> Result<String> {
    render_with_partials(template_text, name, context, &[])
}

/// [`render_template`] with `partials` (name, text) that the template may `{% include %}`
/// by name (e.g. `report/paper-study.typ`); an include of any other name is an error.
pub fn render_with_partials(
    template_text: &str,
    name: &str,
    context: &serde_json::Value,
    partials: &[(String, String)],
) -> Result<String> {
    let mut env = environment();
    for (partial, text) in partials {
        env.add_template_owned(partial.clone(), text.clone())
            .map_err(|e| template_error(partial, text, &e))?;
    }
    let ctx = Value::from(Serde(context));
    env.render_named_str(name, template_text, ctx)
        .map_err(|e| template_error(name, template_text, &e))
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_syntax(
        SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
            .expect("the default delimiters are valid"),
    );
    env.add_filter("typst_str", typst_str_filter);
    env.add_filter("fixed", fixed_filter);
    env
}

fn template_error(name: &str, text: &str, err: &minijinja::Error) -> Error {
    let mut message = format!("template {name}: {err}");
    if err.kind() == ErrorKind::UndefinedError {
        let expr = err
            .range()
            .and_then(|r| text.get(r))
            .map(str::trim)
            .filter(|s| !s.is_empty());
        if let Some(expr) = expr {
            message.push_str(&format!(": `{expr}` is not in the context"));
        }
    }
    let mut source = std::error::Error::source(err);
    while let Some(inner) = source {
        message.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    Error::Invalid(message)
}

/// The `typst_str` filter: strings as they are, booleans as `true` / `false`, anything
/// else as minijinja displays it (numbers, `none`), each through [`crate::report::tables::typst_string`].
fn typst_str_filter(value: Value) -> std::result::Result<String, minijinja::Error> {
    if value.is_undefined() {
        return Err(minijinja::Error::new(
            ErrorKind::UndefinedError,
            "typst_str of an undefined value",
        ));
    }
    Ok(match (value.as_str(), value.kind()) {
        (Some(s), _) => typst_string(s),
        // Typst's spelling, not Python's `True`.
        (None, ValueKind::Bool) => typst_string(if value.is_true() { "true" } else { "false" }),
        (None, _) => typst_string(&value.to_string()),
    })
}

/// `value` with exactly `digits` decimals, as Rust's `{:.digits}` writes it (the decimal
/// nearest to the binary value); a result that is zero loses its minus sign.
pub(crate) fn fixed(value: f64, digits: usize) -> std::result::Result<String, String> {
    if !value.is_finite() {
        return Err(format!("fixed: {value} is not a finite number"));
    }
    if digits > MAX_DECIMALS {
        return Err(format!(
            "fixed: at most {MAX_DECIMALS} decimals, not {digits}"
        ));
    }
    Ok(crate::format::fixed(value, digits))
}

fn fixed_filter(value: Value, digits: usize) -> std::result::Result<String, minijinja::Error> {
    let number = if value.is_number() {
        f64::try_from(value.clone()).ok()
    } else {
        None
    };
    let number = number.ok_or_else(|| {
        minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!("fixed: {value:?} is not a number"),
        )
    })?;
    fixed(number, digits).map_err(|e| minijinja::Error::new(ErrorKind::InvalidOperation, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typst_str_escapes() {
        assert_eq!(typst_string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(typst_string("x\ny\u{7}"), r#""x\ny\u{7}""#);
    }

    #[test]
    fn fixed_digits() {
        assert_eq!(fixed(0.12345, 3).unwrap(), "0.123");
        assert_eq!(fixed(-0.0001, 3).unwrap(), "0.000");
        assert_eq!(fixed(-1.5, 0).unwrap(), "-2");
        assert_eq!(fixed(2.0, 2).unwrap(), "2.00");
        assert!(fixed(f64::NAN, 2).is_err());
        assert!(fixed(1.0, 13).is_err());
    }
}
