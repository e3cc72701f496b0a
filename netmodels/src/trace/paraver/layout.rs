//! The trace's tasks and threads ([`Layout`]): which ports are traced, under which
//! ids and names, and each switch's level (its distance in cables from a host).

use std::fmt::Write as _;

use super::error::TraceError;
use crate::builder::NetworkBuilder;
use crate::ids::{Device, HostId, SwitchId};
use crate::topology::Topology;
use crate::trace::PortRef;
use crate::trace::select::DeviceSelection;

pub(super) const NONE: u32 = u32::MAX;

/// The tasks and threads: which ports are traced and under which ids.
#[derive(Debug)]
pub struct Layout {
    /// per task: name and threads
    pub(super) tasks: Vec<(String, u32)>,
    /// per thread: 1-based task and 1-based thread within it, and its name
    pub(super) threads: Vec<(u32, u32, String)>,
    /// per rail, per host: its port's thread (`NONE`: not traced)
    pub(super) host_thread: Vec<Vec<u32>>,
    /// per rail, per switch: its port 0's thread (`NONE`: not traced)
    pub(super) switch_thread: Vec<Vec<u32>>,
    /// per rail: the range of its threads
    pub(super) rail_threads: Vec<(u32, u32)>,
}

impl Layout {
    /// The layout of `rails` (one builder per rail), keeping the devices `selection`
    /// names.
    pub fn new(rails: &[NetworkBuilder], selection: &DeviceSelection) -> Result<Layout, TraceError> {
        let mut layout = Layout {
            tasks: Vec::new(),
            threads: Vec::new(),
            host_thread: Vec::new(),
            switch_thread: Vec::new(),
            rail_threads: Vec::new(),
        };
        let multi = rails.len() > 1;
        for (r, rail) in rails.iter().enumerate() {
            let first = layout.threads.len() as u32;
            let switch_ports: &[u32] = rail.topology().map_or(&[], |t| &t.switch_ports);
            let switch_levels = rail.topology().map(switch_levels).unwrap_or_default();
            let mut devices: Vec<(Device, u32, Option<u32>)> = (0..rail.hosts())
                .map(|h| (Device::Host(HostId(h)), 1, Some(0)))
                .collect();
            devices.extend(switch_ports.iter().enumerate().map(|(s, &ports)| {
                let level = switch_levels.get(s).copied().flatten();
                (Device::Switch(SwitchId(s as u32)), ports, level)
            }));
            let mut hosts = vec![NONE; rail.hosts() as usize];
            let mut switches = vec![NONE; switch_ports.len()];
            for (device, ports, level) in devices {
                let plain = device.to_string();
                let qualified = multi.then(|| format!("r{r}.{plain}"));
                if ports == 0 || !selection.selects(&plain, qualified.as_deref(), level) {
                    continue;
                }
                let name = qualified.unwrap_or(plain);
                let task = layout.tasks.len() as u32 + 1;
                let base = layout.threads.len() as u32;
                for p in 0..ports {
                    layout.threads.push((task, p + 1, format!("{name}.p{p}")));
                }
                layout.tasks.push((name, ports));
                match device {
                    Device::Host(h) => hosts[h.index()] = base,
                    Device::Switch(s) => switches[s.index()] = base,
                }
            }
            layout.host_thread.push(hosts);
            layout.switch_thread.push(switches);
            layout.rail_threads.push((first, layout.threads.len() as u32));
        }
        if layout.tasks.is_empty() {
            let switches: usize = rails
                .iter()
                .map(|r| r.topology().map_or(0, |t| t.switch_ports.len()))
                .sum();
            return Err(TraceError::NoDevice {
                switches,
                multi_rail: multi,
            });
        }
        Ok(layout)
    }

    /// The thread of `port` on rail `rail`, if traced.
    pub(super) fn thread(&self, rail: usize, port: PortRef) -> Option<u32> {
        let base = match port.device {
            Device::Host(h) => *self.host_thread[rail].get(h.index())?,
            Device::Switch(s) => *self.switch_thread[rail].get(s.index())?,
        };
        (base != NONE).then(|| base + port.port)
    }

    /// Number of tasks.
    pub fn tasks(&self) -> u32 {
        self.tasks.len() as u32
    }

    /// Number of threads.
    pub fn threads(&self) -> u32 {
        self.threads.len() as u32
    }

    /// The `.row` file: task and thread names.
    pub fn row(&self) -> String {
        let mut row = format!("LEVEL TASK SIZE {}\n", self.tasks.len());
        for (name, _) in &self.tasks {
            row.push_str(name);
            row.push('\n');
        }
        let _ = writeln!(row, "\nLEVEL THREAD SIZE {}", self.threads.len());
        for (_, _, name) in &self.threads {
            row.push_str(name);
            row.push('\n');
        }
        row
    }

    /// The header: `#Paraver (date):end_ns:0:1:ntasks(nthreads:0,…)`.
    pub fn header(&self, date: &str, end_ns: u64) -> String {
        let tasks: Vec<String> = self.tasks.iter().map(|(_, n)| format!("{n}:0")).collect();
        format!(
            "#Paraver ({date}):{end_ns}_ns:0:1:{}({})",
            self.tasks.len(),
            tasks.join(",")
        )
    }
}

/// Each switch's distance in cables from the nearest host (`None`: no host reachable).
pub(super) fn switch_levels(topology: &Topology) -> Vec<Option<u32>> {
    let hosts = topology.hosts as usize;
    let index = |d: Device| match d {
        Device::Host(h) => h.index(),
        Device::Switch(s) => hosts + s.index(),
    };
    let n = hosts + topology.switch_ports.len();
    let mut neighbours = vec![Vec::new(); n];
    for c in &topology.cables {
        let (a, b) = (index(c.a.device), index(c.b.device));
        if a < n && b < n {
            neighbours[a].push(b);
            neighbours[b].push(a);
        }
    }
    let mut level: Vec<Option<u32>> = (0..n).map(|d| (d < hosts).then_some(0)).collect();
    let mut queue: std::collections::VecDeque<usize> = (0..hosts).collect();
    while let Some(d) = queue.pop_front() {
        let next = level[d].map(|l| l + 1);
        for &e in &neighbours[d] {
            if level[e].is_none() {
                level[e] = next;
                queue.push_back(e);
            }
        }
    }
    level.split_off(hosts)
}
