//! The [`Ranks`] transport over MPI (feature `mpi`): one process per partition, started
//! by `mpirun`, talking through MPI's collectives on the world communicator.
//!
//! MPI is initialised with `MPI_THREAD_SERIALIZED`: calls may come from any thread (a
//! sweep point runs on a worker thread), never two at once, which the SPMD program
//! guarantees (every collective is a call of the one simulation's driver, in turn).

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::{Count, Threading};

use super::ranks::{Ranks, Reduce};

/// The world of an MPI run: every rank of `mpirun -np N`. It names the world
/// communicator anew for each call (a constant handle), so it holds no MPI object and may
/// move between threads; MPI's own state lives in the [`Universe`] that
/// [`MpiRanks::init`] returns beside it, which must outlive every call.
#[derive(Debug)]
pub struct MpiRanks {
    rank: u32,
    size: u32,
}

/// Why MPI could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MpiError {
    /// MPI_Init_thread failed, or MPI was initialised before
    #[error("MPI could not be initialised (or was initialised twice)")]
    Init,
    /// the library cannot let several threads call it in turn
    #[error(
        "this MPI library gives thread support {given:?}, and vesper needs MPI_THREAD_SERIALIZED (calls from any thread, one at a time)"
    )]
    Threading {
        /// what the library gave
        given: String,
    },
}

impl MpiRanks {
    /// Initialises MPI (once per process) and returns the world's ranks, with the
    /// universe to keep until they are done: MPI is finalised when it is dropped.
    pub fn init() -> Result<(Universe, MpiRanks), MpiError> {
        let (universe, given) = mpi::initialize_with_threading(Threading::Serialized).ok_or(MpiError::Init)?;
        if given < Threading::Serialized {
            return Err(MpiError::Threading {
                given: format!("{given:?}"),
            });
        }
        let world = universe.world();
        let ranks = MpiRanks {
            rank: world.rank() as u32,
            size: world.size() as u32,
        };
        Ok((universe, ranks))
    }

    /// Whether this process was started by `mpirun` (or another MPI launcher), from the
    /// environment the launchers set, without initialising anything.
    pub fn launched() -> bool {
        ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
            .iter()
            .any(|v| std::env::var_os(v).is_some())
    }
}

/// Displacements of consecutive blocks of `counts`.
fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}

/// A buffer of `len` bytes and one more. An empty buffer's address in Rust is 1, which
/// Open MPI reads as `MPI_IN_PLACE`; one spare byte gives every buffer a real address.
fn padded(len: usize) -> Vec<u8> {
    vec![0u8; len + 1]
}

/// Splits `buf` into blocks of `counts`.
fn blocks(buf: &[u8], counts: &[Count]) -> Vec<Vec<u8>> {
    let mut at = 0usize;
    counts
        .iter()
        .map(|&c| {
            let block = buf[at..at + c as usize].to_vec();
            at += c as usize;
            block
        })
        .collect()
}

impl Ranks for MpiRanks {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn all_reduce(&self, values: &mut [u64], op: Reduce) {
        let send = values.to_vec();
        let op = match op {
            Reduce::Min => SystemOperation::min(),
            Reduce::Max => SystemOperation::max(),
            Reduce::Sum => SystemOperation::sum(),
        };
        SimpleCommunicator::world().all_reduce_into(&send[..], values, op);
    }

    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let mine = bytes.len() as Count;
        let mut counts = vec![0 as Count; self.size as usize];
        SimpleCommunicator::world().all_gather_into(&mine, &mut counts[..]);
        let displs = displacements(&counts);
        let mut buf = padded(counts.iter().map(|&c| c as usize).sum());
        let send = [bytes, &[0]].concat();
        {
            let mut partition = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            SimpleCommunicator::world().all_gather_varcount_into(&send[..bytes.len()], &mut partition);
        }
        blocks(&buf, &counts)
    }

    fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8> {
        let world = SimpleCommunicator::world();
        let root = world.process_at_rank(0);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = padded(len as usize);
        if self.rank == 0 {
            buf[..bytes.len()].copy_from_slice(&bytes);
        }
        root.broadcast_into(&mut buf[..]);
        buf.truncate(len as usize);
        buf
    }

    fn exchange(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let send_counts: Vec<Count> = out.iter().map(|b| b.len() as Count).collect();
        let mut recv_counts = vec![0 as Count; self.size as usize];
        SimpleCommunicator::world().all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let mut send: Vec<u8> = out.concat();
        send.push(0);
        let send_displs = displacements(&send_counts);
        let recv_displs = displacements(&recv_counts);
        let mut buf = padded(recv_counts.iter().map(|&c| c as usize).sum());
        {
            let partition = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
            let mut received = PartitionMut::new(&mut buf[..], &recv_counts[..], &recv_displs[..]);
            SimpleCommunicator::world().all_to_all_varcount_into(&partition, &mut received);
        }
        blocks(&buf, &recv_counts)
    }
}
