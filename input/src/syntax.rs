//! What the line grammars of vesper's files and wire share, written with nom: the error
//! carried through a parse (where a rule failed, what it expected), its report with a
//! column, and the rules every grammar has (blanks, fields, numbers, the line's end).
//!
//! A grammar names what its rules may expect in its own `Expected` enum, makes it an
//! [`Expectation`], writes its rules as functions returning [`Res`], and parses a whole
//! line with `all_consuming` and [`finish`]. The rules here are generic and small: each
//! grammar gets its own copy, inlined as if written in it.

use nom::IResult;
use nom::bytes::complete::{take_till1, take_while, take_while1};

/// The `Expected` enums of the grammars: what a rule wanted, including the two things
/// every grammar expects somewhere.
pub trait Expectation: Copy {
    /// the end of the line (also what a failure without a rule of its own expected)
    const END_OF_LINE: Self;
    /// blanks between two fields
    const BLANK: Self;
}

/// The error carried through nom: where it failed and what was expected.
#[derive(Debug, PartialEq)]
pub struct RuleError<'a, E> {
    /// the text left where the rule failed
    pub at: &'a str,
    /// what the rule wanted there
    pub expected: E,
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

    fn or(self, other: Self) -> Self {
        // Report the alternative that got further into the line.
        if other.at.len() < self.at.len() { other } else { self }
    }
}

/// A rule's result.
pub type Res<'a, T, E> = IResult<&'a str, T, RuleError<'a, E>>;

/// A rule fails at `at`, expecting `expected`.
pub fn fail<T, E>(at: &str, expected: E) -> Res<'_, T, E> {
    Err(nom::Err::Error(RuleError { at, expected }))
}

/// Where a line broke the grammar (a file's reader adds the line number).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: expected {expected}, found {found:?}")]
pub struct SyntaxError<E> {
    /// 1-based column (in bytes) where the failure was found
    pub column: usize,
    /// what the grammar wanted there
    pub expected: E,
    /// the text found there (the rest of the line for files, the field for the wire),
    /// cut to at most 40 bytes, or `end of line`
    pub found: String,
}

/// The value of a whole line, or where it broke the grammar, showing the rest of the
/// line there. (The wire parser shows the field instead, with its own `finish`: sharing
/// this one cost its valid lines 0.3% more instructions.)
pub fn finish<T, E: Expectation>(line: &str, result: Res<'_, T, E>) -> Result<T, SyntaxError<E>> {
    match result {
        Ok((_, value)) => Ok(value),
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => Err(SyntaxError {
            column: line.len() - e.at.len() + 1,
            expected: e.expected,
            found: shown(e.at.trim_end_matches('\r')),
        }),
        Err(nom::Err::Incomplete(_)) => Err(SyntaxError {
            column: line.len() + 1,
            expected: E::END_OF_LINE,
            found: "end of line".to_string(),
        }),
    }
}

/// The text at a failure, cut to at most 40 bytes (on a character boundary), or `end of
/// line`.
pub fn shown(text: &str) -> String {
    if text.is_empty() {
        return "end of line".to_string();
    }
    let mut end = text.len().min(40);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

// blank = (" " | "\t")+
/// Blanks between two fields.
pub fn blank<E: Expectation>(i: &str) -> Res<'_, (), E> {
    match take_while1::<_, _, RuleError<'_, E>>(is_blank)(i) {
        Ok((rest, _)) => Ok((rest, ())),
        Err(_) => fail(i, E::BLANK),
    }
}

// field = (any character but blank or "\r")+
/// A field: the text up to the next blank, `\r` or the end of the line; not empty.
pub fn field<E: Expectation>(i: &str, expected: E) -> Res<'_, &str, E> {
    match take_till1::<_, _, RuleError<'_, E>>(|c| is_blank(c) || c == '\r')(i) {
        Ok(ok) => Ok(ok),
        Err(_) => fail(i, expected),
    }
}

// unsigned = ("0" … "9")+     ; 0 ..= 4294967295
/// A field of decimal digits, as an unsigned 32-bit number.
pub fn unsigned<E: Expectation>(i: &str, expected: E) -> Res<'_, u32, E> {
    let (rest, text) = field(i, expected)?;
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return fail(i, expected);
    }
    match text.parse::<u32>() {
        Ok(value) => Ok((rest, value)),
        Err(_) => fail(i, expected),
    }
}

// line_end = (blank | "\r")* end
/// The end of the line, after any blanks and `\r`.
pub fn line_end<E: Expectation>(i: &str) -> Res<'_, (), E> {
    let (i, _) = take_while(|c| is_blank(c) || c == '\r')(i)?;
    if !i.is_empty() {
        return fail(i, E::END_OF_LINE);
    }
    Ok((i, ()))
}

/// Whether `c` is a blank: a space or a tab.
#[inline]
pub fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

#[cfg(test)]
mod tests {
    use nom::combinator::all_consuming;
    use nom::sequence::preceded;

    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Expected {
        Number,
        Blank,
        EndOfLine,
    }

    impl Expectation for Expected {
        const END_OF_LINE: Self = Expected::EndOfLine;
        const BLANK: Self = Expected::Blank;
    }

    impl std::fmt::Display for Expected {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(match self {
                Expected::Number => "a number",
                Expected::Blank => "a blank",
                Expected::EndOfLine => "the end of the line",
            })
        }
    }

    // two = unsigned blank unsigned line_end
    fn two(i: &str) -> Res<'_, (u32, u32), Expected> {
        let (i, a) = unsigned(i, Expected::Number)?;
        let (i, b) = preceded(blank, |i| unsigned(i, Expected::Number))(i)?;
        let (i, ()) = line_end(i)?;
        Ok((i, (a, b)))
    }

    fn parse(line: &str) -> Result<(u32, u32), SyntaxError<Expected>> {
        finish(line, all_consuming(two)(line))
    }

    #[test]
    fn lines_are_read_with_trailing_blanks_and_carriage_returns() {
        assert_eq!(parse("1\t 4294967295 \r"), Ok((1, u32::MAX)));
    }

    #[test]
    fn failures_name_the_column_what_was_expected_and_what_was_found() {
        let error = parse("1 x2 y\r").expect_err("refused");
        assert_eq!(error.to_string(), "column 3: expected a number, found \"x2 y\"");
        let error = parse("1").expect_err("refused");
        assert_eq!(error.to_string(), "column 2: expected a blank, found \"end of line\"");
        let error = parse("1 2 3").expect_err("refused");
        assert_eq!(
            (error.column, error.expected, error.found.as_str()),
            (5, Expected::EndOfLine, "3")
        );
        assert_eq!(shown(""), "end of line");
        assert_eq!(parse("1 2 3 \r").map_err(|e| e.found), Err("3 ".to_string()));
        let error = parse("1 4294967296").expect_err("refused");
        assert_eq!((error.column, error.expected), (3, Expected::Number));
    }

    #[test]
    fn what_was_found_is_cut_to_40_bytes_on_a_character_boundary() {
        let long = format!("1 {}", "é".repeat(30));
        let error = parse(&long).expect_err("refused");
        assert_eq!(error.found, "é".repeat(20));
    }
}
