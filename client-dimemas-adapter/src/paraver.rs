//! The application-level Paraver trace of a replay (`shared/spec/formats.md` §1): one
//! Paraver task per MPI task (one thread each), MPI states over time, and one
//! communication record per message. It sits beside the network trace.

use std::io::{self, Write};

use crate::replay::{Activity, Call, Mapping, Outcome, Ps};

/// Paraver's event types of MPI point-to-point and collective calls (as Extrae's).
const MPI_POINT_TO_POINT: u32 = 50_000_001;
const MPI_COLLECTIVE: u32 = 50_000_002;

/// The event type and value of a call (the value 0 marks the call's end).
fn call_event(call: Call) -> (u32, u32) {
    match call {
        Call::Send => (MPI_POINT_TO_POINT, 1),
        Call::Recv => (MPI_POINT_TO_POINT, 2),
        Call::Isend => (MPI_POINT_TO_POINT, 3),
        Call::Irecv => (MPI_POINT_TO_POINT, 4),
        Call::Wait => (MPI_POINT_TO_POINT, 5),
        Call::Collective => (MPI_COLLECTIVE, 1),
    }
}

/// Paraver's state value for an activity.
fn state_value(activity: Activity) -> u32 {
    match activity {
        Activity::Running => 1,
        Activity::WaitingMessage => 3,
        Activity::BlockingSend => 4,
        Activity::Waiting => 8,
        Activity::Collective => 13,
    }
}

/// Where each program (thread) runs in Paraver's resource model: 1-based node and
/// global CPU, one CPU per thread.
struct Placement {
    /// CPUs of each node
    cpus: Vec<u32>,
    /// (node, cpu), 1-based, per program
    of: Vec<(u32, u32)>,
    /// (task, thread), 1-based, per program
    names: Vec<(u32, u32)>,
}

fn placement(threads: &[u32], mapping: &Mapping) -> Placement {
    let tasks = threads.len() as u32;
    let task_of = crate::replay::task_of_programs(threads);
    let nodes = mapping.nodes_for(tasks) as usize;
    let mut cpus = vec![0u32; nodes];
    let mut index = Vec::with_capacity(task_of.len());
    let mut names: Vec<(u32, u32)> = Vec::with_capacity(task_of.len());
    for (p, &t) in task_of.iter().enumerate() {
        let thread = if p > 0 && task_of[p - 1] == t {
            names[p - 1].1 + 1
        } else {
            1
        };
        names.push((t + 1, thread));
        let node = mapping.node_of(t) as usize;
        index.push((node, cpus[node]));
        cpus[node] += 1;
    }
    let mut first = Vec::with_capacity(nodes);
    let mut total = 0;
    for &n in &cpus {
        first.push(total);
        total += n;
    }
    let of = index
        .into_iter()
        .map(|(node, i)| (node as u32 + 1, first[node] + i + 1))
        .collect();
    Placement { cpus, of, names }
}

fn ns(ps: Ps) -> Ps {
    ps / 1000
}

/// Writes the `.prv`, `.pcf` and `.row` of `outcome` (replayed with `record`), tasks
/// placed by `mapping`; `date` is the header's `DD/MM/YYYY at HH:MM`.
pub fn write(
    outcome: &Outcome,
    mapping: &Mapping,
    date: &str,
    prv: &mut dyn Write,
    pcf: &mut dyn Write,
    row: &mut dyn Write,
) -> io::Result<()> {
    let Some(record) = &outcome.record else {
        return Err(io::Error::other("the replay kept no record (ReplayOptions::record)"));
    };
    let threads = if outcome.threads.is_empty() {
        vec![1; outcome.tasks.len()]
    } else {
        outcome.threads.clone()
    };
    let tasks = threads.len() as u32;
    let place = placement(&threads, mapping);
    let cpus: Vec<String> = place.cpus.iter().map(|c| c.max(&1).to_string()).collect();
    let threads: Vec<String> = (0..tasks)
        .map(|t| format!("{}:{}", threads[t as usize], mapping.node_of(t) + 1))
        .collect();
    writeln!(
        prv,
        "#Paraver ({date}):{}_ns:{}({}):1:{tasks}({})",
        outcome.predicted.div_ceil(1000),
        place.cpus.len(),
        cpus.join(","),
        threads.join(",")
    )?;
    // Sorted by time, then events before states before communications, then task,
    // then in the order recorded.
    let mut lines: Vec<(Ps, u8, u32, usize, String)> = Vec::new();
    let mut push = |time: Ps, kind: u8, task: u32, line: String| {
        let seq = lines.len();
        lines.push((time, kind, task, seq, line));
    };
    // A program as Paraver names it: cpu:appl:task:thread.
    let object = |p: u32| {
        let (task, thread) = place.names[p as usize];
        format!("{}:1:{task}:{thread}", place.of[p as usize].1)
    };
    for &(p, begin, end, call) in &record.calls {
        let (kind, value) = call_event(call);
        let event = |time: Ps, value: u32| format!("2:{}:{}:{kind}:{value}", object(p), ns(time));
        push(ns(begin), 0, p, event(begin, value));
        push(ns(end), 0, p, event(end, 0));
    }
    for &(p, begin, end, activity) in &record.states {
        let line = format!("1:{}:{}:{}:{}", object(p), ns(begin), ns(end), state_value(activity));
        push(ns(begin), 1, p, line);
    }
    for c in &record.communications {
        let line = format!(
            "3:{}:{}:{}:{}:{}:{}:{}:{}",
            object(c.from),
            ns(c.logical_send),
            ns(c.physical_send),
            object(c.to),
            ns(c.logical_recv),
            ns(c.physical_recv),
            c.size,
            c.tag
        );
        push(ns(c.logical_send), 2, c.from, line);
    }
    lines.sort();
    for (_, _, _, _, line) in &lines {
        writeln!(prv, "{line}")?;
    }
    write!(
        pcf,
        "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\nLOOK_BACK           100\n\
         SPEED               1\nFLAG_ICONS          ENABLED\nNUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\
         DEFAULT_SEMANTIC\n\nTHREAD_FUNC          State As Is\n\n\
         STATES\n0    Idle\n1    Running\n3    Waiting a message\n4    Blocking Send\n8    Wait/WaitAll\n\
         13    Group Communication\n\n\
         STATES_COLOR\n0    {{117,195,255}}\n1    {{0,0,255}}\n3    {{255,0,0}}\n4    {{255,0,174}}\n8    {{235,0,0}}\n\
         13    {{255,144,26}}\n\n\
         EVENT_TYPE\n0    {MPI_POINT_TO_POINT}    MPI Point-to-point\nVALUES\n0    End\n1    MPI_Send\n2    MPI_Recv\n\
         3    MPI_Isend\n4    MPI_Irecv\n5    MPI_Wait\n\n\
         EVENT_TYPE\n0    {MPI_COLLECTIVE}    MPI Collective Comm\nVALUES\n0    End\n1    Collective (analytic model)\n"
    )?;
    let total_cpus: u32 = place.cpus.iter().sum();
    writeln!(row, "LEVEL CPU SIZE {total_cpus}")?;
    for (node, &n) in place.cpus.iter().enumerate() {
        for cpu in 1..=n {
            writeln!(row, "CPU {cpu}.{}", node + 1)?;
        }
    }
    writeln!(row, "\nLEVEL NODE SIZE {}", place.cpus.len())?;
    for node in 1..=place.cpus.len() {
        writeln!(row, "node {node}")?;
    }
    writeln!(row, "\nLEVEL THREAD SIZE {}", place.names.len())?;
    for (task, thread) in &place.names {
        writeln!(row, "THREAD 1.{task}.{thread}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{IdealBus, ReplayOptions, Workload, replay_with};

    fn traced(workload: &Workload, options: &ReplayOptions) -> (String, String, String) {
        let options = ReplayOptions {
            record: true,
            ..options.clone()
        };
        // 1 byte per ns, 100 ns latency.
        let mut bus = IdealBus::new(1_000_000_000, 1, 100_000);
        let outcome = replay_with(workload, &mut bus, &options).expect("replayed");
        written(&outcome, &options)
    }

    /// The `.prv`, `.pcf` and `.row` of `outcome`.
    fn written(outcome: &Outcome, options: &ReplayOptions) -> (String, String, String) {
        let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
        write(
            outcome,
            &options.mapping,
            "01/01/2026 at 00:00",
            &mut prv,
            &mut pcf,
            &mut row,
        )
        .expect("written");
        let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8");
        (text(prv), text(pcf), text(row))
    }

    #[test]
    fn a_ping_pong_by_hand() {
        let (prv, pcf, row) = traced(&Workload::ping_pong(1000, 1), &ReplayOptions::default());
        // Task 0 sends at 0 (MPI_Send, 1, ends at once) and waits in MPI_Recv (2) for the
        // answer until 2200 ns; task 1 waits for the ping until 1100 ns, then answers.
        // Events come first at each time, then states, then communications.
        assert_eq!(
            prv,
            "#Paraver (01/01/2026 at 00:00):2200_ns:2(1,1):1:2(1:1,1:2)\n\
             2:1:1:1:1:0:50000001:1\n\
             2:1:1:1:1:0:50000001:0\n\
             2:1:1:1:1:0:50000001:2\n\
             2:2:1:2:1:0:50000001:2\n\
             1:1:1:1:1:0:2200:3\n\
             1:2:1:2:1:0:1100:3\n\
             3:1:1:1:1:0:0:2:1:2:1:0:1100:1000:0\n\
             2:2:1:2:1:1100:50000001:0\n\
             2:2:1:2:1:1100:50000001:1\n\
             2:2:1:2:1:1100:50000001:0\n\
             3:2:1:2:1:1100:1100:1:1:1:1:0:2200:1000:0\n\
             2:1:1:1:1:2200:50000001:0\n"
        );
        assert!(pcf.contains("EVENT_TYPE\n0    50000001    MPI Point-to-point\nVALUES\n0    End\n"));
        assert!(pcf.contains("STATES\n0    Idle\n1    Running\n3    Waiting a message\n"));
        assert!(row.starts_with("LEVEL CPU SIZE 2\nCPU 1.1\nCPU 1.2\n"));
        assert!(row.contains("LEVEL THREAD SIZE 2\nTHREAD 1.1.1\nTHREAD 1.2.1\n"));
    }

    #[test]
    fn threads_are_paraver_threads_of_their_task() {
        use crate::replay::{Cursor, Op, replay_programs};
        // Task 0's thread 0 sends 1000 bytes to task 1; its thread 1 computes 1 µs.
        let workload = Workload {
            name: "threads".into(),
            tasks: vec![
                vec![Op::Send {
                    to: 1,
                    size: 1000,
                    tag: 0,
                    synchronous: false,
                }],
                vec![Op::Compute(1_000_000)],
                vec![Op::Recv { from: 0, tag: 0 }],
            ],
        };
        let options = ReplayOptions {
            record: true,
            ..ReplayOptions::default()
        };
        let mut bus = IdealBus::new(1_000_000_000, 1, 100_000);
        let mut programs = Cursor::threaded(&workload, vec![2, 1]);
        let outcome = replay_programs(&mut programs, &mut bus, &options, &mut |_| {}).expect("replayed");
        let (prv, _, row) = written(&outcome, &options);
        assert!(
            prv.starts_with("#Paraver (01/01/2026 at 00:00):1100_ns:2(2,1):1:2(2:1,1:2)\n"),
            "{prv}"
        );
        // Thread 2 of task 1 on CPU 2 computes; the message goes from task 1's thread 1
        // (CPU 1) to task 2 (CPU 3).
        assert!(prv.contains("\n1:2:1:1:2:0:1000:1\n"), "{prv}");
        assert!(prv.contains("\n3:1:1:1:1:0:0:3:1:2:1:0:1100:1000:0\n"), "{prv}");
        assert!(
            row.contains("LEVEL THREAD SIZE 3\nTHREAD 1.1.1\nTHREAD 1.1.2\nTHREAD 1.2.1\n"),
            "{row}"
        );
    }

    #[test]
    fn analytic_collectives_are_group_communication() {
        use crate::replay::Op;
        use crate::replay::analytic::{AnalyticCollectives, FanModel, Link};
        // Task 1 computes 1 µs, then both take part in a barrier of CTE stages of 100 ns.
        let barrier = Op::Global {
            call: 0,
            members: 2,
            id: 0,
            is_root: false,
            sent: 0,
            received: 0,
        };
        let workload = Workload {
            name: "barrier".into(),
            tasks: vec![vec![barrier], vec![Op::Compute(1_000_000), barrier]],
        };
        let options = ReplayOptions {
            collectives: AnalyticCollectives {
                inter: Link {
                    latency: 100_000,
                    bandwidth: None,
                },
                ..AnalyticCollectives::uniform(FanModel::Constant)
            },
            ..ReplayOptions::default()
        };
        let (prv, pcf, _) = traced(&workload, &options);
        assert!(prv.contains("\n1:1:1:1:1:0:1200:13\n"), "{prv}");
        assert!(prv.contains("\n1:2:1:2:1:1000:1200:13\n"), "{prv}");
        assert!(prv.contains("\n2:2:1:2:1:1000:50000002:1\n"), "{prv}");
        assert!(prv.contains("\n2:2:1:2:1:1200:50000002:0\n"), "{prv}");
        assert!(pcf.contains("13    Group Communication\n"), "{pcf}");
        assert!(pcf.contains("50000002    MPI Collective Comm\n"), "{pcf}");
    }

    #[test]
    fn tasks_sharing_a_node_share_its_resources() {
        let options = ReplayOptions {
            mapping: Mapping::TasksPerNode(2),
            ..ReplayOptions::default()
        };
        let (prv, _, row) = traced(&Workload::ring(4, 10, 1, 500_000), &options);
        let header = prv.lines().next().expect("a header");
        assert!(header.ends_with(":2(2,2):1:4(1:1,1:1,1:2,1:2)"), "{header}");
        // Bursts are Running states on each task's own CPU.
        assert!(prv.contains("\n1:4:1:4:1:0:500:1\n"), "{prv}");
        assert!(row.starts_with("LEVEL CPU SIZE 4\nCPU 1.1\nCPU 2.1\nCPU 1.2\nCPU 2.2\n"));
        // Records in time order.
        let times: Vec<u64> = prv
            .lines()
            .skip(1)
            .map(|l| l.split(':').nth(5).expect("a time").parse().expect("a number"))
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{prv}");
    }
}
