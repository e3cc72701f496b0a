//! Over-TCP tests of the vesper server, scripted as the legacy Dimemas client
//! (`shared/spec/protocol.md`).
//!
//! Every expected time comes from the default crossbar's closed form
//! ([`vesper_tests::zero_load_ns`]: S × 4 ns + 2 × 25 ns + 100 ns) or, under
//! contention, from the output-queued model worked out by hand in the test.

mod bad_input;
mod determinism;
mod eager;
mod flood;
mod ideal;
mod lifecycle;
mod maps;
mod multi_client;
mod presets;
mod random;
mod rendezvous;
mod replay;
mod reply_limit;
mod runs;
mod sync;
