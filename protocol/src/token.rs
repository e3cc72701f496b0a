//! Opaque event tokens (`ev`, `ev_out`).
//!
//! The client prints two pointers with `%p` in every data message and dereferences them
//! when they come back in `COMPLETED SEND`, so the server must echo them byte for byte.
//! glibc prints `0x55b00077b680` or `(nil)`. Bare hex digits (what some other C
//! libraries print) are refused: they would make the older, tag-less `SEND` layout
//! ambiguous with the current one. A token is kept inline (no allocation per message)
//! and is `Copy`.

use std::fmt;

/// Longest token accepted: `0x` and 16 hex digits, a 64-bit pointer.
const MAX_TOKEN: usize = 18;

/// An opaque pointer token, echoed exactly as received.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Token {
    len: u8,
    bytes: [u8; MAX_TOKEN],
}

/// Why a string is not a valid token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected a pointer token (`0x` and 1 to 16 hex digits, or `(nil)`)")]
pub struct TokenError;

impl Token {
    /// The null pointer as glibc prints it.
    pub const NIL: Token = Token {
        len: 5,
        bytes: *b"(nil)\0\0\0\0\0\0\0\0\0\0\0\0\0",
    };

    /// Accepts `(nil)`, or `0x` (or `0X`) followed by 1 to 16 hex digits.
    pub fn new(text: &str) -> Result<Token, TokenError> {
        if text == "(nil)" {
            return Ok(Token::NIL);
        }
        let Some(digits) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) else {
            return Err(TokenError);
        };
        if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(TokenError);
        }
        let mut bytes = [0u8; MAX_TOKEN];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Ok(Token {
            len: text.len() as u8,
            bytes,
        })
    }

    /// The token exactly as it was received.
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored (checked in `new`), so this cannot fail.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("(nil)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token({})", self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_forms_c_libraries_print() {
        for text in ["0x55b00077b680", "(nil)", "0XDEADBEEF", "0x0", "0xffffffffffffffff"] {
            assert_eq!(Token::new(text).map(|t| t.to_string()), Ok(text.to_string()));
        }
    }

    #[test]
    fn rejects_what_is_not_a_pointer() {
        for text in [
            "",
            "0x",
            "nil",
            "0x12345678901234567",
            "0xg1",
            "(NIL)",
            "-0x1",
            "7fffdeadbeef",
        ] {
            assert_eq!(Token::new(text), Err(TokenError), "{text:?}");
        }
    }
}
