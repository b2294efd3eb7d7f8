//! Private keys encrypted with a password: PKCS#8 `ENCRYPTED PRIVATE KEY` (PBES2 with PBKDF2 or
//! scrypt and AES-CBC), what `openssl genpkey -aes256` and `openssl pkcs8 -topk8` write.

use super::error::{PemSource, TlsError};
use pkcs8::der::Document;
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
    let failed = |problem: String| TlsError::KeyPassword {
        source: source.clone(),
        problem,
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
        .map_err(|error| failed(error.to_string()))?;
    let key = info
        .decrypt(password)
        .map_err(|error| failed(error.to_string()))?;
    Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        key.as_bytes().to_vec(),
    )))
}
