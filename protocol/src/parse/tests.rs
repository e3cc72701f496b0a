use super::*;

fn token(text: &str) -> Token {
    Token::new(text).expect("test token")
}

#[test]
fn reads_the_real_clients_send() {
    let line = "SEND 1234.5670000000000072759576141834259033203125 0 1 7 1024 0x55a873d62cc0 0x55a873d62c60 0 1 0 0";
    let expected = ClientMessage::Send(DataMessage {
        time: WireTime(1234.567),
        src: 0,
        dst: 1,
        tag: Some(7),
        size: 1024,
        ev: token("0x55a873d62cc0"),
        ev_out: token("0x55a873d62c60"),
        src_repeat: 0,
        dst_repeat: 1,
        src_app: 0,
        dst_app: 0,
    });
    assert_eq!(parse_client_line(line), Ok(expected));
}

#[test]
fn reads_the_older_tagless_send() {
    let line = "SEND 6500 3 2 64 0x1 (nil) 3 2 1 1";
    let Ok(ClientMessage::Send(m)) = parse_client_line(line) else {
        panic!("tagless SEND not read");
    };
    assert_eq!(
        (m.tag, m.size, m.ev, m.ev_out, m.src_app),
        (None, 64, token("0x1"), Token::NIL, 1)
    );
    assert_eq!(ClientMessage::Send(m).to_string(), line);
}

#[test]
fn reads_exponent_forms_and_tolerates_carriage_returns() {
    assert_eq!(
        parse_client_line("STOP 5.0000000000000002396e-05\r"),
        Ok(ClientMessage::Stop(WireTime(5e-5)))
    );
    assert_eq!(
        parse_client_line("STOP 2.52e17"),
        Ok(ClientMessage::Stop(WireTime(2.52e17)))
    );
    assert_eq!(parse_client_line("STOP 1E9 "), Ok(ClientMessage::Stop(WireTime(1e9))));
    assert_eq!(parse_client_line("END"), Ok(ClientMessage::End));
    assert_eq!(parse_client_line("FINISH\r"), Ok(ClientMessage::Finish));
}

#[test]
fn reads_both_proto_lines() {
    let request = parse_client_line("PROTO OK_TO_SEND 6500 0 1 7 1048576 0 0");
    assert_eq!(
        request,
        Ok(ClientMessage::OkToSend(RendezvousRequest {
            time: WireTime(6500.0),
            src: 0,
            dst: 1,
            tag: 7,
            size: 1_048_576,
            src_app: 0,
            dst_app: 0,
        }))
    );
    let ready = "PROTO READY_TO_RECV 7000 0 1 7 1048576 0x5601d1d34740 0x5601d1d398f0 0 1 0 0";
    assert!(matches!(parse_client_line(ready), Ok(ClientMessage::ReadyToRecv(m)) if m.size == 1_048_576));
}

#[test]
fn reads_completions_with_and_without_physical_send_time() {
    let with = "COMPLETED SEND 8524 0 1 1024 0x55a873d62cc0 0x55a873d62c60 0 1 6500";
    let Ok(ServerMessage::Completed(c)) = parse_server_line(with) else {
        panic!("completion not read");
    };
    assert_eq!((c.time, c.phys_send_time), (WireTime(8524.0), Some(WireTime(6500.0))));
    assert_eq!(ServerMessage::Completed(c).to_string(), with);
    let without = "COMPLETED SEND 8524 0 1 1024 0x55a873d62cc0 0x55a873d62c60 0 1";
    assert!(matches!(parse_server_line(without), Ok(ServerMessage::Completed(c)) if c.phys_send_time.is_none()));
    assert_eq!(parse_server_line("END"), Ok(ServerMessage::End));
}

fn error_of(line: &str) -> (usize, Expected, String) {
    let e = parse_client_line(line).expect_err("line should be rejected");
    (e.column, e.expected, e.found)
}

#[test]
fn errors_name_the_column_and_what_was_expected() {
    assert_eq!(error_of("HELLO"), (1, Expected::ClientVerb, "HELLO".into()));
    assert_eq!(error_of(""), (1, Expected::ClientVerb, "end of line".into()));
    assert_eq!(error_of("STOP"), (5, Expected::Blank, "end of line".into()));
    assert_eq!(error_of("STOP -5"), (6, Expected::Time, "-5".into()));
    assert_eq!(error_of("STOP nan"), (6, Expected::Time, "nan".into()));
    assert_eq!(error_of("STOP inf"), (6, Expected::Time, "inf".into()));
    assert_eq!(error_of("STOP 1e999"), (6, Expected::Time, "1e999".into()));
    assert_eq!(error_of("STOP 5 6"), (8, Expected::EndOfLine, "6".into()));
    assert_eq!(error_of("ENDX"), (1, Expected::ClientVerb, "ENDX".into()));
    assert_eq!(error_of("PROTO HELLO 1"), (7, Expected::ProtoKind, "HELLO".into()));
    assert_eq!(
        error_of("SEND 1 0 1 7 -4 0x1 0x2 0 1 0 0"),
        (14, Expected::Size, "-4".into())
    );
    assert_eq!(
        error_of("SEND 1 0 1 7 2147483648 0x1 0x2 0 1 0 0"),
        (14, Expected::Size, "2147483648".into())
    );
    assert_eq!(
        error_of("SEND 1 0 x 7 4 0x1 0x2 0 1 0 0"),
        (10, Expected::NodeId, "x".into())
    );
    assert_eq!(
        error_of("SEND 1 0 1 7 4 0x1 zz 0 1 0 0"),
        (20, Expected::Token, "zz".into())
    );
    assert_eq!(
        error_of("SEND 1 0 1 7 4 0x1 0x2 0 1 0"),
        (29, Expected::Blank, "end of line".into())
    );
}

#[test]
fn error_messages_read_well() {
    let e = parse_client_line("STOP soon").expect_err("rejected");
    assert_eq!(
        e.to_string(),
        "column 6: expected a finite non-negative time in nanoseconds, found \"soon\""
    );
}

#[test]
fn found_text_is_cut_on_a_character_boundary() {
    let line = format!("STOP {}", "é".repeat(40));
    let e = parse_client_line(&line).expect_err("rejected");
    assert!(e.found.len() <= 40);
}

mod roundtrip {
    use super::*;
    use proptest::prelude::*;

    fn wire_time() -> impl Strategy<Value = WireTime> {
        prop_oneof![
            (0u64..1 << 53).prop_map(|ps| WireTime(ps as f64 / 1000.0)),
            (0.0f64..3e17).prop_map(WireTime),
            (1e-12f64..1e-3).prop_map(WireTime),
        ]
    }

    fn any_token() -> impl Strategy<Value = Token> {
        prop_oneof![
            Just(Token::NIL),
            any::<u64>().prop_map(|p| Token::new(&format!("{p:#x}")).expect("hex token")),
            any::<u32>().prop_map(|p| Token::new(&format!("0X{p:X}")).expect("upper-case token")),
        ]
    }

    prop_compose! {
        fn data_message()(
            time in wire_time(), src in any::<u32>(), dst in any::<u32>(),
            tag in proptest::option::of(any::<i32>()), size in 0..=i32::MAX as u32,
            ev in any_token(), ev_out in any_token(),
            src_repeat in any::<u32>(), dst_repeat in any::<u32>(),
            src_app in any::<u32>(), dst_app in any::<u32>(),
        ) -> DataMessage {
            DataMessage { time, src, dst, tag, size, ev, ev_out, src_repeat, dst_repeat, src_app, dst_app }
        }
    }

    prop_compose! {
        fn rendezvous_request()(
            time in wire_time(), src in any::<u32>(), dst in any::<u32>(), tag in any::<i32>(),
            size in 0..=i32::MAX as u32, src_app in any::<u32>(), dst_app in any::<u32>(),
        ) -> RendezvousRequest {
            RendezvousRequest { time, src, dst, tag, size, src_app, dst_app }
        }
    }

    prop_compose! {
        fn completion()(
            time in wire_time(), src in any::<u32>(), dst in any::<u32>(),
            size in 0..=i32::MAX as u32, ev in any_token(), ev_out in any_token(),
            src_repeat in any::<u32>(), dst_repeat in any::<u32>(),
            phys_send_time in proptest::option::of(wire_time()),
        ) -> Completion {
            Completion { time, src, dst, size, ev, ev_out, src_repeat, dst_repeat, phys_send_time }
        }
    }

    fn client_message() -> impl Strategy<Value = ClientMessage> {
        prop_oneof![
            data_message().prop_map(ClientMessage::Send),
            rendezvous_request().prop_map(ClientMessage::OkToSend),
            data_message().prop_map(ClientMessage::ReadyToRecv),
            wire_time().prop_map(ClientMessage::Stop),
            Just(ClientMessage::End),
            Just(ClientMessage::Finish),
        ]
    }

    fn server_message() -> impl Strategy<Value = ServerMessage> {
        prop_oneof![
            completion().prop_map(ServerMessage::Completed),
            Just(ServerMessage::End)
        ]
    }

    proptest! {
        #[test]
        fn client_messages_round_trip(m in client_message()) {
            prop_assert_eq!(parse_client_line(&m.to_string()), Ok(m));
        }

        #[test]
        fn server_messages_round_trip(m in server_message()) {
            prop_assert_eq!(parse_server_line(&m.to_string()), Ok(m));
        }

        #[test]
        fn full_precision_times_read_as_the_same_double(t in wire_time()) {
            // What the C client's `%.100lg` prints for a double is its exact decimal value.
            let exact = format!("{:.100}", t.0);
            let exact = exact.trim_end_matches('0').trim_end_matches('.');
            let line = format!("STOP {exact}");
            prop_assert_eq!(parse_client_line(&line), Ok(ClientMessage::Stop(t)));
        }

        #[test]
        fn arbitrary_bytes_never_break_the_parser(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            check_parser_invariants(&data);
        }

        #[test]
        fn mutated_lines_never_break_the_parser(
            m in client_message(), cut in any::<prop::sample::Index>(), junk in "[ -~]{0,6}"
        ) {
            let mut line = m.to_string();
            let at = cut.index(line.len() + 1);
            line.insert_str(at, &junk);
            check_parser_invariants(line.as_bytes());
        }
    }
}
