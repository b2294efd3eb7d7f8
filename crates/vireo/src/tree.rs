//! The route tree: path patterns matched against a request path in one pass over its segments.
//!
//! Each node has static children, at most one `:param` child and at most one `*wildcard`.
//! Static segments win over a parameter, which wins over a wildcard; when a branch dead-ends,
//! matching backtracks to the next of these. Nothing is allocated while matching:
//! parameters are recorded as byte ranges of the path and indices into the tree's own table of
//! parameter names, which lives and dies with the tree.

use std::sync::Arc;

/// Most parameters one route may have. Captures live in a fixed array so matching never
/// allocates; eight is more than any sensible URL carries.
pub(crate) const MAX_PARAMS: usize = 8;

/// The parameter names of one tree, each once; patterns and captures refer to them by index.
type Names = Arc<Vec<Box<str>>>;

/// The parameters captured by a match: names and byte ranges of the matched path.
#[derive(Debug, Clone, Default)]
pub(crate) struct Captures {
    len: usize,
    /// Index into `names`, start and end in the path.
    items: [(u16, u32, u32); MAX_PARAMS],
    /// The names of the tree last matched against; kept from one request to the next, so
    /// matching takes a reference only when the tree changes.
    names: Option<Names>,
}

impl Captures {
    /// Forget every capture.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    fn push(&mut self, name: u16, start: usize, end: usize) {
        self.items[self.len] = (name, start as u32, end as u32);
        self.len += 1;
    }

    /// The captures as (name, start, end), in path order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, usize, usize)> + '_ {
        let names = self.names.as_deref().map_or(&[][..], Vec::as_slice);
        self.items[..self.len]
            .iter()
            .map(move |&(name, start, end)| {
                let name = names.get(usize::from(name)).map_or("", |n| &**n);
                (name, start as usize, end as usize)
            })
    }
}

/// One segment of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment<'p> {
    Static(&'p str),
    Param(&'p str),
    Wildcard(&'p str),
}

/// Why a pattern could not be added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatternError {
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
    /// Static children by segment, searched in a line: a node has few, and a length and a
    /// first byte rule most of them out without comparing the rest.
    statics: Vec<(Box<str>, Node<T>)>,
    /// The parameter's name (an index into the tree's names) and what follows it.
    param: Option<(u16, Box<Node<T>>)>,
    wildcard: Option<(u16, T)>,
    value: Option<T>,
}

impl<T> Node<T> {
    /// The static child for `segment`, made if there is none.
    fn static_child(&mut self, segment: &str) -> &mut Node<T> {
        let at = match self.statics.iter().position(|(s, _)| **s == *segment) {
            Some(at) => at,
            None => {
                self.statics.push((segment.into(), Node::default()));
                self.statics.len() - 1
            }
        };
        &mut self.statics[at].1
    }

    fn find_static(&self, wanted: &[u8]) -> Option<&Node<T>> {
        let first = *wanted.first()?;
        self.statics
            .iter()
            .find(|(s, _)| {
                let s = s.as_bytes();
                s.len() == wanted.len() && s[0] == first && s == wanted
            })
            .map(|(_, child)| child)
    }
}

impl<T> Default for Node<T> {
    fn default() -> Self {
        Node {
            statics: Vec::new(),
            param: None,
            wildcard: None,
            value: None,
        }
    }
}

/// A tree of path patterns such as `/users/:id` and `/files/*path`, each with a value.
#[derive(Debug)]
pub(crate) struct Tree<T> {
    root: Node<T>,
    names: Names,
}

impl<T> Default for Tree<T> {
    fn default() -> Self {
        Tree {
            root: Node::default(),
            names: Names::default(),
        }
    }
}

fn parse_pattern(pattern: &str) -> Result<Vec<Segment<'_>>, PatternError> {
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
            segments.push(Segment::Param(name));
        } else if let Some(name) = part.strip_prefix('*') {
            if parts.peek().is_some() {
                return Err(PatternError::Invalid(
                    "a `*` wildcard must be the last segment",
                ));
            }
            params += 1;
            segments.push(Segment::Wildcard(if name.is_empty() { "*" } else { name }));
        } else if part.contains([':', '*']) {
            return Err(PatternError::Invalid(
                "`:` and `*` may only start a segment",
            ));
        } else if !part.is_empty() || segments.is_empty() {
            segments.push(Segment::Static(part));
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
    pub(crate) fn entry(
        &mut self,
        pattern: &str,
        make: impl FnOnce() -> T,
    ) -> Result<&mut T, PatternError> {
        let segments = parse_pattern(pattern)?;
        let names = &mut self.names;
        let mut node = &mut self.root;
        for segment in segments {
            match segment {
                Segment::Static("") => {}
                Segment::Static(s) => node = node.static_child(s),
                Segment::Param(name) => {
                    let name = intern(names, name)?;
                    let (existing, child) =
                        node.param.get_or_insert_with(|| (name, Box::default()));
                    check_same_name(names, *existing, name)?;
                    node = child;
                }
                Segment::Wildcard(name) => {
                    let name = intern(names, name)?;
                    let (existing, value) = node.wildcard.get_or_insert_with(|| (name, make()));
                    check_same_name(names, *existing, name)?;
                    return Ok(value);
                }
            }
        }
        Ok(node.value.get_or_insert_with(make))
    }

    /// Match a request path (without its query), as bytes: a request's path is matched
    /// without first being checked as text. Parameters are byte ranges of `path`.
    /// The value of the route `path` matches, with its parameters written into `captures`
    /// (which is cleared first: it is reused from request to request, never copied).
    pub(crate) fn find(&self, path: &[u8], captures: &mut Captures) -> Option<&T> {
        captures.clear();
        if !captures
            .names
            .as_ref()
            .is_some_and(|names| Arc::ptr_eq(names, &self.names))
        {
            captures.names = Some(self.names.clone());
        }
        let rest = path.strip_prefix(b"/")?;
        find_in(&self.root, path, path.len() - rest.len(), captures)
    }
}

/// The index of `name` in the tree's names, added if new. Only while routes are registered:
/// the names are not shared with any captures yet, so they are changed in place.
fn intern(names: &mut Names, name: &str) -> Result<u16, PatternError> {
    if let Some(at) = names.iter().position(|known| **known == *name) {
        return Ok(at as u16);
    }
    let at = u16::try_from(names.len())
        .map_err(|_| PatternError::Invalid("too many parameter names in one app"))?;
    Arc::make_mut(names).push(name.into());
    Ok(at)
}

fn check_same_name(names: &Names, existing: u16, name: u16) -> Result<(), PatternError> {
    if existing == name {
        return Ok(());
    }
    let text = |at: u16| names[usize::from(at)].to_string();
    Err(PatternError::ParamNameConflict(text(existing), text(name)))
}

/// Match `path` from byte `at` below `node`. A branch with nothing to fall back on (no
/// parameter or wildcard beside it at its node) is followed in this frame rather than a new
/// one; a call that finds nothing leaves `captures` as it found them.
fn find_in<'t, T>(
    mut node: &'t Node<T>,
    path: &[u8],
    mut at: usize,
    captures: &mut Captures,
) -> Option<&'t T> {
    let base = captures.len;
    let found = loop {
        if at >= path.len() {
            // A trailing slash matches the same route as without it.
            break node
                .value
                .as_ref()
                .or_else(|| wildcard(node, path, path.len(), captures));
        }
        let end = segment_end(path, at);
        let segment = &path[at..end];
        let next = end + 1;
        let param = node.param.as_ref().filter(|_| !segment.is_empty());
        if let Some(child) = node.find_static(segment) {
            if param.is_none() && node.wildcard.is_none() {
                node = child;
                at = next;
                continue;
            }
            if let Some(found) = find_in(child, path, next, captures) {
                return Some(found);
            }
        }
        if let Some((name, child)) = param {
            captures.push(*name, at, end);
            if node.wildcard.is_none() {
                node = child;
                at = next;
                continue;
            }
            if let Some(found) = find_in(child, path, next, captures) {
                return Some(found);
            }
            // The failed call left the captures as they were after this push.
            captures.len -= 1;
        }
        break wildcard(node, path, at, captures);
    };
    if found.is_none() {
        captures.len = base;
    }
    found
}

fn wildcard<'t, T>(
    node: &'t Node<T>,
    path: &[u8],
    at: usize,
    captures: &mut Captures,
) -> Option<&'t T> {
    let (name, value) = node.wildcard.as_ref()?;
    captures.push(*name, at.min(path.len()), path.len());
    Some(value)
}

fn segment_end(path: &[u8], from: usize) -> usize {
    // Segments are short: a plain byte scan beats a searcher's set-up.
    path[from..]
        .iter()
        .position(|&b| b == b'/')
        .map_or(path.len(), |i| from + i)
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
        tree.find(path.as_bytes(), &mut caps).map(|v| {
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
    fn static_siblings_of_one_length_and_first_byte_are_told_apart() {
        let t = tree(&[
            "/sleep", "/slept", "/stream", "/s", "/sl/:x", "/a/b", "/a/c",
        ]);
        for path in ["/sleep", "/slept", "/stream", "/s", "/a/b", "/a/c"] {
            assert_eq!(find(&t, path).unwrap().0, path);
        }
        assert_eq!(find(&t, "/sl/1").unwrap().0, "/sl/:x");
        for missing in ["/sleeq", "/slee", "/sleeps", "/S", "/a/d", "/a", "/t"] {
            assert!(find(&t, missing).is_none(), "{missing}");
        }
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

    /// A parameter captured on a branch that dead-ends is not left behind when matching
    /// backtracks to another parameter or to a wildcard.
    #[test]
    fn captures_of_a_dead_end_are_dropped() {
        let t = tree(&["/a/:x/b", "/:y/:z/c", "/w/:p/q", "/w/*rest"]);
        assert_eq!(
            find(&t, "/a/1/c").unwrap(),
            (
                "/:y/:z/c".into(),
                vec![("y".into(), "a".into()), ("z".into(), "1".into())]
            )
        );
        assert_eq!(
            find(&t, "/w/1/z").unwrap(),
            ("/w/*rest".into(), vec![("rest".into(), "1/z".into())])
        );
        assert_eq!(
            find(&t, "/w/1/q").unwrap(),
            ("/w/:p/q".into(), vec![("p".into(), "1".into())])
        );
        assert_eq!(find(&t, "/a/1/d"), None);
    }

    /// Parameter names belong to their tree: another tree with the same names keeps its own
    /// copies, and nothing global holds them.
    #[test]
    fn each_tree_owns_its_parameter_names() {
        let first = tree(&["/users/:id", "/files/*rest"]);
        let second = tree(&["/users/:id", "/files/*rest"]);
        let name_at = |t: &Tree<String>, path: &str| {
            let mut caps = Captures::default();
            t.find(path.as_bytes(), &mut caps).unwrap();
            let (name, _, _) = caps.iter().next().unwrap();
            assert!(name == "id" || name == "rest");
            name.as_ptr() as usize
        };
        assert_ne!(name_at(&first, "/users/1"), name_at(&second, "/users/1"));
        assert_ne!(name_at(&first, "/files/a"), name_at(&second, "/files/a"));
    }

    /// The names go when the tree and the last captures that refer to them go.
    #[test]
    fn parameter_names_go_with_their_tree() {
        let t = tree(&["/users/:a_name_no_other_tree_has"]);
        let names = Arc::downgrade(&t.names);
        let mut caps = Captures::default();
        t.find(b"/users/7", &mut caps).unwrap();
        drop(t);
        // Captures a request still holds can still name what they captured.
        assert_eq!(caps.iter().next().unwrap().0, "a_name_no_other_tree_has");
        drop(caps);
        assert!(names.upgrade().is_none());
    }

    /// Captures reused from request to request (as pooled requests do) name what they
    /// captured in whichever tree matched last, with many trees of distinct names built and
    /// dropped in turn.
    #[test]
    fn reused_captures_follow_the_tree_matched() {
        let mut caps = Captures::default();
        let mut names = Vec::new();
        for i in 0..200 {
            let t = tree(&[&format!("/a/:first_{i}/b/:second_{i}")]);
            names.push(Arc::downgrade(&t.names));
            t.find(b"/a/1/b/2", &mut caps).unwrap();
            let got: Vec<&str> = caps.iter().map(|(name, _, _)| name).collect();
            assert_eq!(got, [format!("first_{i}"), format!("second_{i}")]);
        }
        drop(caps);
        assert!(names.iter().all(|n| n.upgrade().is_none()));
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
