//! The one place where the wire vocabulary (`vesper_protocol`) meets the model
//! vocabulary (`vesper_netmodels`).

use vesper_netmodels::{Delivery, SimTime, WireTimeError};
use vesper_protocol::{Completion, DataMessage, WireTime};

/// A time the client stamps on a message: nearest picosecond.
pub fn message_time(t: WireTime) -> Result<SimTime, WireTimeError> {
    SimTime::from_wire_ns(t.0)
}

/// A STOP time: nearest picosecond; anything beyond the model's last instant (the
/// client's "very large" STOP) means "until the next completion".
pub fn stop_time(t: WireTime) -> Result<SimTime, WireTimeError> {
    SimTime::from_wire_ns_saturating(t.0)
}

/// A time the server reports: the smallest double not earlier than the event.
pub fn wire_time(t: SimTime) -> WireTime {
    WireTime(t.to_wire_ns())
}

/// The `COMPLETED SEND` line for a delivered message: the request's fields echoed, the
/// node pair written twice (the client checks both), the arrival of the last byte and
/// the physical send time. The tag is not echoed: the client's reply parser has no
/// field for it.
pub fn completion(request: &DataMessage, delivery: &Delivery, reported_at: SimTime) -> Completion {
    Completion {
        time: wire_time(reported_at),
        src: request.src,
        dst: request.dst,
        size: request.size,
        ev: request.ev,
        ev_out: request.ev_out,
        src_repeat: request.src,
        dst_repeat: request.dst,
        phys_send_time: Some(wire_time(delivery.first_byte_sent)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vesper_netmodels::HostId;
    use vesper_protocol::Token;

    #[test]
    fn completion_echoes_the_request() {
        let ev = Token::new("0x55a873d62cc0").expect("token");
        let request = DataMessage {
            time: WireTime(6500.0),
            src: 0,
            dst: 1,
            tag: Some(7),
            size: 1024,
            ev,
            ev_out: Token::NIL,
            src_repeat: 0,
            dst_repeat: 1,
            src_app: 0,
            dst_app: 0,
        };
        let delivery = Delivery {
            cookie: 0,
            src: HostId(0),
            dst: HostId(1),
            size_bytes: 1024,
            injected_at: SimTime::from_ns(6500),
            first_byte_sent: SimTime::from_ns(6500),
            arrived: SimTime::from_ps(10_746_001),
        };
        let line = vesper_protocol::ServerMessage::Completed(completion(&request, &delivery, delivery.arrived));
        assert_eq!(
            line.to_string(),
            "COMPLETED SEND 10746.001 0 1 1024 0x55a873d62cc0 (nil) 0 1 6500"
        );
    }

    #[test]
    fn huge_stops_mean_until_the_next_completion() {
        assert_eq!(stop_time(WireTime(2.52e17)), Ok(SimTime::MAX));
        assert!(message_time(WireTime(2.52e17)).is_err());
        assert_eq!(stop_time(WireTime(2.52e13)), Ok(SimTime::from_ns(25_200_000_000_000)));
    }
}
