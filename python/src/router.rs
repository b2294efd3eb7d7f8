//! Method and path to route, with matchit (FastAPI's `{param}` syntax is matchit's).

use crate::plan::Route;
use crate::urlencoded::decode;
use http::{HeaderValue, Method};
use std::sync::Arc;

/// The routes registered for one path template.
struct Endpoint {
    by_method: Vec<(Method, Arc<Route>)>,
    /// The `Allow` field for a 405.
    allow: HeaderValue,
}

/// What a request's method and path lead to.
pub(crate) enum Lookup<'a> {
    /// A route, with its path parameters decoded, in template order.
    Route(&'a Arc<Route>, Vec<String>),
    NotFound,
    MethodNotAllowed(&'a HeaderValue),
}

#[derive(Default)]
pub(crate) struct Router {
    tree: matchit::Router<usize>,
    endpoints: Vec<Endpoint>,
    templates: Vec<String>,
}

/// FastAPI's `{name:path}` is matchit's catch-all `{*name}`.
fn to_matchit(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let inner = &rest[open + 1..open + close];
        match inner.strip_suffix(":path") {
            Some(name) => {
                out.push_str("{*");
                out.push_str(name);
                out.push('}');
            }
            None => out.push_str(&rest[open..=open + close]),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

impl Router {
    /// The template as matchit reads it, for the plan's parameter names.
    pub(crate) fn normalise(template: &str) -> String {
        to_matchit(template)
    }

    pub(crate) fn insert(
        &mut self,
        methods: &[Method],
        template: &str,
        route: Arc<Route>,
    ) -> Result<(), String> {
        let template = to_matchit(template);
        let index = match self.templates.iter().position(|t| *t == template) {
            Some(index) => index,
            None => {
                self.tree
                    .insert(template.clone(), self.endpoints.len())
                    .map_err(|e| format!("route {template}: {e}"))?;
                self.templates.push(template.clone());
                self.endpoints.push(Endpoint {
                    by_method: Vec::new(),
                    allow: HeaderValue::from_static(""),
                });
                self.endpoints.len() - 1
            }
        };
        let endpoint = &mut self.endpoints[index];
        for method in methods {
            if endpoint.by_method.iter().any(|(m, _)| m == method) {
                return Err(format!("{method} {template} is registered twice"));
            }
            endpoint.by_method.push((method.clone(), route.clone()));
        }
        let allow: Vec<&str> = endpoint.by_method.iter().map(|(m, _)| m.as_str()).collect();
        endpoint.allow = HeaderValue::from_str(&allow.join(", ")).map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The route that answers `method` at `path` (as `find` gives it), without decoding its
    /// path values.
    pub(crate) fn route_for(&self, method: &Method, path: &str) -> Option<&Arc<Route>> {
        let matched = self.tree.at(path).ok()?;
        by_method(&self.endpoints[*matched.value], method)
    }

    /// Whether a route answers `method` at `path` (as `find` would give a `Route`).
    pub(crate) fn answers(&self, method: &Method, path: &str) -> bool {
        self.route_for(method, path).is_some()
    }

    pub(crate) fn find(&self, method: &Method, path: &str) -> Lookup<'_> {
        let Ok(matched) = self.tree.at(path) else {
            return Lookup::NotFound;
        };
        let endpoint = &self.endpoints[*matched.value];
        match by_method(endpoint, method) {
            Some(route) => {
                let values = matched
                    .params
                    .iter()
                    .map(|(_, v)| decode(v, false).into_owned())
                    .collect();
                Lookup::Route(route, values)
            }
            None => Lookup::MethodNotAllowed(&endpoint.allow),
        }
    }
}

/// The endpoint's route for `method`; HEAD is GET without the body, which the engine leaves
/// out.
fn by_method<'a>(endpoint: &'a Endpoint, method: &Method) -> Option<&'a Arc<Route>> {
    let of = |wanted: &Method| {
        endpoint
            .by_method
            .iter()
            .find(|(m, _)| m == wanted)
            .map(|(_, route)| route)
    };
    of(method).or_else(|| (method == Method::HEAD).then(|| of(&Method::GET)).flatten())
}

#[cfg(test)]
mod tests {
    use super::to_matchit;

    #[test]
    fn path_converters_become_catch_alls() {
        assert_eq!(to_matchit("/files/{p:path}"), "/files/{*p}");
        assert_eq!(to_matchit("/users/{id}"), "/users/{id}");
    }
}
