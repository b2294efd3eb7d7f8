//! Cookies, built and parsed by the [`cookie`] crate: plain, signed and private (encrypted).
//!
//! Names and values are percent-encoded on the way out and decoded on the way in, so any text
//! can be stored and none of it can become an attribute. Signed and private cookies use a
//! [`Key`]; see [`crate::ResponseExt::set_signed_cookie`] and [`crate::Request::signed_cookie`].

use crate::error::Error;
#[cfg(feature = "secure-cookies")]
use cookie::CookieJar;
use std::borrow::Cow;
use std::fmt;

#[cfg(feature = "secure-cookies")]
pub use cookie::Key;
pub use cookie::SameSite;

/// A cookie to send with `Set-Cookie`: a thin builder over [`cookie::Cookie`], for the whole
/// site (`Path=/`) unless told otherwise.
///
/// The name and value may hold any text: both are percent-encoded when sent (a `;` in a value
/// cannot add an attribute) and decoded by [`crate::Request::cookie`].
///
/// ```
/// use vireo::{Cookie, SameSite};
/// let c = Cookie::new("session", "abc").http_only().secure().same_site(SameSite::Lax).max_age(3600);
/// assert_eq!(c.to_string(), "session=abc; HttpOnly; SameSite=Lax; Secure; Path=/; Max-Age=3600");
/// let tricky = Cookie::new("note", "a; Domain=evil.example");
/// assert_eq!(tricky.to_string(), "note=a%3B%20Domain%3Devil.example; Path=/");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Cookie(cookie::Cookie<'static>);

impl Cookie {
    /// A cookie for the whole site (`Path=/`).
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        let mut cookie = cookie::Cookie::new(name.into(), value.into());
        cookie.set_path("/");
        Cookie(cookie)
    }

    /// A cookie that tells the browser to forget `name` (for the whole site, as
    /// [`Cookie::new`]; give the same path and domain the cookie was set with).
    pub fn removal(name: impl Into<String>) -> Self {
        let mut cookie = Cookie::new(name, "");
        cookie.0.make_removal();
        cookie
    }

    /// Limit the cookie to a path.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.0.set_path(path.into());
        self
    }

    /// Share the cookie with a domain and its subdomains.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.0.set_domain(domain.into());
        self
    }

    /// Expire the cookie after this many seconds.
    pub fn max_age(mut self, seconds: u64) -> Self {
        let seconds = i64::try_from(seconds).unwrap_or(i64::MAX);
        self.0.set_max_age(cookie::time::Duration::seconds(seconds));
        self
    }

    /// Hide the cookie from scripts.
    pub fn http_only(mut self) -> Self {
        self.0.set_http_only(true);
        self
    }

    /// Send the cookie over HTTPS only.
    pub fn secure(mut self) -> Self {
        self.0.set_secure(true);
        self
    }

    /// Set the `SameSite` attribute. `SameSite::None` implies `Secure`, as browsers require.
    pub fn same_site(mut self, same_site: SameSite) -> Self {
        self.0.set_same_site(same_site);
        self
    }

    /// The name, as given (not encoded).
    pub fn name(&self) -> &str {
        self.0.name()
    }

    /// The value, as given (not encoded).
    pub fn value(&self) -> &str {
        self.0.value()
    }

    /// The underlying [`cookie::Cookie`], to read any attribute.
    pub fn as_cookie(&self) -> &cookie::Cookie<'static> {
        &self.0
    }

    /// The underlying [`cookie::Cookie`], to set what this builder has no method for
    /// (`Expires`, `Partitioned`).
    pub fn as_cookie_mut(&mut self) -> &mut cookie::Cookie<'static> {
        &mut self.0
    }

    /// The underlying [`cookie::Cookie`].
    pub fn into_cookie(self) -> cookie::Cookie<'static> {
        self.0
    }

    /// The `Set-Cookie` value, or why the cookie cannot be sent. The name and value are
    /// percent-encoded; an empty name, or a `Path` or `Domain` holding a `;` or a control
    /// character (RFC 6265 §4.1.1), is refused rather than sent malformed.
    pub(crate) fn header_value(&self) -> Result<http::HeaderValue, Error> {
        let invalid = |attribute: &str| attribute.contains(|c: char| c == ';' || c.is_control());
        let why = if self.0.name().is_empty() {
            Some("a cookie needs a name")
        } else if self.0.path().is_some_and(invalid) {
            Some("a cookie path may not hold `;` or a control character")
        } else if self.0.domain().is_some_and(invalid) {
            Some("a cookie domain may not hold `;` or a control character")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::internal(InvalidCookie(why)));
        }
        http::HeaderValue::try_from(self.to_string()).map_err(Error::internal)
    }
}

/// The `Set-Cookie` value: name and value percent-encoded, then the attributes.
impl fmt::Display for Cookie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.encoded(), f)
    }
}

impl From<cookie::Cookie<'static>> for Cookie {
    fn from(cookie: cookie::Cookie<'static>) -> Self {
        Cookie(cookie)
    }
}

impl From<Cookie> for cookie::Cookie<'static> {
    fn from(cookie: Cookie) -> Self {
        cookie.0
    }
}

/// Why a cookie could not be sent.
#[derive(Debug)]
struct InvalidCookie(&'static str);

impl fmt::Display for InvalidCookie {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for InvalidCookie {}

#[cfg(feature = "secure-cookies")]
/// Characters of the base64 HMAC-SHA256 digest [`cookie`]'s signed cookies start with.
const DIGEST_LEN: usize = 44;

#[cfg(feature = "secure-cookies")]
/// What is signed for a cookie: its name (length first, so no two name and value pairs give
/// the same text) and its value. [`cookie`] signs the value alone, which would let a client
/// move a signed value from one cookie to another; signing the name too stops that.
fn signed_payload(name: &str, value: &str) -> String {
    format!("{}:{name}:{value}", name.len())
}

#[cfg(feature = "secure-cookies")]
/// `cookie` with its value signed with `key`: the digest of name and value, then the value.
pub(crate) fn sign(key: &Key, cookie: &Cookie) -> Cookie {
    let mut jar = CookieJar::new();
    let payload = signed_payload(cookie.name(), cookie.value());
    let mut signed = cookie.0.clone();
    signed.set_value(payload);
    jar.signed_mut(key).add(signed);
    let mut out = jar.get(cookie.name()).cloned().expect("just added");
    let prefix = signed_payload(cookie.name(), "").len();
    let value = format!(
        "{}{}",
        &out.value()[..DIGEST_LEN],
        &out.value()[DIGEST_LEN + prefix..]
    );
    out.set_value(value);
    Cookie(out)
}

#[cfg(feature = "secure-cookies")]
/// The value of a cookie named `name` whose received value is `value`, if it was signed with
/// `key` for this name.
pub(crate) fn verify(key: &Key, name: &str, value: &str) -> Option<String> {
    let digest = value.get(..DIGEST_LEN)?;
    let plain = value.get(DIGEST_LEN..)?;
    let candidate = format!("{digest}{}", signed_payload(name, plain));
    let jar = CookieJar::new();
    jar.signed(key)
        .verify(cookie::Cookie::new(name.to_owned(), candidate))?;
    Some(plain.to_owned())
}

#[cfg(feature = "secure-cookies")]
/// `cookie` with its value encrypted and authenticated with `key`; the name is authenticated
/// too, so the value is good for this name only.
pub(crate) fn encrypt(key: &Key, cookie: &Cookie) -> Cookie {
    let mut jar = CookieJar::new();
    jar.private_mut(key).add(cookie.0.clone());
    Cookie(jar.get(cookie.name()).cloned().expect("just added"))
}

#[cfg(feature = "secure-cookies")]
/// The value of a cookie named `name` whose received value is `value`, if it was encrypted
/// with `key` for this name.
pub(crate) fn decrypt(key: &Key, name: &str, value: &str) -> Option<String> {
    let jar = CookieJar::new();
    let cookie = cookie::Cookie::new(name.to_owned(), value.to_owned());
    jar.private(key)
        .decrypt(cookie)
        .map(|c| c.value().to_owned())
}

/// The cookies of a `Cookie` field value, as (name, value), percent-decoded; pairs that do
/// not parse, or do not decode to UTF-8, are skipped. A value in double quotes is taken
/// without them (RFC 6265 §4.1.1).
pub(crate) fn parse(field: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    cookie::Cookie::split_parse(field).filter_map(|cookie| {
        let cookie = cookie.ok()?;
        let name = decode(cookie.name_raw()?)?;
        let value = decode(trim_quotes(cookie.value_raw()?))?;
        Some((name, value))
    })
}

fn trim_quotes(value: &str) -> &str {
    match value.as_bytes() {
        [b'"', .., b'"'] if value.len() >= 2 => &value[1..value.len() - 1],
        _ => value,
    }
}

fn decode(raw: &str) -> Option<Cow<'_, str>> {
    percent_encoding::percent_decode_str(raw).decode_utf8().ok()
}
