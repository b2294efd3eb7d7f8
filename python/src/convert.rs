//! Path, query and header values converted to the planned types, without the GIL; what fails
//! becomes an error in FastAPI's shape.

use crate::plan::{Check, Kind, Param, Rule, Source};
use crate::urlencoded::query_pairs;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::cmp::Ordering;
use vireo_http::RequestHead;

/// A converted value, turned into a Python object once the GIL is held.
pub(crate) enum Arg {
    Str(String),
    Int(i64),
    /// An integer beyond 64 bits, in decimal; Python's `int` takes it.
    BigInt(String),
    Float(f64),
    Bool(bool),
    List(Vec<Arg>),
    /// The parameter's default.
    Default,
    /// Filled from the body (as JSON or a form), under the GIL; the request's `content-type`.
    Body(Option<String>),
    /// The `Request`.
    Request,
}

/// The most digits an integer may have: Python's own default bound on converting text to `int`
/// (`sys.get_int_max_str_digits`), which pydantic keeps too.
const MAX_INT_DIGITS: usize = 4300;

const INT_PARSING: (&str, &str) = (
    "int_parsing",
    "Input should be a valid integer, unable to parse string as an integer",
);

/// `s` without the underscores Python and pydantic allow between two digits (`1_000`); `None`
/// if one stands anywhere else.
fn without_underscores(s: &str) -> Option<Cow<'_, str>> {
    if !s.contains('_') {
        return Some(Cow::Borrowed(s));
    }
    let b = s.as_bytes();
    let between_digits = |i: usize| {
        i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit)
    };
    let placed = (0..b.len()).filter(|&i| b[i] == b'_').all(between_digits);
    placed.then(|| Cow::Owned(s.replace('_', "")))
}

/// An integer as pydantic reads one from text: spaces around it, `_` between digits, and a
/// fraction of zeros (`3.0`) allowed.
fn parse_int(s: &str) -> Result<Arg, (&'static str, &'static str)> {
    let t = s.trim();
    if let Ok(n) = t.parse::<i64>() {
        return Ok(Arg::Int(n));
    }
    let t = without_underscores(t).ok_or(INT_PARSING)?;
    let t = match t.split_once('.') {
        Some((whole, zeros)) if !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') => whole,
        Some(_) => return Err(INT_PARSING),
        None => &t,
    };
    if let Ok(n) = t.parse::<i64>() {
        return Ok(Arg::Int(n));
    }
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(INT_PARSING);
    }
    if digits.len() > MAX_INT_DIGITS {
        return Err((
            "int_parsing_size",
            "Unable to parse input string as an integer, exceeded maximum size",
        ));
    }
    Ok(Arg::BigInt(t.to_owned()))
}

/// A boolean as pydantic reads one from text: one of its words, in any case, nothing around.
fn parse_bool(s: &str) -> Option<bool> {
    const TRUE: [&str; 6] = ["1", "on", "t", "true", "y", "yes"];
    const FALSE: [&str; 6] = ["0", "off", "f", "false", "n", "no"];
    let t = s;
    if TRUE.iter().any(|w| t.eq_ignore_ascii_case(w)) {
        Some(true)
    } else if FALSE.iter().any(|w| t.eq_ignore_ascii_case(w)) {
        Some(false)
    } else {
        None
    }
}

/// Convert one text value; the error's `type` and `msg` are pydantic's.
fn scalar(kind: Kind, s: &str) -> Result<Arg, (&'static str, &'static str)> {
    match kind {
        Kind::Str => Ok(Arg::Str(s.to_owned())),
        Kind::Int => parse_int(s),
        Kind::Float => without_underscores(s.trim())
            .and_then(|t| t.parse::<f64>().ok())
            .map(Arg::Float)
            .ok_or((
                "float_parsing",
                "Input should be a valid number, unable to parse string as a number",
            )),
        Kind::Bool => parse_bool(s).map(Arg::Bool).ok_or((
            "bool_parsing",
            "Input should be a valid boolean, unable to interpret input",
        )),
    }
}

fn location(param: &Param) -> &'static str {
    match param.source {
        Source::Path(_) => "path",
        Source::Query => "query",
        Source::Header => "header",
        Source::Cookie => "cookie",
        Source::Body(_) | Source::Form(_) => "body",
        Source::Request => "request",
    }
}

/// The arguments of a call, in the plan's order, and every error found.
pub(crate) struct Converted {
    pub args: Vec<Arg>,
    pub errors: Vec<Value>,
    /// The indices of the parameters behind `errors`.
    pub failed: Vec<usize>,
}

/// What parameters are read from: a request head, or a WebSocket handshake's scope.
pub(crate) trait Fields {
    /// The first value of the named header field, compared without ASCII case.
    fn header(&self, name: &str) -> Option<&[u8]>;
    /// Every value of the named header field, in order, compared without ASCII case.
    fn header_values(&self, name: &str) -> Vec<&[u8]>;
    /// The query string after `?`, if there is one.
    fn query(&self) -> Option<&str>;
}

impl Fields for RequestHead {
    fn header(&self, name: &str) -> Option<&[u8]> {
        RequestHead::header(self, name)
    }

    fn header_values(&self, name: &str) -> Vec<&[u8]> {
        self.headers()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
            .collect()
    }

    fn query(&self) -> Option<&str> {
        RequestHead::query(self)
    }
}

/// Convert every non-body parameter of `params` from the request.
pub(crate) fn convert(params: &[Param], head: &impl Fields, path_values: &[String]) -> Converted {
    let mut out = Converted {
        args: Vec::with_capacity(params.len()),
        errors: Vec::new(),
        failed: Vec::new(),
    };
    let mut query: Option<Vec<(String, String)>> = None;
    for (index, param) in params.iter().enumerate() {
        let loc = location(param);
        let errors_before = out.errors.len();
        let arg = match &param.source {
            Source::Body(_) | Source::Form(_) => Arg::Body(
                head.header("content-type")
                    .map(|v| String::from_utf8_lossy(v).into_owned()),
            ),
            Source::Request => Arg::Request,
            Source::Path(i) => one(
                param,
                &param.key,
                loc,
                Some(&path_values[*i]),
                &mut out.errors,
            ),
            Source::Header if param.list => {
                let key = chosen(param, |key| head.header(key).is_some());
                let values: Vec<_> = head
                    .header_values(key)
                    .into_iter()
                    .map(String::from_utf8_lossy)
                    .collect();
                many(
                    param,
                    key,
                    loc,
                    values.iter().map(|v| &**v),
                    &mut out.errors,
                )
            }
            Source::Header => {
                let key = chosen(param, |key| head.header(key).is_some());
                let value = head.header(key).map(String::from_utf8_lossy);
                one(param, key, loc, value.as_deref(), &mut out.errors)
            }
            Source::Cookie => {
                let fields = head.header_values("cookie");
                let cookie =
                    |key: &str| last_cookie(fields.iter().map(|f| String::from_utf8_lossy(f)), key);
                let key = chosen(param, |key| cookie(key).is_some());
                one(param, key, loc, cookie(key).as_deref(), &mut out.errors)
            }
            Source::Query => {
                let pairs = query.get_or_insert_with(|| {
                    head.query()
                        .map(|q| {
                            query_pairs(q)
                                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                                .collect()
                        })
                        .unwrap_or_default()
                });
                let key = chosen(param, |key| pairs.iter().any(|(k, _)| k == key));
                let mut values = pairs.iter().filter(|(k, _)| **k == *key);
                if param.list {
                    many(
                        param,
                        key,
                        loc,
                        values.map(|(_, v)| v.as_str()),
                        &mut out.errors,
                    )
                } else {
                    // The last occurrence wins, as in Starlette's query_params.
                    let value = values.next_back().map(|(_, v)| v.as_str());
                    one(param, key, loc, value, &mut out.errors)
                }
            }
        };
        if out.errors.len() > errors_before {
            out.failed.push(index);
        }
        out.args.push(arg);
    }
    out
}

/// The pairs of a `Cookie` field: `name=value; name2=value2`, values unquoted.
pub(crate) fn cookies(field: &str) -> impl Iterator<Item = (&str, &str)> {
    field.split(';').filter_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        Some((name.trim(), value))
    })
}

/// The value of the cookie `name` in `fields` (every `Cookie` field, as HTTP/2 may split
/// them): its last occurrence, as `request.cookies` takes it here and in Starlette.
fn last_cookie<'a>(
    fields: impl Iterator<Item = std::borrow::Cow<'a, str>>,
    name: &str,
) -> Option<String> {
    let mut found = None;
    for field in fields {
        if let Some((_, value)) = cookies(&field).filter(|(n, _)| *n == name).last() {
            found = Some(value.to_owned());
        }
    }
    found
}

/// The name `param` is read by in this request: the first of its names the request has
/// (`present` tells), else its first, which a missing value's error names.
fn chosen(param: &Param, present: impl Fn(&str) -> bool) -> &str {
    if param.alternates.is_empty() {
        return &param.key;
    }
    std::iter::once(&param.key)
        .chain(param.alternates.iter())
        .find(|key| present(key))
        .unwrap_or(&param.key)
}

fn missing(loc: &str, key: &str) -> Value {
    json!({"type": "missing", "loc": [loc, key], "msg": "Field required", "input": null})
}

fn one(param: &Param, key: &str, loc: &str, value: Option<&str>, errors: &mut Vec<Value>) -> Arg {
    let Some(value) = value else {
        if param.default.is_none() {
            errors.push(missing(loc, key));
        }
        return Arg::Default;
    };
    let arg = scalar(param.kind, value).unwrap_or_else(|(ty, msg)| {
        errors.push(json!({"type": ty, "loc": [loc, key], "msg": msg, "input": value}));
        Arg::Default
    });
    if matches!(arg, Arg::Default) {
        return arg;
    }
    match param.checks.iter().find_map(|check| broken(check, &arg)) {
        Some((ty, msg, check)) => {
            let ctx = ctx_of(check);
            errors.push(
                json!({"type": ty, "loc": [loc, key], "msg": msg, "input": value, "ctx": ctx}),
            );
            Arg::Default
        }
        None => arg,
    }
}

/// The constraint `arg` breaks, as pydantic reports it: `(type, msg, check)`.
fn broken<'c>(check: &'c Check, arg: &Arg) -> Option<(&'static str, String, &'c Check)> {
    let text = &check.text;
    let fails = |ty: &'static str, msg: String| Some((ty, msg, check));
    match (&check.rule, arg) {
        (Rule::MinLength(n), Arg::Str(s)) if s.chars().count() < *n => fails(
            "string_too_short",
            format!("String should have at least {n} character{}", plural(*n)),
        ),
        (Rule::MaxLength(n), Arg::Str(s)) if s.chars().count() > *n => fails(
            "string_too_long",
            format!("String should have at most {n} character{}", plural(*n)),
        ),
        (Rule::Pattern(pattern), Arg::Str(s)) if !pattern.is_match(s) => fails(
            "string_pattern_mismatch",
            format!("String should match pattern '{text}'"),
        ),
        (Rule::MultipleOf(m), _) if !multiple_of(arg, *m) => fails(
            "multiple_of",
            format!("Input should be a multiple of {text}"),
        ),
        (Rule::Le(limit), _)
            if !matches!(compare(arg, *limit), Some(Ordering::Less | Ordering::Equal)) =>
        {
            fails(
                "less_than_equal",
                format!("Input should be less than or equal to {text}"),
            )
        }
        (Rule::Lt(limit), _) if compare(arg, *limit) != Some(Ordering::Less) => {
            fails("less_than", format!("Input should be less than {text}"))
        }
        (Rule::Ge(limit), _)
            if !matches!(
                compare(arg, *limit),
                Some(Ordering::Greater | Ordering::Equal)
            ) =>
        {
            fails(
                "greater_than_equal",
                format!("Input should be greater than or equal to {text}"),
            )
        }
        (Rule::Gt(limit), _) if compare(arg, *limit) != Some(Ordering::Greater) => fails(
            "greater_than",
            format!("Input should be greater than {text}"),
        ),
        _ => None,
    }
}

fn ctx_of(check: &Check) -> Value {
    let name = match check.rule {
        Rule::Gt(_) => "gt",
        Rule::Ge(_) => "ge",
        Rule::Lt(_) => "lt",
        Rule::Le(_) => "le",
        Rule::MultipleOf(_) => "multiple_of",
        Rule::MinLength(_) => "min_length",
        Rule::MaxLength(_) => "max_length",
        Rule::Pattern(_) => "pattern",
    };
    json!({ name: check.ctx })
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A converted number as a float; `None` for anything else.
fn as_f64(arg: &Arg) -> Option<f64> {
    match arg {
        Arg::Int(n) => Some(*n as f64),
        Arg::BigInt(digits) => digits.trim().parse().ok(),
        Arg::Float(x) => Some(*x),
        _ => None,
    }
}

/// How a converted number compares with a limit; `None` for NaN, which meets no bound.
fn compare(arg: &Arg, limit: f64) -> Option<Ordering> {
    match arg {
        // Exactly, when the limit is a whole number within range.
        Arg::Int(n) if limit.fract() == 0.0 && limit.abs() < 9.0e18 => Some(n.cmp(&(limit as i64))),
        other => as_f64(other)?.partial_cmp(&limit),
    }
}

/// Whether a converted number is a multiple of `m` (with pydantic's tolerance for floats).
fn multiple_of(arg: &Arg, m: f64) -> bool {
    match arg {
        Arg::Int(n) if m.fract() == 0.0 && m < 9.0e18 => n % (m as i64) == 0,
        other => as_f64(other).is_some_and(|x| {
            let rem = x % m;
            let tolerance = x.abs() / 1e9;
            rem.abs() <= tolerance || (rem - m).abs() <= tolerance
        }),
    }
}

fn many<'v>(
    param: &Param,
    key: &str,
    loc: &str,
    values: impl Iterator<Item = &'v str>,
    errors: &mut Vec<Value>,
) -> Arg {
    let mut items = Vec::new();
    let mut raw = Vec::new();
    for (i, value) in values.enumerate() {
        if !param.checks.is_empty() {
            raw.push(value);
        }
        match scalar(param.kind, value) {
            Ok(arg) => items.push(arg),
            Err((ty, msg)) => {
                errors.push(json!({"type": ty, "loc": [loc, key, i], "msg": msg, "input": value}))
            }
        }
    }
    if items.is_empty() && param.default.is_some() {
        return Arg::Default;
    }
    if items.is_empty() {
        errors.push(missing(loc, key));
        return Arg::List(items);
    }
    // Its length is checked once every item converted, as pydantic reports it.
    let actual = items.len();
    if actual < raw.len() {
        return Arg::List(items);
    }
    for check in &param.checks {
        let (ty, name, limit, word) = match check.rule {
            Rule::MinLength(n) if actual < n => ("too_short", "min_length", n, "least"),
            Rule::MaxLength(n) if actual > n => ("too_long", "max_length", n, "most"),
            _ => continue,
        };
        let input: Vec<&str> = raw.iter().map(|v| &**v).collect();
        let msg = format!(
            "List should have at {word} {limit} item{} after validation, not {actual}",
            plural(limit)
        );
        errors.push(json!({
            "type": ty, "loc": [loc, key], "msg": msg, "input": input,
            "ctx": {"field_type": "List", name: limit, "actual_length": actual},
        }));
        return Arg::Default;
    }
    Arg::List(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_convert_as_pydantic_does() {
        assert!(matches!(scalar(Kind::Int, " 42 "), Ok(Arg::Int(42))));
        assert!(matches!(
            scalar(Kind::Int, "123456789012345678901234567890"),
            Ok(Arg::BigInt(_))
        ));
        assert!(scalar(Kind::Int, "4x").is_err());
        assert!(scalar(Kind::Int, "").is_err());
        assert!(matches!(scalar(Kind::Float, "1.5"), Ok(Arg::Float(f)) if f == 1.5));
        assert!(matches!(scalar(Kind::Bool, "YES"), Ok(Arg::Bool(true))));
        assert!(matches!(scalar(Kind::Bool, "off"), Ok(Arg::Bool(false))));
        assert!(scalar(Kind::Bool, "maybe").is_err());
    }

    fn cookie(fields: &[&str], name: &str) -> Option<String> {
        last_cookie(fields.iter().map(|f| std::borrow::Cow::Borrowed(*f)), name)
    }

    #[test]
    fn cookies_are_split_and_unquoted() {
        let field = "a=1; session=\"abc\";b = 2 ;broken";
        assert_eq!(cookie(&[field], "session").as_deref(), Some("abc"));
        assert_eq!(cookie(&[field], "b").as_deref(), Some("2"));
        assert_eq!(cookie(&[field], "broken"), None);
    }

    #[test]
    fn a_repeated_cookie_is_its_last_occurrence_across_fields() {
        assert_eq!(cookie(&["n=1; n=2"], "n").as_deref(), Some("2"));
        assert_eq!(cookie(&["n=1", "m=0", "n=3"], "n").as_deref(), Some("3"));
        assert_eq!(cookie(&["m=0", "n=4"], "n").as_deref(), Some("4"));
        assert_eq!(cookie(&["m=0"], "n"), None);
    }
}
