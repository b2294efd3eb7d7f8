//! Python values to JSON bytes, in native code: dict, list, tuple, str, int, float, bool and
//! None are walked here; anything else goes through the `jsonable` hook once (models,
//! dataclasses, dates), which may hand back finished JSON as bytes.

use bytes::Bytes;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::cell::Cell;

/// Deeper than this is a cycle or a mistake.
const MAX_DEPTH: u32 = 256;

pub(crate) struct Encoder<'a, 'py> {
    /// The `jsonable` hook.
    fallback: &'a Bound<'py, PyAny>,
    pub out: Vec<u8>,
}

/// `s` as a JSON string. Most strings need no escape (no control byte, `"` or `\`) and are
/// copied whole between quotes, as serde_json would write them; the others go through it.
fn write_str(out: &mut Vec<u8>, s: &str) {
    if !is_plain(s.as_bytes()) {
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
        return;
    }
    out.reserve(s.len() + 2);
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// Whether no byte of `s` needs escaping in JSON: eight bytes at a time, the last eight
/// overlapping the word before, so there is no tail to go through byte by byte.
fn is_plain(s: &[u8]) -> bool {
    if s.len() < 8 {
        return s.iter().all(|&b| b >= 0x20 && b != b'"' && b != b'\\');
    }
    let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("eight bytes"));
    let mut escape = needs_escape(word(s.len() - 8));
    for at in (0..s.len() - 7).step_by(8) {
        escape |= needs_escape(word(at));
    }
    !escape
}

/// Whether some byte of `word` is below 0x20, `"` or `\` (the tests for a byte below a bound
/// and for a zero byte, which are exact for "some byte").
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |v: u64, bound: u8| v.wrapping_sub(ONES * u64::from(bound)) & !v & HIGH;
    let control = below(word, 0x20);
    let quote = below(word ^ (ONES * u64::from(b'"')), 1);
    let backslash = below(word ^ (ONES * u64::from(b'\\')), 1);
    control | quote | backslash != 0
}

impl<'a, 'py> Encoder<'a, 'py> {
    pub(crate) fn new(fallback: &'a Bound<'py, PyAny>) -> Self {
        Encoder {
            fallback,
            out: Vec::with_capacity(64),
        }
    }

    pub(crate) fn write(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<()> {
        self.value(obj, 0)
    }

    fn value(&mut self, obj: &Bound<'py, PyAny>, depth: u32) -> PyResult<()> {
        if depth > MAX_DEPTH {
            return Err(PyValueError::new_err(
                "value nested too deeply to encode as JSON",
            ));
        }
        if obj.is_none() {
            self.out.extend_from_slice(b"null");
        } else if let Ok(s) = obj.cast_exact::<PyString>() {
            write_str(&mut self.out, s.to_str()?);
        } else if let Ok(b) = obj.cast_exact::<PyBool>() {
            let text: &[u8] = if b.is_true() { b"true" } else { b"false" };
            self.out.extend_from_slice(text);
        } else if let Ok(i) = obj.cast_exact::<PyInt>() {
            self.int(i)?;
        } else if let Ok(f) = obj.cast_exact::<PyFloat>() {
            self.float(f.value())?;
        } else if let Ok(d) = obj.cast::<PyDict>() {
            self.dict(d, depth)?;
        } else if let Ok(l) = obj.cast::<PyList>() {
            self.out.push(b'[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                self.value(&item, depth + 1)?;
            }
            self.out.push(b']');
        } else if let Ok(t) = obj.cast::<PyTuple>() {
            self.out.push(b'[');
            for (i, item) in t.iter().enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                self.value(&item, depth + 1)?;
            }
            self.out.push(b']');
        } else if let Ok(s) = obj.cast::<PyString>() {
            write_str(&mut self.out, s.to_str()?);
        } else if obj.is_instance_of::<PyBool>() {
            self.out
                .extend_from_slice(if obj.is_truthy()? { b"true" } else { b"false" });
        } else if let Ok(i) = obj.cast::<PyInt>() {
            self.int(i)?;
        } else if let Ok(f) = obj.cast::<PyFloat>() {
            self.float(f.value())?;
        } else {
            let plain = self.fallback.call1((obj,))?;
            if let Ok(raw) = plain.cast::<PyBytes>() {
                self.out.extend_from_slice(raw.as_bytes());
            } else if plain.is(obj) || plain.get_type().is(obj.get_type()) {
                return Err(PyTypeError::new_err(format!(
                    "Object of type {} is not JSON serializable",
                    obj.get_type().name()?
                )));
            } else {
                self.value(&plain, depth + 1)?;
            }
        }
        Ok(())
    }

    fn int(&mut self, i: &Bound<'py, PyInt>) -> PyResult<()> {
        match i.extract::<i64>() {
            Ok(n) => self
                .out
                .extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
            Err(_) => self.out.extend_from_slice(i.str()?.to_str()?.as_bytes()),
        }
        Ok(())
    }

    fn float(&mut self, f: f64) -> PyResult<()> {
        if !f.is_finite() {
            return Err(PyValueError::new_err(
                "Out of range float values are not JSON compliant",
            ));
        }
        let _ = serde_json::to_writer(&mut self.out, &f);
        Ok(())
    }

    fn dict(&mut self, d: &Bound<'py, PyDict>, depth: u32) -> PyResult<()> {
        self.out.push(b'{');
        for (i, (key, value)) in d.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.key(&key)?;
            self.out.push(b':');
            self.value(&value, depth + 1)?;
        }
        self.out.push(b'}');
        Ok(())
    }

    /// Keys are strings in JSON; numbers, booleans and None become their text, as in `json`.
    fn key(&mut self, key: &Bound<'py, PyAny>) -> PyResult<()> {
        if let Ok(s) = key.cast::<PyString>() {
            write_str(&mut self.out, s.to_str()?);
        } else if key.is_none() {
            self.out.extend_from_slice(b"\"null\"");
        } else if key.is_instance_of::<PyBool>() {
            let text: &[u8] = if key.is_truthy()? {
                b"\"true\""
            } else {
                b"\"false\""
            };
            self.out.extend_from_slice(text);
        } else if key.is_instance_of::<PyInt>() || key.is_instance_of::<PyFloat>() {
            write_str(&mut self.out, key.str()?.to_str()?);
        } else {
            return Err(PyTypeError::new_err(format!(
                "keys must be str, int, float, bool or None, not {}",
                key.get_type().name()?
            )));
        }
        Ok(())
    }
}

/// JSON bytes for `obj`.
pub(crate) fn encode(obj: &Bound<'_, PyAny>, fallback: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let mut encoder = Encoder::new(fallback);
    encoder.write(obj)?;
    Ok(encoder.out)
}

/// Bodies up to this size are encoded into the thread's scratch buffer and copied out at
/// their exact size; larger ones keep the buffer they were encoded into.
const SCRATCH_LIMIT: usize = 4096;

thread_local! {
    /// Taken while an encoding runs, so one started by the `jsonable` hook gets a buffer
    /// of its own.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// JSON for `obj` as a response body: one allocation of the body's own size for small
/// bodies, however the encoding grew.
pub(crate) fn encode_body(obj: &Bound<'_, PyAny>, fallback: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    let mut out = SCRATCH.take();
    out.clear();
    let mut encoder = Encoder { fallback, out };
    let written = encoder.write(obj);
    let mut out = encoder.out;
    if out.len() > SCRATCH_LIMIT {
        return written.map(|()| Bytes::from(out));
    }
    let body = written.map(|()| Bytes::copy_from_slice(&out));
    out.clear();
    if out.capacity() <= SCRATCH_LIMIT {
        SCRATCH.set(out);
    }
    body
}

/// `dumps(obj, jsonable) -> bytes`: compact JSON, as JSONResponse sends it.
#[pyfunction]
pub(crate) fn dumps<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    jsonable: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let out = encode(obj, jsonable)?;
    Ok(PyBytes::new(py, &out))
}

#[cfg(test)]
mod tests {
    use super::{is_plain, write_str};

    #[test]
    fn every_byte_at_every_place_is_judged_as_one_at_a_time() {
        let needs = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        for len in 1..=20 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut s = vec![b'a'; len];
                    s[at] = byte;
                    assert_eq!(is_plain(&s), !needs(byte), "{byte:#x} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let cases = [
            "",
            "Hello, World!",
            "quote \" inside",
            "back\\slash",
            "tab\tnew\nline\r",
            "\u{0}\u{1f} control",
            "del \u{7f} kept",
            "unicode é 日本 🎉",
            "a long string of plain text that is longer than one vector register of bytes",
            "plain until the very end\"",
            "sixteen bytes ok",
            "exactly8",
            "seven b",
            "x\"234567",
            "1234567\\",
            "12345678\u{1}",
            "\u{1f}2345678abcdefgh",
            "ab\"defghijklmnopq",
            "éééé\u{80}\u{ff}ÿ",
        ];
        for case in cases {
            let mut out = Vec::new();
            write_str(&mut out, case);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(case).unwrap(),
                "{case:?}"
            );
        }
    }
}
