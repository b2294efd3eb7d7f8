//! Response compression with gzip or brotli, chosen by `Accept-Encoding`.

use super::{Middleware, Next};
use crate::handler::Reply;
use crate::Request;
use http::{header, HeaderValue};
use std::io::Write;
use vireo_http::Response;

/// Bodies smaller than this are sent as they are: compressing them saves less than the
/// headers and the CPU cost.
pub const DEFAULT_THRESHOLD: usize = 1024;

/// Compress response bodies of at least `threshold` bytes (default 1 KiB) with brotli or gzip,
/// whichever the client prefers in `Accept-Encoding` (brotli on a tie). Bodies already encoded,
/// streamed bodies, and types that are compressed already (images, video, archives) are left
/// alone.
///
/// ```
/// let mut app = vireo::App::new();
/// app.r#use(vireo::middleware::compression());
/// app.get("/", |_req| "a".repeat(4096));
/// let res = vireo::TestClient::new(app).get("/").header("accept-encoding", "gzip").send();
/// assert_eq!(res.header("content-encoding"), Some("gzip"));
/// assert!(res.bytes().len() < 100);
/// ```
pub fn compression() -> Compression {
    Compression {
        threshold: DEFAULT_THRESHOLD,
    }
}

/// See [`compression`].
#[derive(Debug, Clone, Copy)]
pub struct Compression {
    threshold: usize,
}

impl Compression {
    /// Compress only bodies of at least `bytes`.
    pub fn threshold(mut self, bytes: usize) -> Self {
        self.threshold = bytes;
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coding {
    Brotli,
    Gzip,
}

/// The coding the client prefers among those we offer, by q-value (RFC 9110 §12.5.3).
fn choose(accept: &str) -> Option<Coding> {
    let mut best: Option<(Coding, f32)> = None;
    for item in accept.split(',') {
        let mut parts = item.split(';');
        let name = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .find_map(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
            })
            .unwrap_or(1.0);
        let coding = match name.as_str() {
            "br" => Coding::Brotli,
            "gzip" | "x-gzip" => Coding::Gzip,
            _ => continue,
        };
        let better = match best {
            None => true,
            Some((current, best_q)) => {
                q > best_q || (q == best_q && current == Coding::Gzip && coding == Coding::Brotli)
            }
        };
        if q > 0.0 && better {
            best = Some((coding, q));
        }
    }
    best.map(|(coding, _)| coding)
}

fn compressible(response: &Response) -> bool {
    let headers = response.headers();
    // A part of a representation (206) is counted in its encoded form (RFC 9110 §14.4), so
    // encoding the part alone would corrupt it; `no-transform` forbids it (RFC 9111 §5.2.2.6).
    if response.status() == http::StatusCode::PARTIAL_CONTENT
        || headers.contains_key(header::CONTENT_RANGE)
        || headers.contains_key(header::CONTENT_ENCODING)
        || headers
            .get_all(header::CACHE_CONTROL)
            .iter()
            .any(|v| v.to_str().is_ok_and(asks_no_transform))
    {
        return false;
    }
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let already_compressed = (content_type.starts_with("image/")
        && !content_type.starts_with("image/svg"))
        || content_type.starts_with("video/")
        || content_type.starts_with("audio/")
        || matches!(
            content_type,
            "application/zip" | "application/gzip" | "application/x-gzip" | "application/zstd"
        );
    !already_compressed
}

/// Whether a `Cache-Control` value lists `no-transform`.
fn asks_no_transform(value: &str) -> bool {
    value
        .split(',')
        .any(|directive| directive.trim().eq_ignore_ascii_case("no-transform"))
}

fn compress(coding: Coding, data: &[u8]) -> std::io::Result<Vec<u8>> {
    match coding {
        Coding::Gzip => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(data)?;
            encoder.finish()
        }
        Coding::Brotli => {
            // Quality 4 compresses about as fast as gzip's fast level and smaller; the top
            // levels are for precompressed static assets, not per-response work.
            let mut out = Vec::new();
            {
                let mut writer = brotli::CompressorWriter::new(&mut out, 4096, 4, 22);
                writer.write_all(data)?;
            }
            Ok(out)
        }
    }
}

impl Middleware for Compression {
    fn call(&self, req: Request, next: Next) -> Reply {
        let Some(coding) = req.header("accept-encoding").and_then(choose) else {
            return next.run(req);
        };
        let threshold = self.threshold;
        Reply::pending(async move {
            let mut response = next.run(req).await;
            response
                .headers_mut()
                .append(header::VARY, HeaderValue::from_static("accept-encoding"));
            let compressed = match response.body().in_memory() {
                Some(data) if data.len() >= threshold && compressible(&response) => {
                    compress(coding, data)
                }
                _ => return response,
            };
            match compressed {
                Ok(compressed) => {
                    response.set_body(compressed);
                    let name = match coding {
                        Coding::Brotli => "br",
                        Coding::Gzip => "gzip",
                    };
                    response
                        .headers_mut()
                        .insert(header::CONTENT_ENCODING, HeaderValue::from_static(name));
                }
                Err(error) => tracing::warn!(%error, "compression failed; sending uncompressed"),
            }
            response
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_is_read_by_q_value() {
        assert_eq!(choose("gzip"), Some(Coding::Gzip));
        assert_eq!(choose("gzip, br"), Some(Coding::Brotli));
        assert_eq!(choose("br;q=0.5, gzip;q=0.8"), Some(Coding::Gzip));
        assert_eq!(choose("br;q=0, gzip;q=0"), None);
        assert_eq!(choose("identity, deflate"), None);
    }
}
