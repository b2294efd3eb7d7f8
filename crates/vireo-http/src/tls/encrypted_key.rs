//! Private keys encrypted with a password: PKCS#8 `ENCRYPTED PRIVATE KEY` with PBES2 (PBKDF2
//! with HMAC-SHA-2, or scrypt; AES-CBC), what `openssl genpkey -aes256`, current
//! `openssl pkcs8 -topk8` and Python's `cryptography` write.

use super::cert::CONVERT;
use super::error::{PemSource, TlsError};
use pkcs8::der::Document;
use pkcs8::pkcs5;
use pkcs8::EncryptedPrivateKeyInfo;
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

const BEGIN: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----";
const END: &str = "-----END ENCRYPTED PRIVATE KEY-----";

/// The first encrypted key in `pem`, decrypted with `password`.
pub(crate) fn decrypt(
    pem: &[u8],
    password: &[u8],
    source: &PemSource,
) -> Result<PrivateKeyDer<'static>, TlsError> {
    let unsupported = |error: &dyn std::fmt::Display| TlsError::EncryptedKey {
        source: source.clone(),
        problem: format!(
            "the private key's encryption is not supported ({error}); convert it with `{CONVERT}`"
        ),
    };
    let text = String::from_utf8_lossy(pem);
    let section = text
        .find(BEGIN)
        .and_then(|start| {
            let end = start + text[start..].find(END)? + END.len();
            Some(&text[start..end])
        })
        .ok_or_else(|| TlsError::Pem {
            source: source.clone(),
            problem: "the encrypted private key section does not end".to_owned(),
        })?;
    let (_, document) = Document::from_pem(section).map_err(|error| TlsError::Pem {
        source: source.clone(),
        problem: error.to_string(),
    })?;
    let info = EncryptedPrivateKeyInfo::try_from(document.as_bytes())
        .map_err(|error| unsupported(&error))?;
    match info.decrypt(password) {
        Ok(key) => Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            key.as_bytes().to_vec(),
        ))),
        Err(pkcs8::Error::EncryptedPrivateKey(
            error @ (pkcs5::Error::UnsupportedAlgorithm { .. }
            | pkcs5::Error::NoPbes1CryptSupport
            | pkcs5::Error::AlgorithmParametersInvalid { .. }),
        )) => Err(unsupported(&error)),
        // A bad padding, or (rarely) a good one around bytes that are not a key.
        Err(error) => Err(TlsError::KeyPassword {
            source: source.clone(),
            problem: error.to_string(),
        }),
    }
}
