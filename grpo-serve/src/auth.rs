//! Optional access control: a bearer token every route but the health checks requires.
//!
//! Without a token the service answers anyone who can reach it, which is why `grpo serve`
//! listens on loopback by default. With one (`grpo serve --auth-token-file FILE` or the
//! `GRPO_AUTH_TOKEN` environment variable), a request must carry
//! `Authorization: Bearer <token>`; any other request is answered 401 before its body is
//! read. `/healthz`, `/readyz` and the OpenEnv environments' `/health` stay open, so probes
//! need no secret.

use std::path::Path;

use subtle::ConstantTimeEq;

/// Routes that answer without a token: the liveness and readiness probes, and the OpenEnv
/// environments' health checks.
pub const OPEN_ROUTES: [&str; 4] = [
    "/healthz",
    "/readyz",
    "/openenv/python/health",
    "/openenv/tasks/health",
];

/// The secret a request must present. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthToken(Vec<u8>);

impl std::fmt::Debug for AuthToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuthToken(<redacted>)")
    }
}

/// Why a token could not be taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthTokenError {
    /// The token file could not be read.
    #[error("reading the token file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The token is empty, or has characters a header value cannot carry.
    #[error("{origin}: {reason}")]
    Invalid {
        /// Where the token came from (a file's path, or the environment variable).
        origin: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl AuthToken {
    /// A token from its text. The text must be non-empty printable ASCII without spaces
    /// (what an HTTP header value and a copy-paste carry unchanged).
    pub fn new(token: &str, origin: &str) -> Result<AuthToken, AuthTokenError> {
        let invalid = |reason| AuthTokenError::Invalid {
            origin: origin.to_owned(),
            reason,
        };
        if token.is_empty() {
            return Err(invalid("the token is empty"));
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(invalid(
                "the token must be printable ASCII without spaces or control characters",
            ));
        }
        Ok(AuthToken(token.as_bytes().to_vec()))
    }

    /// The token in `path`: the file holds the token and a newline (one trailing `\n` or
    /// `\r\n` is dropped; nothing else is trimmed).
    pub fn from_file(path: &Path) -> Result<AuthToken, AuthTokenError> {
        let text = std::fs::read_to_string(path).map_err(|source| AuthTokenError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let token = text
            .strip_suffix("\r\n")
            .or_else(|| text.strip_suffix('\n'))
            .unwrap_or(&text);
        AuthToken::new(token, &path.display().to_string())
    }

    /// Whether an `Authorization` header value presents this token. The scheme is matched
    /// without regard to case (RFC 7235); the token is compared in constant time.
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some(value) = authorization else {
            return false;
        };
        let Some((scheme, presented)) = value.split_at_checked(7) else {
            return false;
        };
        if !scheme.eq_ignore_ascii_case(b"Bearer ") {
            return false;
        }
        // `ct_eq` on slices of different lengths is false without looking at the bytes;
        // the length of the token is not a secret worth hiding.
        bool::from(presented.ct_eq(&self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_under_the_bearer_scheme_is_admitted() {
        let token = AuthToken::new("s3cret-token", "test").unwrap();
        assert!(token.admits(Some(b"Bearer s3cret-token")));
        assert!(token.admits(Some(b"bearer s3cret-token")));
        for refused in [
            &b""[..],
            b"Bearer",
            b"Bearer ",
            b"Bearer s3cret-toke",
            b"Bearer s3cret-token ",
            b"Bearer s3cret-tokenX",
            b"Basic s3cret-token",
            b"s3cret-token",
            b"Bearer  s3cret-token",
        ] {
            assert!(
                !token.admits(Some(refused)),
                "{:?}",
                String::from_utf8_lossy(refused)
            );
        }
        assert!(!token.admits(None));
    }

    #[test]
    fn token_files_hold_the_token_and_a_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        for (text, expected) in [("abc\n", "abc"), ("abc\r\n", "abc"), ("abc", "abc")] {
            std::fs::write(&path, text).unwrap();
            assert_eq!(
                AuthToken::from_file(&path).unwrap(),
                AuthToken::new(expected, "x").unwrap()
            );
        }
        for bad in ["\n", "", "two words\n", "abc\n\n", "tab\there\n"] {
            std::fs::write(&path, bad).unwrap();
            let err = AuthToken::from_file(&path).unwrap_err();
            assert!(err.to_string().contains("token"), "{bad:?}: {err}");
        }
        let err = AuthToken::from_file(&dir.path().join("absent")).unwrap_err();
        assert!(err.to_string().contains("absent"), "{err}");
        assert_eq!(
            format!("{:?}", AuthToken::new("abc", "x").unwrap()),
            "AuthToken(<redacted>)"
        );
    }
}
