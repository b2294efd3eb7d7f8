//! The route tree: path patterns matched against a request path in one pass over its segments.
//!
//! Each node has static children, at most one `:param` child and at most one `*wildcard`.
//! Static segments win over a parameter, which wins over a wildcard; when a static branch
//! dead-ends, matching backtracks to the parameter. Nothing is allocated while matching:
//! parameters are recorded as byte ranges of the path.

use std::collections::BTreeMap;

/// Most parameters one route may have. Captures live in a fixed array so matching never
/// allocates; eight is more than any sensible URL carries.
pub const MAX_PARAMS: usize = 8;

/// The parameters captured by a match: names and byte ranges of the matched path.
#[derive(Debug, Clone, Copy, Default)]
pub struct Captures {
    len: usize,
    items: [(&'static str, u32, u32); MAX_PARAMS],
}

impl Captures {
    /// Forget every capture.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    fn push(&mut self, name: &'static str, start: usize, end: usize) {
        self.items[self.len] = (name, start as u32, end as u32);
        self.len += 1;
    }

    /// The captures as (name, start, end), in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, usize, usize)> + '_ {
        self.items[..self.len]
            .iter()
            .map(|&(name, start, end)| (name, start as usize, end as usize))
    }
}

/// One segment of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Static(String),
    Param(&'static str),
    Wildcard(&'static str),
}

/// Why a pattern could not be added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternError {
    /// Two patterns name the parameter at the same place differently (`:id` and `:name`).
    ParamNameConflict(String, String),
    /// The pattern is malformed; the text says how.
    Invalid(&'static str),
}

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PatternError::ParamNameConflict(a, b) => {
                write!(
                    f,
                    "parameter `{b}` conflicts with `{a}` at the same position"
                )
            }
            PatternError::Invalid(why) => f.write_str(why),
        }
    }
}

#[derive(Debug)]
struct Node<T> {
    statics: BTreeMap<String, Node<T>>,
    param: Option<(&'static str, Box<Node<T>>)>,
    wildcard: Option<(&'static str, T)>,
    value: Option<T>,
}

impl<T> Default for Node<T> {
    fn default() -> Self {
        Node {
            statics: BTreeMap::new(),
            param: None,
            wildcard: None,
            value: None,
        }
    }
}

/// A tree of path patterns such as `/users/:id` and `/files/*path`, each with a value.
#[derive(Debug)]
pub struct Tree<T> {
    root: Node<T>,
}

impl<T> Default for Tree<T> {
    fn default() -> Self {
        Tree {
            root: Node::default(),
        }
    }
}

/// Parameter names live as long as the program: routes are registered once, and `'static`
/// names let a match record them without allocating or counting references.
fn intern(name: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

fn parse_pattern(pattern: &str) -> Result<Vec<Segment>, PatternError> {
    if !pattern.starts_with('/') {
        return Err(PatternError::Invalid("a path must start with `/`"));
    }
    let mut segments = Vec::new();
    let mut params = 0;
    let mut parts = pattern[1..].split('/').peekable();
    while let Some(part) = parts.next() {
        if part.is_empty() && parts.peek().is_none() && !segments.is_empty() {
            return Err(PatternError::Invalid("a path must not end with `/`"));
        }
        if let Some(name) = part.strip_prefix(':') {
            if name.is_empty() {
                return Err(PatternError::Invalid("a `:` parameter needs a name"));
            }
            params += 1;
            segments.push(Segment::Param(intern(name)));
        } else if let Some(name) = part.strip_prefix('*') {
            if parts.peek().is_some() {
                return Err(PatternError::Invalid(
                    "a `*` wildcard must be the last segment",
                ));
            }
            params += 1;
            segments.push(Segment::Wildcard(intern(if name.is_empty() {
                "*"
            } else {
                name
            })));
        } else if part.contains([':', '*']) {
            return Err(PatternError::Invalid(
                "`:` and `*` may only start a segment",
            ));
        } else if !part.is_empty() || segments.is_empty() {
            segments.push(Segment::Static(part.to_owned()));
        }
        if params > MAX_PARAMS {
            return Err(PatternError::Invalid(
                "a path may have at most 8 parameters",
            ));
        }
    }
    Ok(segments)
}

impl<T> Tree<T> {
    /// The value for exactly this pattern, created with `make` if the pattern is new.
    pub fn entry(
        &mut self,
        pattern: &str,
        make: impl FnOnce() -> T,
    ) -> Result<&mut T, PatternError> {
        let segments = parse_pattern(pattern)?;
        let mut node = &mut self.root;
        for segment in segments {
            match segment {
                Segment::Static(s) if s.is_empty() => {}
                Segment::Static(s) => node = node.statics.entry(s).or_default(),
                Segment::Param(name) => {
                    let (existing, child) =
                        node.param.get_or_insert_with(|| (name, Box::default()));
                    if *existing != name {
                        return Err(PatternError::ParamNameConflict(
                            existing.to_string(),
                            name.to_string(),
                        ));
                    }
                    node = child;
                }
                Segment::Wildcard(name) => {
                    let (existing, value) = node.wildcard.get_or_insert_with(|| (name, make()));
                    if *existing != name {
                        return Err(PatternError::ParamNameConflict(
                            existing.to_string(),
                            name.to_string(),
                        ));
                    }
                    return Ok(value);
                }
            }
        }
        Ok(node.value.get_or_insert_with(make))
    }

    /// Match a request path (without its query). Parameters are byte ranges of `path`.
    /// The value of the route `path` matches, with its parameters written into `captures`
    /// (which is cleared first: it is reused from request to request, never copied).
    pub fn find(&self, path: &str, captures: &mut Captures) -> Option<&T> {
        captures.clear();
        let rest = path.strip_prefix('/')?;
        find_in(&self.root, path, path.len() - rest.len(), captures)
    }
}

fn find_in<'t, T>(
    node: &'t Node<T>,
    path: &str,
    at: usize,
    captures: &mut Captures,
) -> Option<&'t T> {
    if at >= path.len() {
        // A trailing slash matches the same route as without it.
        return node
            .value
            .as_ref()
            .or_else(|| wildcard(node, path, path.len(), captures));
    }
    let end = memchr_slash(path, at);
    let segment = &path[at..end];
    let next = end + 1;
    if let Some(child) = node.statics.get(segment) {
        if let Some(found) = find_in(child, path, next, captures) {
            return Some(found);
        }
    }
    if let Some((name, child)) = &node.param {
        if !segment.is_empty() {
            let saved = captures.len;
            captures.push(name, at, end);
            if let Some(found) = find_in(child, path, next, captures) {
                return Some(found);
            }
            captures.len = saved;
        }
    }
    wildcard(node, path, at, captures)
}

fn wildcard<'t, T>(
    node: &'t Node<T>,
    path: &str,
    at: usize,
    captures: &mut Captures,
) -> Option<&'t T> {
    let (name, value) = node.wildcard.as_ref()?;
    captures.push(name, at.min(path.len()), path.len());
    Some(value)
}

fn memchr_slash(path: &str, from: usize) -> usize {
    path[from..].find('/').map_or(path.len(), |i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(patterns: &[&str]) -> Tree<String> {
        let mut tree = Tree::default();
        for p in patterns {
            *tree.entry(p, String::new).unwrap() = p.to_string();
        }
        tree
    }

    fn find(tree: &Tree<String>, path: &str) -> Option<(String, Vec<(String, String)>)> {
        let mut caps = Captures::default();
        tree.find(path, &mut caps).map(|v| {
            (
                v.clone(),
                caps.iter()
                    .map(|(n, s, e)| (n.to_string(), path[s..e].to_string()))
                    .collect(),
            )
        })
    }

    #[test]
    fn statics_params_and_wildcards() {
        let t = tree(&[
            "/",
            "/users",
            "/users/:id",
            "/users/me",
            "/users/:id/posts/:post",
            "/files/*path",
        ]);
        assert_eq!(find(&t, "/").unwrap().0, "/");
        assert_eq!(find(&t, "/users").unwrap().0, "/users");
        assert_eq!(find(&t, "/users/").unwrap().0, "/users");
        assert_eq!(find(&t, "/users/me").unwrap().0, "/users/me");
        assert_eq!(
            find(&t, "/users/42").unwrap(),
            ("/users/:id".into(), vec![("id".into(), "42".into())])
        );
        assert_eq!(
            find(&t, "/users/7/posts/9").unwrap().1,
            vec![("id".into(), "7".into()), ("post".into(), "9".into())]
        );
        assert_eq!(
            find(&t, "/files/a/b.txt").unwrap(),
            (
                "/files/*path".into(),
                vec![("path".into(), "a/b.txt".into())]
            )
        );
        assert_eq!(
            find(&t, "/files/").unwrap().1,
            vec![("path".into(), "".into())]
        );
        assert!(find(&t, "/nope").is_none());
        assert!(find(&t, "/users/1/posts").is_none());
        assert!(
            find(&t, "/users//posts/1").is_none(),
            "an empty segment is not a parameter"
        );
    }

    #[test]
    fn static_dead_end_backtracks_to_the_parameter() {
        let t = tree(&["/a/b/c", "/a/:x/d"]);
        assert_eq!(
            find(&t, "/a/b/d").unwrap(),
            ("/a/:x/d".into(), vec![("x".into(), "b".into())])
        );
        assert_eq!(find(&t, "/a/b/c").unwrap().1, vec![]);
    }

    #[test]
    fn conflicts_and_malformed_patterns_are_refused() {
        let mut t: Tree<()> = Tree::default();
        t.entry("/users/:id", || ()).unwrap();
        assert_eq!(
            t.entry("/users/:name", || ()).unwrap_err(),
            PatternError::ParamNameConflict("id".into(), "name".into())
        );
        assert!(matches!(
            t.entry("users", || ()),
            Err(PatternError::Invalid(_))
        ));
        assert!(matches!(
            t.entry("/a/*x/b", || ()),
            Err(PatternError::Invalid(_))
        ));
        assert!(matches!(
            t.entry("/a/:", || ()),
            Err(PatternError::Invalid(_))
        ));
        assert!(matches!(
            t.entry("/a/b:c", || ()),
            Err(PatternError::Invalid(_))
        ));
        assert!(matches!(
            t.entry("/a/", || ()),
            Err(PatternError::Invalid(_))
        ));
    }
}
