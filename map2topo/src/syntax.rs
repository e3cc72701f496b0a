//! What the line grammars of map files and InfiniBand dumps share: the error carried
//! through nom (where a rule failed, what it expected), and its report with a column.

use nom::IResult;

/// The `Expected` enums of the grammars: what a rule wanted, including the end of the
/// line (what a failure without a rule of its own expected).
pub(crate) trait Expectation: Copy {
    /// the end of the line
    const END_OF_LINE: Self;
}

/// The error carried through nom: where it failed and what was expected.
#[derive(Debug, PartialEq)]
pub(crate) struct RuleError<'a, E> {
    pub(crate) at: &'a str,
    pub(crate) expected: E,
}

impl<'a, E: Expectation> nom::error::ParseError<&'a str> for RuleError<'a, E> {
    fn from_error_kind(input: &'a str, _kind: nom::error::ErrorKind) -> Self {
        RuleError {
            at: input,
            expected: E::END_OF_LINE,
        }
    }

    fn append(_input: &'a str, _kind: nom::error::ErrorKind, other: Self) -> Self {
        other
    }
}

/// A rule's result.
pub(crate) type Res<'a, T, E> = IResult<&'a str, T, RuleError<'a, E>>;

/// A rule fails at `at`, expecting `expected`.
pub(crate) fn fail<T, E>(at: &str, expected: E) -> Res<'_, T, E> {
    Err(nom::Err::Error(RuleError { at, expected }))
}

/// Where a line broke the grammar (the line number is added by the caller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError<E> {
    /// 1-based column (in bytes)
    pub(crate) column: usize,
    /// what the grammar wanted there
    pub(crate) expected: E,
    /// the text found there, at most 40 bytes, or `end of line`
    pub(crate) found: String,
}

/// The value of a whole line, or where it broke the grammar.
pub(crate) fn finish<T, E: Expectation>(line: &str, result: Res<'_, T, E>) -> Result<T, SyntaxError<E>> {
    match result {
        Ok((_, value)) => Ok(value),
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => Err(SyntaxError {
            column: line.len() - e.at.len() + 1,
            expected: e.expected,
            found: found(e.at),
        }),
        Err(nom::Err::Incomplete(_)) => Err(SyntaxError {
            column: line.len() + 1,
            expected: E::END_OF_LINE,
            found: "end of line".to_string(),
        }),
    }
}

/// The text at a failure, cut to at most 40 bytes (on a character boundary).
pub(crate) fn found(at: &str) -> String {
    let at = at.trim_end_matches('\r');
    if at.is_empty() {
        return "end of line".to_string();
    }
    let mut end = at.len().min(40);
    while !at.is_char_boundary(end) {
        end -= 1;
    }
    at[..end].to_string()
}
