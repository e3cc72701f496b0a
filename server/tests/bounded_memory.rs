//! No valid input exhausts memory (issue 42): messages of 2 GiB that all wait for one
//! host's link cost the server a few records each, not one per packet.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::Command;

/// The address space the server gets [KiB]: about 210 MB of it is reserved at start
/// (threads' stacks and allocator arenas); before the queues kept runs, the nine
/// messages below queued about 4 M packet records (some 200 MB) and the server aborted.
const ADDRESS_SPACE_KIB: u32 = 400 * 1024;

#[test]
fn an_incast_of_2_gib_messages_fits_in_a_small_address_space() {
    let mut command = Command::new("sh");
    command.args([
        "-c",
        &format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\""),
        env!("CARGO_BIN_EXE_vesper"),
    ]);
    let (mut server, addr, lines) = common::listening(command, &["serve", "--listen", "127.0.0.1:0", "--spin-us", "0"]);
    std::thread::spawn(move || for _ in lines {});
    let mut stream = TcpStream::connect(addr).expect("connects");
    let senders = 9u32;
    let mut batch = String::new();
    for src in 1..=senders {
        batch += &format!("SEND 0 {src} 0 7 2147483647 0x{src:x} 0x{src:x} {src} 0 0 0\n");
    }
    batch += "STOP 2.52e17\nEND\n";
    stream.write_all(batch.as_bytes()).expect("sends");
    let mut replies = BufReader::new(stream.try_clone().expect("clones"));
    let mut completed = Vec::new();
    while completed.len() < senders as usize {
        let mut line = String::new();
        let n = replies.read_line(&mut line).expect("reads");
        assert!(
            n > 0,
            "the server closed the connection after {} completions",
            completed.len()
        );
        if line.starts_with("COMPLETED SEND") {
            completed.push(line);
        } else if line.starts_with("END") && completed.len() < senders as usize {
            stream.write_all(b"STOP 2.52e17\nEND\n").expect("sends");
        }
    }
    stream.write_all(b"FINISH\n").expect("sends");
    drop(stream);
    let status = common::wait_up_to(&mut server, 120);
    assert!(status.success(), "{status:?}");
    // The link to host 0 carried every packet back to back: the last arrives after
    // 9 × 2 GiB and their headers at 250 MB/s.
    let last: f64 = completed
        .iter()
        .map(|l| {
            l.split_whitespace()
                .nth(2)
                .expect("a time")
                .parse::<f64>()
                .expect("a number")
        })
        .fold(0.0, f64::max);
    let packets = 2_147_483_647u64.div_ceil(4096);
    let wire_ns = (9 * (2_147_483_647 + packets * 16)) as f64 * 4.0;
    assert!(last > wire_ns && last < wire_ns + 1e6, "{last} against {wire_ns}");
}
