//! Calling a handler: converted values become Python objects, the body goes through its
//! validator, and the handler is called once with positional arguments (keyword-only
//! parameters by name).

use crate::app::AppInner;
use crate::convert::{Arg, Converted};
use crate::errors::{error_items, validation_body, CallError};
use crate::json;
use crate::plan::{Param, Route, Source};
use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Makes the `Request` object, for a handler that takes one.
pub(crate) type MakeRequest<'a, 'py> =
    &'a mut dyn FnMut(Python<'py>) -> PyResult<Bound<'py, PyAny>>;

pub(crate) fn to_py<'py>(py: Python<'py>, arg: Arg, param: &Param) -> PyResult<Bound<'py, PyAny>> {
    Ok(match arg {
        Arg::Str(s) => PyString::new(py, &s).into_any(),
        Arg::Int(n) => n.into_pyobject(py)?.into_any(),
        Arg::BigInt(s) => py.get_type::<PyInt>().call1((s,))?,
        Arg::Float(f) => PyFloat::new(py, f).into_any(),
        Arg::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Arg::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item, param)?)?;
            }
            list.into_any()
        }
        Arg::Default => match &param.default {
            Some(default) if param.copies_default => crate::plan::deep_copy(default.bind(py))?,
            Some(default) => default.bind(py).clone(),
            None => py.None().into_bound(py),
        },
        // Filled by the caller.
        Arg::Body(_) | Arg::Request => py.None().into_bound(py),
    })
}

/// A value made from its text by its parameter's converter, if it has one (see
/// [`Param::convert`]); a failure's errors join `errors`, and the value is then `None`.
pub(crate) fn through_converter<'py>(
    py: Python<'py>,
    param: &Param,
    value: Bound<'py, PyAny>,
    errors: &mut Vec<u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let Some(convert) = &param.convert else {
        return Ok(value);
    };
    let (ok, out): (bool, Bound<'py, PyAny>) = convert.bind(py).call1((value,))?.extract()?;
    if ok {
        return Ok(out);
    }
    let items = error_items(out.cast::<PyBytes>()?.as_bytes());
    if !items.is_empty() {
        if !errors.is_empty() {
            errors.push(b',');
        }
        errors.extend_from_slice(items);
    }
    Ok(py.None().into_bound(py))
}

/// Validate the body with `validator(body, how)`, `how` being whether a JSON body is JSON
/// or, for a form, the `content-type`; its `RequestValidationError` adds to `errors`.
fn body_value<'py>(
    py: Python<'py>,
    app: &AppInner,
    validator: &Py<PyAny>,
    body: &Bytes,
    how: Bound<'py, PyAny>,
    errors: &mut Vec<u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let body = PyBytes::new(py, body);
    let validated = validator.call1(py, (body, how));
    match validated {
        Ok(value) => Ok(value.into_bound(py)),
        Err(e) if e.is_instance(py, app.refs.request_validation_error.bind(py)) => {
            let list = e.value(py).call_method0("errors")?;
            let encoded = json::encode(&list, app.refs.jsonable.bind(py))?;
            let items = error_items(&encoded);
            if !items.is_empty() {
                if !errors.is_empty() {
                    errors.push(b',');
                }
                errors.extend_from_slice(items);
            }
            Ok(py.None().into_bound(py))
        }
        Err(e) => Err(e),
    }
}

/// Whether a body of this `content-type` is read as JSON, as FastAPI reads it:
/// `application/json` or `application/*+json`; with none, only when not `strict`.
fn is_json(content_type: Option<&str>, strict: bool) -> bool {
    let Some(content_type) = content_type else {
        return !strict;
    };
    let media = content_type.split(';').next().unwrap_or("").trim();
    let Some((main, sub)) = media.split_once('/') else {
        return false;
    };
    let sub = sub.to_ascii_lowercase();
    main.eq_ignore_ascii_case("application") && (sub == "json" || sub.ends_with("+json"))
}

/// Call the route's handler, in `context` if given (a `contextvars.Context` of the request's
/// own). Returns what it returned: a value, or a coroutine for `async def`.
pub(crate) fn invoke<'py>(
    py: Python<'py>,
    app: &AppInner,
    route: &Route,
    converted: Converted,
    body: &Bytes,
    make_request: MakeRequest<'_, 'py>,
    context: Option<&Bound<'py, PyAny>>,
) -> Result<Bound<'py, PyAny>, CallError> {
    let handler = route.handler.bind(py);
    if route.params.is_empty() {
        return Ok(match context {
            None => handler.call0()?,
            Some(ctx) => app.refs.context_run.bind(py).call1((ctx, handler))?,
        });
    }
    let mut body_errors = Vec::new();
    let mut positional = Vec::with_capacity(route.params.len());
    let kwargs = route.has_keywords.then(|| PyDict::new(py));
    // The keyword names of the values that did not validate, for `when_invalid`.
    let mut invalid = Vec::new();
    for (index, (arg, param)) in converted.args.into_iter().zip(&route.params).enumerate() {
        let errors_before = body_errors.len();
        let value = match (&arg, &param.source) {
            (Arg::Body(content_type), Source::Body(validator)) => {
                let strict = route.strict_content_type.unwrap_or(app.strict_content_type);
                let json = is_json(content_type.as_deref(), strict);
                let json = PyBool::new(py, json).to_owned().into_any();
                body_value(py, app, validator, body, json, &mut body_errors)?
            }
            (Arg::Body(content_type), Source::Form(validator)) => {
                let content_type = match content_type {
                    Some(content_type) => PyString::new(py, content_type).into_any(),
                    None => py.None().into_bound(py),
                };
                body_value(py, app, validator, body, content_type, &mut body_errors)?
            }
            (Arg::Request, _) => make_request(py)?,
            (Arg::Default, _) => to_py(py, arg, param)?,
            _ => {
                let value = to_py(py, arg, param)?;
                through_converter(py, param, value, &mut body_errors)?
            }
        };
        if let (Some(name), Some(_)) = (&param.keyword, &route.when_invalid) {
            if body_errors.len() > errors_before || converted.failed.contains(&index) {
                invalid.push(name.clone_ref(py));
            }
        }
        match (&param.keyword, &kwargs) {
            (Some(name), Some(kwargs)) => kwargs.set_item(name.bind(py), value)?,
            _ => positional.push(value),
        }
    }
    if !converted.errors.is_empty() || !body_errors.is_empty() {
        let body = validation_body(&converted.errors, &body_errors);
        let Some(when_invalid) = &route.when_invalid else {
            return Err(CallError::Invalid(body));
        };
        // The dependencies whose own values are valid still run, and may answer first.
        let mut all = Vec::with_capacity(positional.len() + 4);
        if let Some(ctx) = context {
            all.push(ctx.clone());
        }
        all.push(when_invalid.bind(py).clone());
        all.push(PyBytes::new(py, &body).into_any());
        all.push(PyTuple::new(py, invalid)?.into_any());
        all.extend(positional);
        let call = match context {
            Some(_) => app
                .refs
                .context_run
                .bind(py)
                .call(PyTuple::new(py, all)?, kwargs.as_ref()),
            None => {
                let function = all.remove(0);
                function.call(PyTuple::new(py, all)?, kwargs.as_ref())
            }
        };
        return Ok(call?);
    }
    let result = match context {
        None if positional.len() == 1 && kwargs.is_none() => {
            handler.call1((positional.swap_remove(0),))
        }
        None => handler.call(PyTuple::new(py, positional)?, kwargs.as_ref()),
        Some(ctx) => {
            // Context.run(ctx, handler, *args, **kwargs), still one call.
            let mut all = Vec::with_capacity(positional.len() + 2);
            all.push(ctx.clone());
            all.push(handler.clone());
            all.extend(positional);
            let run = app.refs.context_run.bind(py);
            run.call(PyTuple::new(py, all)?, kwargs.as_ref())
        }
    };
    Ok(result?)
}

#[cfg(test)]
mod tests {
    use super::is_json;

    #[test]
    fn json_is_application_json_or_a_json_suffix_and_none_only_when_not_strict() {
        for json in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/vnd.api+json",
        ] {
            assert!(is_json(Some(json), true), "{json}");
        }
        for other in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "json",
            "",
            "text/json",
        ] {
            assert!(!is_json(Some(other), false), "{other}");
        }
        assert!(!is_json(None, true));
        assert!(is_json(None, false));
    }
}
