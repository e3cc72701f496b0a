//! Feeds arbitrary bytes to the line parsers: no panic, and every accepted line prints
//! back to a line that parses to the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    vesper_protocol::check_parser_invariants(data);
});
