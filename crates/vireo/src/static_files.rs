//! Serving files from a directory: content types, `ETag` and `Last-Modified` with 304,
//! single `Range` requests with 206, `index.html` for directories, and no path traversal.

use crate::error::Error;
use crate::handler::{Endpoint, Handler, IsAsync, Reply};
use crate::response::IntoResponse;
use crate::Request;
use bytes::Bytes;
use http::{header, HeaderValue, Method, StatusCode};
use std::path::{Component, Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::io::AsyncRead;
use vireo_http::{Body, Response};

/// Files up to this size are read whole; larger ones are streamed in chunks of this size, so
/// a large download never sits in memory.
const CHUNK: usize = 64 * 1024;

/// Serve the files under `root`, at a route ending in a wildcard (`/static/*path`) or as the
/// only route of a mounted router. Paths with `..`, backslashes or NUL, symlinks leading out of
/// `root` (for a directory's `index.html` and a precompressed sibling too), and, unless
/// [`ServeDir::dotfiles`] allows them, names starting with `.` (`.git`, `.env`) get 404.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("hello.txt"), "hi").unwrap();
/// let mut app = vireo::App::new();
/// app.get("/static/*path", vireo::serve_dir(dir.path()));
/// let client = vireo::TestClient::new(app);
/// let res = client.get("/static/hello.txt").send();
/// assert_eq!(res.text(), "hi");
/// assert_eq!(res.header("content-type"), Some("text/plain; charset=utf-8"));
/// assert_eq!(client.get("/static/../Cargo.toml").send().status(), 404);
/// std::fs::write(dir.path().join(".env"), "SECRET=1").unwrap();
/// assert_eq!(client.get("/static/.env").send().status(), 404);
/// ```
pub fn serve_dir(root: impl Into<PathBuf>) -> ServeDir {
    ServeDir {
        options: Arc::new(Options {
            root: root.into(),
            cache_control: None,
            precompressed: false,
            dotfiles: false,
        }),
    }
}

/// See [`serve_dir`].
#[derive(Debug, Clone)]
pub struct ServeDir {
    options: Arc<Options>,
}

#[derive(Debug, Clone)]
struct Options {
    root: PathBuf,
    cache_control: Option<HeaderValue>,
    precompressed: bool,
    dotfiles: bool,
}

impl ServeDir {
    /// Send this `Cache-Control` with every file, e.g. `"public, max-age=3600"` (default: none,
    /// so caches revalidate with the `ETag` and `Last-Modified` sent).
    ///
    /// # Panics
    /// If `value` is not a valid header value.
    pub fn cache_control(mut self, value: &str) -> Self {
        let value = HeaderValue::from_str(value)
            .unwrap_or_else(|_| panic!("`{value}` is not a valid Cache-Control value"));
        Arc::make_mut(&mut self.options).cache_control = Some(value);
        self
    }

    /// Serve a file's precompressed sibling (`app.js.br`, then `app.js.gz`) when the client
    /// accepts that encoding and the sibling exists, with `Content-Encoding` and
    /// `Vary: Accept-Encoding` (default: off).
    pub fn precompressed(mut self) -> Self {
        Arc::make_mut(&mut self.options).precompressed = true;
        self
    }

    /// Serve files and directories whose names start with `.` (default: off, so a root that
    /// holds `.git` or `.env` does not give them away; they get 404).
    pub fn dotfiles(mut self) -> Self {
        Arc::make_mut(&mut self.options).dotfiles = true;
        self
    }
}

impl Handler<IsAsync> for ServeDir {
    fn into_endpoint(self) -> Arc<dyn Endpoint> {
        Arc::new(self)
    }
}

impl Endpoint for ServeDir {
    fn call(&self, req: Request) -> Reply {
        let options = self.options.clone();
        Reply::pending(async move {
            match serve(&options, &req).await {
                Ok(response) => response,
                Err(error) => error.into_response(),
            }
        })
    }
}

/// The path the client asked for, relative to the root, if it is a safe one.
fn relative_path(req: &Request, dotfiles: bool) -> Option<PathBuf> {
    let raw = req.params().last().map(|(_, v)| v.into_owned());
    let raw = raw.unwrap_or_else(|| {
        percent_encoding::percent_decode_str(req.path())
            .decode_utf8_lossy()
            .into_owned()
    });
    if raw.contains(['\\', '\0']) {
        return None;
    }
    let mut path = PathBuf::new();
    for component in Path::new(raw.trim_start_matches('/')).components() {
        match component {
            Component::Normal(part) if dotfiles || !part.as_encoded_bytes().starts_with(b".") => {
                path.push(part)
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(path)
}

fn not_found() -> Error {
    Error::not_found("Not Found")
}

async fn serve(options: &Options, req: &Request) -> Result<Response, Error> {
    let root = options.root.as_path();
    if req.method() != Method::GET && req.method() != Method::HEAD {
        // A 405 says what is allowed (RFC 9110 §15.5.6).
        let mut res = Response::new(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
        res.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Ok(res);
    }
    let relative = relative_path(req, options.dotfiles).ok_or_else(not_found)?;
    let root = tokio::fs::canonicalize(root)
        .await
        .map_err(|_| not_found())?;
    let mut path = tokio::fs::canonicalize(root.join(&relative))
        .await
        .map_err(|_| not_found())?;
    if !path.starts_with(&root) {
        return Err(not_found());
    }
    let mut meta = tokio::fs::metadata(&path).await.map_err(|_| not_found())?;
    if meta.is_dir() {
        if !req.original_path().ends_with('/') {
            // Relative links in the directory's index resolve against the directory only when
            // its URL ends in a slash.
            return Ok(redirect_to_directory(req));
        }
        (path, meta) = inside(&root, &path.join("index.html"))
            .await
            .ok_or_else(not_found)?;
    }
    if !meta.is_file() {
        return Err(not_found());
    }
    let content_type = content_type(&path);
    let mut encoding = None;
    if options.precompressed {
        if let Some((sibling, sibling_meta, name)) = precompressed_sibling(req, &root, &path).await
        {
            (path, meta, encoding) = (sibling, sibling_meta, Some(name));
        }
    }
    let len = meta.len();
    let modified = meta.modified().unwrap_or(UNIX_EPOCH);
    let etag = entity_tag(len, modified, encoding);
    let last_modified = httpdate::fmt_http_date(modified);

    let mut res = Response::new(StatusCode::OK, Body::Empty);
    let headers = res.headers_mut();
    headers.insert(header::CONTENT_TYPE, content_type);
    if let Some(encoding) = encoding {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
    }
    if options.precompressed {
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    if let Some(cache_control) = &options.cache_control {
        headers.insert(header::CACHE_CONTROL, cache_control.clone());
    }
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    if let Ok(value) = HeaderValue::from_str(&last_modified) {
        headers.insert(header::LAST_MODIFIED, value);
    }
    if not_modified(req, &etag, modified) {
        res.set_status(StatusCode::NOT_MODIFIED);
        return Ok(res);
    }
    let range = match req.header("range") {
        Some(range) if if_range_holds(req, &etag, &last_modified) => parse_range(range, len),
        _ => RangeRequest::Whole,
    };
    let (start, count) = match range {
        RangeRequest::Whole => (0, len),
        RangeRequest::Part(start, end) => {
            res.set_status(StatusCode::PARTIAL_CONTENT);
            let value = format!("bytes {start}-{end}/{len}");
            if let Ok(value) = HeaderValue::from_str(&value) {
                res.headers_mut().insert(header::CONTENT_RANGE, value);
            }
            (start, end - start + 1)
        }
        RangeRequest::Unsatisfiable => {
            res.set_status(StatusCode::RANGE_NOT_SATISFIABLE);
            if let Ok(value) = HeaderValue::from_str(&format!("bytes */{len}")) {
                res.headers_mut().insert(header::CONTENT_RANGE, value);
            }
            return Ok(res);
        }
    };
    if req.method() == Method::HEAD {
        res.set_body(Body::SizedStream(count, Box::pin(FileChunks::empty())));
        return Ok(res);
    }
    res.set_body(
        read_body(&path, start, count)
            .await
            .map_err(Error::internal)?,
    );
    Ok(res)
}

async fn read_body(path: &Path, start: u64, count: u64) -> std::io::Result<Body> {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let mut file = tokio::fs::File::open(path).await?;
    if start > 0 {
        file.seek(std::io::SeekFrom::Start(start)).await?;
    }
    if count <= CHUNK as u64 {
        let mut data = vec![0; count as usize];
        file.read_exact(&mut data).await?;
        return Ok(Body::Bytes(Bytes::from(data)));
    }
    Ok(Body::SizedStream(
        count,
        Box::pin(FileChunks {
            file: Some(file),
            left: count,
        }),
    ))
}

/// A weak validator from the size and modification time: cheap, and changes whenever the file
/// is rewritten.
fn entity_tag(len: u64, modified: SystemTime, encoding: Option<&str>) -> String {
    let since = modified.duration_since(UNIX_EPOCH).unwrap_or_default();
    // Each encoding of a file is its own representation, with its own tag.
    let suffix = encoding.map_or(String::new(), |e| format!("-{e}"));
    format!(
        "W/\"{len:x}-{:x}-{:x}{suffix}\"",
        since.as_secs(),
        since.subsec_nanos()
    )
}

/// `301` to the directory's URL with its slash, query kept.
fn redirect_to_directory(req: &Request) -> Response {
    let mut location = format!("{}/", req.original_path());
    if let Some(query) = req.query_string() {
        location.push('?');
        location.push_str(query);
    }
    let mut res = Response::new(StatusCode::MOVED_PERMANENTLY, Body::Empty);
    if let Ok(value) = HeaderValue::from_str(&location) {
        res.headers_mut().insert(header::LOCATION, value);
    }
    res
}

/// The precompressed sibling of `path` the client accepts, best first (`br`, then `gzip`), if
/// one exists: its path, metadata and encoding name.
async fn precompressed_sibling(
    req: &Request,
    root: &Path,
    path: &Path,
) -> Option<(PathBuf, std::fs::Metadata, &'static str)> {
    let accepted = req.header("accept-encoding").unwrap_or("");
    for (encoding, extension) in [("br", "br"), ("gzip", "gz")] {
        if !accepts(accepted, encoding) {
            continue;
        }
        let mut name = path.as_os_str().to_owned();
        name.push(".");
        name.push(extension);
        if let Some((sibling, meta)) = inside(root, Path::new(&name)).await {
            if meta.is_file() {
                return Some((sibling, meta, encoding));
            }
        }
    }
    None
}

/// `path` with its symlinks resolved, and its metadata, if it exists and lies under `root`
/// (itself resolved).
async fn inside(root: &Path, path: &Path) -> Option<(PathBuf, std::fs::Metadata)> {
    let resolved = tokio::fs::canonicalize(path).await.ok()?;
    if !resolved.starts_with(root) {
        return None;
    }
    let meta = tokio::fs::metadata(&resolved).await.ok()?;
    Some((resolved, meta))
}

/// Whether an `Accept-Encoding` value accepts `encoding` with a q above 0: as named, or, if it
/// is not named, by `*` (RFC 9110 §12.5.3).
fn accepts(accept_encoding: &str, encoding: &str) -> bool {
    let mut by_wildcard = None;
    for item in accept_encoding.split(',') {
        let mut parts = item.split(';');
        let name = parts.next().unwrap_or("").trim();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        if name.eq_ignore_ascii_case(encoding) {
            return !refused;
        }
        if name == "*" {
            by_wildcard = Some(!refused);
        }
    }
    by_wildcard.unwrap_or(false)
}

/// RFC 9110 §13.1.2 and §13.1.3: `If-None-Match` wins over `If-Modified-Since`.
fn not_modified(req: &Request, etag: &str, modified: SystemTime) -> bool {
    if let Some(tags) = req.header("if-none-match") {
        let bare = etag.trim_start_matches("W/");
        return tags
            .split(',')
            .map(|t| t.trim().trim_start_matches("W/"))
            .any(|t| t == "*" || t == bare);
    }
    match req
        .header("if-modified-since")
        .and_then(|d| httpdate::parse_http_date(d).ok())
    {
        Some(since) => {
            let secs = |t: SystemTime| t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
            secs(modified) <= secs(since)
        }
        None => false,
    }
}

/// `If-Range` (RFC 9110 §13.1.5): the range applies only if the validator still matches.
fn if_range_holds(req: &Request, etag: &str, last_modified: &str) -> bool {
    match req.header("if-range") {
        None => true,
        // A weak tag never matches If-Range; ours are weak, so only the date form can match.
        Some(value) if value.starts_with('"') || value.starts_with("W/") => false,
        Some(value) => value == last_modified && !etag.is_empty(),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum RangeRequest {
    Whole,
    /// First and last byte, inclusive.
    Part(u64, u64),
    Unsatisfiable,
}

/// A single `bytes=` range (RFC 9110 §14.2). Several ranges are answered with the whole file,
/// which RFC 9110 allows, and spares us multipart bodies.
fn parse_range(value: &str, len: u64) -> RangeRequest {
    let Some(spec) = value.trim().strip_prefix("bytes=") else {
        return RangeRequest::Whole;
    };
    if spec.contains(',') {
        return RangeRequest::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return RangeRequest::Whole;
    };
    let parse = |s: &str| s.trim().parse::<u64>().ok();
    let (start, end) = match (first.trim().is_empty(), parse(first), parse(last)) {
        (true, _, Some(suffix)) if suffix > 0 => {
            (len.saturating_sub(suffix), len.saturating_sub(1))
        }
        (true, _, _) => return RangeRequest::Unsatisfiable,
        (false, Some(start), None) if last.trim().is_empty() => (start, len.saturating_sub(1)),
        (false, Some(start), Some(end)) if end >= start => (start, end.min(len.saturating_sub(1))),
        _ => return RangeRequest::Whole,
    };
    if len == 0 || start >= len {
        RangeRequest::Unsatisfiable
    } else {
        RangeRequest::Part(start, end)
    }
}

/// The content type for a file name's extension, from `mime_guess`; text in UTF-8.
fn content_type(path: &Path) -> HeaderValue {
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    let textual =
        mime.type_() == mime_guess::mime::TEXT || mime.subtype() == mime_guess::mime::JAVASCRIPT;
    let value = if textual && mime.get_param(mime_guess::mime::CHARSET).is_none() {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_string()
    };
    HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static("application/octet-stream"))
}

/// A file read in chunks, each read on Tokio's blocking pool as the client takes the last.
struct FileChunks {
    file: Option<tokio::fs::File>,
    left: u64,
}

impl FileChunks {
    fn empty() -> Self {
        FileChunks {
            file: None,
            left: 0,
        }
    }
}

impl futures_core::Stream for FileChunks {
    type Item = Result<Bytes, vireo_http::BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(file) = this.file.as_mut().filter(|_| this.left > 0) else {
            return Poll::Ready(None);
        };
        let mut chunk = vec![0; CHUNK.min(this.left as usize)];
        let mut buf = tokio::io::ReadBuf::new(&mut chunk);
        match Pin::new(file).poll_read(cx, &mut buf) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(Ok(())) => {
                let n = buf.filled().len();
                if n == 0 {
                    let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
                    return Poll::Ready(Some(Err(eof.into())));
                }
                this.left -= n as u64;
                chunk.truncate(n);
                Poll::Ready(Some(Ok(Bytes::from(chunk))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-9", 100), RangeRequest::Part(0, 9));
        assert_eq!(parse_range("bytes=90-", 100), RangeRequest::Part(90, 99));
        assert_eq!(parse_range("bytes=-10", 100), RangeRequest::Part(90, 99));
        assert_eq!(parse_range("bytes=95-200", 100), RangeRequest::Part(95, 99));
        assert_eq!(parse_range("bytes=100-", 100), RangeRequest::Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 100), RangeRequest::Unsatisfiable);
        assert_eq!(parse_range("bytes=0-1,5-6", 100), RangeRequest::Whole);
        assert_eq!(parse_range("items=0-1", 100), RangeRequest::Whole);
        assert_eq!(parse_range("bytes=5-2", 100), RangeRequest::Whole);
    }
}
