//! A route's plan, made once at registration: where each handler parameter comes from and
//! what type it converts to.

use http::StatusCode;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyTuple};

/// Where a parameter's value comes from.
pub(crate) enum Source {
    /// The n-th `{name}` of the path template.
    Path(usize),
    /// The query string, by this name.
    Query,
    /// A header field, by this name.
    Header,
    /// A cookie of the `Cookie` header field, by this name.
    Cookie,
    /// The request body, through a validator.
    Body(Py<PyAny>),
    /// The request body as a form: its validator gets the body and the `content-type`.
    Form(Py<PyAny>),
    /// The `Request` itself.
    Request,
}

/// The scalar type path, query and header values convert to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Str,
    Int,
    Float,
    Bool,
}

/// One handler parameter.
pub(crate) struct Param {
    /// The name the value is looked up by (the alias, if one was given).
    pub key: Box<str>,
    /// Other names it may come by, tried in order after `key` (pydantic's `AliasChoices`).
    pub alternates: Box<[Box<str>]>,
    pub source: Source,
    pub kind: Kind,
    /// A `list[...]` of values (query only): every occurrence.
    pub list: bool,
    /// The default, when the parameter may be left out.
    pub default: Option<Py<PyAny>>,
    /// The default is mutable (a list, a dict, a model): each request gets a deep copy of it,
    /// as FastAPI's do, so that what one does to it no other sees.
    pub copies_default: bool,
    /// Set for keyword-only parameters: passed by this name rather than by position.
    pub keyword: Option<Py<PyString>>,
    /// What the converted value must satisfy (`Query(ge=1)` and the like), in pydantic's order.
    pub checks: Vec<Check>,
    /// For a value of a type the engine does not convert itself (an `Enum`, a `UUID`...): the
    /// Python callable that makes it from the text, `(ok, value_or_errors_json)`.
    pub convert: Option<Py<PyAny>>,
}

/// One constraint on a converted value, with the limit as the error quotes it.
pub(crate) struct Check {
    pub rule: Rule,
    /// The limit as the message writes it (`1`, `0.5`).
    pub text: Box<str>,
    /// The limit as the error's `ctx` gives it.
    pub ctx: serde_json::Value,
}

/// What a [`Check`] asks of the value.
pub(crate) enum Rule {
    Gt(f64),
    Ge(f64),
    Lt(f64),
    Le(f64),
    MultipleOf(f64),
    /// At least this many characters (a string) or items (a list).
    MinLength(usize),
    MaxLength(usize),
    Pattern(regex::Regex),
}

impl Check {
    /// From the plan's `(name, text, ctx_json)`.
    fn from_tuple(t: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let name: String = t.get_item(0)?.extract()?;
        let text: String = t.get_item(1)?.extract()?;
        let ctx: String = t.get_item(2)?.extract()?;
        let ctx: serde_json::Value = serde_json::from_str(&ctx)
            .map_err(|e| PyValueError::new_err(format!("{name}: {e}")))?;
        let number = || {
            ctx.as_f64()
                .ok_or_else(|| PyValueError::new_err(format!("{name} must be a number")))
        };
        let length = || {
            ctx.as_u64()
                .map(|n| n as usize)
                .ok_or_else(|| PyValueError::new_err(format!("{name} must be a length")))
        };
        let rule = match name.as_str() {
            "gt" => Rule::Gt(number()?),
            "ge" => Rule::Ge(number()?),
            "lt" => Rule::Lt(number()?),
            "le" => Rule::Le(number()?),
            "multiple_of" => Rule::MultipleOf(number()?),
            "min_length" => Rule::MinLength(length()?),
            "max_length" => Rule::MaxLength(length()?),
            "pattern" => Rule::Pattern(regex::Regex::new(&text).map_err(|e| {
                PyValueError::new_err(format!(
                    "pattern '{text}' is not a valid regular expression: {e}"
                ))
            })?),
            other => return Err(PyValueError::new_err(format!("unknown constraint {other}"))),
        };
        Ok(Check {
            rule,
            text: text.into(),
            ctx,
        })
    }
}

/// The order pydantic checks constraints in, which decides the error reported when several fail.
fn rank(rule: &Rule) -> u8 {
    match rule {
        Rule::MinLength(_) => 0,
        Rule::MaxLength(_) => 1,
        Rule::Pattern(_) => 2,
        Rule::MultipleOf(_) => 3,
        Rule::Le(_) => 4,
        Rule::Lt(_) => 5,
        Rule::Ge(_) => 6,
        Rule::Gt(_) => 7,
    }
}

/// How the handler runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallKind {
    /// `def`, called on the worker.
    Sync,
    /// `async def`, started on the worker and continued by the event loop if it suspends.
    Async,
    /// `def` marked `blocking=True`, run on the blocking pool.
    Blocking,
}

/// A route as the Python side planned it.
pub(crate) struct Route {
    pub handler: Py<PyAny>,
    pub params: Vec<Param>,
    pub kind: CallKind,
    pub status: StatusCode,
    /// The `{name}`s of the path template, in order.
    pub path_names: Vec<Box<str>>,
    /// Whether any parameter is keyword-only (then a kwargs dict is built).
    pub has_keywords: bool,
    /// The Python route (`path`, `name`, `endpoint`, ...), for `scope["route"]`; `None` for
    /// the 404 and 405 a request no route takes runs.
    pub listed: Option<Py<PyAny>>,
    /// Called in the handler's place when some values did not validate, as
    /// `when_invalid(body_422, invalid_names, **values)`: it runs the dependencies whose own
    /// values did (as FastAPI does, so one may answer first), then raises `ValidationFailed`.
    /// The handler's `__vireo_when_invalid__` attribute, if it has one.
    pub when_invalid: Option<Py<PyAny>>,
    /// The most bytes of body the route takes (413 beyond), when it sets its own limit.
    pub max_body_size: Option<u64>,
    /// Whether a body with no `content-type` is not read as JSON, when the route (or its
    /// router) says; else the app's setting.
    pub strict_content_type: Option<bool>,
}

/// The names of a matchit template's parameters, in order.
pub(crate) fn template_names(template: &str) -> Vec<Box<str>> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if rest[open + 1..].starts_with('{') {
            rest = &rest[open + 2..];
            continue;
        }
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let name = rest[open + 1..open + close].trim_start_matches('*');
        names.push(name.into());
        rest = &rest[open + close + 1..];
    }
    names
}

fn kind_of(name: &str) -> PyResult<Kind> {
    Ok(match name {
        "str" => Kind::Str,
        "int" => Kind::Int,
        "float" => Kind::Float,
        "bool" => Kind::Bool,
        other => return Err(PyValueError::new_err(format!("unknown kind {other}"))),
    })
}

/// `copy.deepcopy(value)`: the value itself for one that cannot change (a number, a text,
/// an enum member, a tuple of those).
pub(crate) fn deep_copy<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static DEEPCOPY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = value.py();
    let deepcopy = DEEPCOPY.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("copy")?.getattr("deepcopy")?.unbind())
    })?;
    deepcopy.bind(py).call1((value,))
}

impl Param {
    /// From the Python plan's tuple: `(name, source, key, kind, is_list, required, default,
    /// validator, keyword_only, constraints)`, `key` being a name or a list of names.
    pub(crate) fn from_tuple(t: &Bound<'_, PyTuple>, path_names: &[Box<str>]) -> PyResult<Self> {
        let name: Bound<'_, PyString> = t.get_item(0)?.cast_into()?;
        let source: String = t.get_item(1)?.extract()?;
        // A name, or the names to try in order (the first being the one errors name).
        let keys: Vec<String> = match t.get_item(2)?.extract::<String>() {
            Ok(key) => vec![key],
            Err(_) => t.get_item(2)?.extract()?,
        };
        let Some((key, alternates)) = keys.split_first() else {
            return Err(PyValueError::new_err(
                "a parameter needs a name to be read by",
            ));
        };
        let key = key.clone();
        let kind: String = t.get_item(3)?.extract()?;
        let list: bool = t.get_item(4)?.extract()?;
        let required: bool = t.get_item(5)?.extract()?;
        let default = t.get_item(6)?;
        let validator = t.get_item(7)?;
        let keyword_only: bool = t.get_item(8)?.extract()?;
        let mut checks = Vec::new();
        let constraints = t.get_item(9)?;
        if !constraints.is_none() {
            for check in constraints.try_iter()? {
                checks.push(Check::from_tuple(check?.cast()?)?);
            }
        }
        checks.sort_by_key(|check| rank(&check.rule));
        let convert = matches!(source.as_str(), "path" | "query" | "header" | "cookie")
            .then(|| validator.clone())
            .filter(|v| !v.is_none())
            .map(Bound::unbind);
        let source = match source.as_str() {
            "path" => {
                let index = path_names
                    .iter()
                    .position(|n| **n == *key)
                    .ok_or_else(|| PyValueError::new_err(format!("{key} is not in the path")))?;
                Source::Path(index)
            }
            "query" => Source::Query,
            "header" => Source::Header,
            "cookie" => Source::Cookie,
            "body" => Source::Body(validator.unbind()),
            "form" => Source::Form(validator.unbind()),
            "request" => Source::Request,
            other => return Err(PyValueError::new_err(format!("unknown source {other}"))),
        };
        let copies_default = !required && !deep_copy(&default)?.is(&default);
        Ok(Param {
            key: key.into(),
            alternates: alternates.iter().map(|k| k.as_str().into()).collect(),
            source,
            kind: kind_of(&kind)?,
            list,
            default: (!required).then(|| default.unbind()),
            copies_default,
            keyword: keyword_only.then(|| name.unbind()),
            checks,
            convert,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::template_names;

    #[test]
    fn names_come_in_template_order() {
        let names = template_names("/a/{x}/b/{y}/{{literal}}/{*rest}");
        let names: Vec<&str> = names.iter().map(|n| &**n).collect();
        assert_eq!(names, ["x", "y", "rest"]);
    }
}
