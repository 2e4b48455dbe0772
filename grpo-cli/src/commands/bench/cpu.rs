//! CPU time a target spends, read before and after each level: a process tree's (`--pid`:
//! the process and its descendants, with the children they reaped) or a cgroup's
//! (`--cgroup`: `cpu.stat`'s `usage_usec` in cgroup v2, `cpuacct.usage` in v1).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Where a target's CPU time is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuSource {
    /// A process and every live descendant: their own CPU time and that of the children
    /// they reaped (so a program that ran and exited between two readings is counted).
    Pid(u32),
    /// A cgroup directory (cgroup v2 `cpu.stat`, or v1 `cpuacct.usage`).
    Cgroup(PathBuf),
}

impl CpuSource {
    /// Parses `--pid` (a process id) or `--cgroup` (a directory) for one target; `none` or
    /// `-` means no reading.
    pub fn parse(field: &str, text: &str) -> anyhow::Result<Option<CpuSource>> {
        let text = text.trim();
        if text.is_empty() || text == "-" || text.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        match field {
            "--pid" => {
                let pid: u32 = text
                    .parse()
                    .with_context(|| format!("{field} {text:?}: expected a process id or none"))?;
                Ok(Some(CpuSource::Pid(pid)))
            }
            _ => Ok(Some(CpuSource::Cgroup(PathBuf::from(text)))),
        }
    }

    /// What the report names as the source.
    pub fn describe(&self) -> String {
        match self {
            CpuSource::Pid(pid) => format!("process tree of pid {pid}"),
            CpuSource::Cgroup(dir) => format!("cgroup {}", dir.display()),
        }
    }

    /// The CPU seconds spent so far.
    pub fn seconds(&self) -> anyhow::Result<f64> {
        match self {
            CpuSource::Pid(pid) => tree_seconds(Path::new("/proc"), *pid),
            CpuSource::Cgroup(dir) => cgroup_seconds(dir),
        }
    }
}

/// The fields of `/proc/<pid>/stat` this needs: the parent, and CPU ticks of the process
/// (utime + stime) and of its reaped children (cutime + cstime).
fn stat_of(text: &str) -> Option<(u32, u64)> {
    // The command name (field 2) may hold spaces and parentheses: fields resume after the
    // last `)`.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state): ppid is field 4, utime..cstime fields 14..17.
    let ppid = fields.get(1)?.parse().ok()?;
    let ticks = fields
        .get(11..15)?
        .iter()
        .map(|f| f.parse::<u64>().ok())
        .sum::<Option<u64>>()?;
    Some((ppid, ticks))
}

/// The CPU seconds of `root` and its live descendants (with their reaped children), from
/// `proc` (normally `/proc`).
fn tree_seconds(proc: &Path, root: u32) -> anyhow::Result<f64> {
    let mut parent = BTreeMap::new();
    let mut ticks = BTreeMap::new();
    for entry in std::fs::read_dir(proc).with_context(|| format!("reading {}", proc.display()))? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        // A process may exit between the listing and the read: it is simply not counted.
        let Ok(text) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some((ppid, t)) = stat_of(&text) {
            parent.insert(pid, ppid);
            ticks.insert(pid, t);
        }
    }
    anyhow::ensure!(
        ticks.contains_key(&root),
        "--pid {root}: no such process on this machine"
    );
    let in_tree = |mut pid: u32| {
        for _ in 0..4096 {
            if pid == root {
                return true;
            }
            match parent.get(&pid) {
                Some(&p) if p != pid && p != 0 => pid = p,
                _ => return false,
            }
        }
        false
    };
    let total: u64 = ticks
        .iter()
        .filter(|(pid, _)| in_tree(**pid))
        .map(|(_, t)| t)
        .sum();
    Ok(total as f64 / clock_ticks_per_second())
}

/// `sysconf(_SC_CLK_TCK)`: 100 on every Linux this runs on (it is fixed by the kernel's
/// USER_HZ, which `/proc` reports in).
fn clock_ticks_per_second() -> f64 {
    100.0
}

/// A cgroup's CPU seconds: v2 `cpu.stat` `usage_usec`, else v1 `cpuacct.usage` (ns).
fn cgroup_seconds(dir: &Path) -> anyhow::Result<f64> {
    if let Ok(stat) = std::fs::read_to_string(dir.join("cpu.stat")) {
        for line in stat.lines() {
            if let Some(usec) = line.strip_prefix("usage_usec ") {
                let usec: u64 = usec.trim().parse().with_context(|| {
                    format!("--cgroup {}: cpu.stat usage_usec {usec:?}", dir.display())
                })?;
                return Ok(usec as f64 / 1e6);
            }
        }
    }
    let path = dir.join("cpuacct.usage");
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "--cgroup {}: neither cpu.stat (usage_usec) nor cpuacct.usage is readable",
            dir.display()
        )
    })?;
    let ns: u64 = text
        .trim()
        .parse()
        .with_context(|| format!("--cgroup {}: cpuacct.usage {text:?}", dir.display()))?;
    Ok(ns as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names() {
        let line = "42 (a) b (c)) S 7 42 42 0 -1 4194560 100 0 0 0 150 25 3 2 20 0 1 0";
        assert_eq!(stat_of(line), Some((7, 150 + 25 + 3 + 2)));
        assert_eq!(stat_of("garbage"), None);
    }

    #[test]
    fn a_process_tree_counts_its_children_and_not_its_neighbours() {
        let proc = tempfile::tempdir().unwrap();
        for (pid, ppid, utime) in [(10, 1, 100), (11, 10, 50), (12, 11, 25), (20, 1, 1000)] {
            let dir = proc.path().join(pid.to_string());
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(
                dir.join("stat"),
                format!("{pid} (x) S {ppid} 0 0 0 0 0 0 0 0 0 {utime} 0 0 0 20 0 1 0"),
            )
            .unwrap();
        }
        assert_eq!(tree_seconds(proc.path(), 10).unwrap(), 1.75);
        assert_eq!(tree_seconds(proc.path(), 20).unwrap(), 10.0);
        assert!(tree_seconds(proc.path(), 99).is_err());
    }

    #[test]
    fn this_process_spends_cpu_time() {
        let me = CpuSource::Pid(std::process::id());
        let before = me.seconds().unwrap();
        let mut x = 0u64;
        let started = std::time::Instant::now();
        while started.elapsed().as_millis() < 100 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        assert!(me.seconds().unwrap() > before);
    }

    #[test]
    fn cgroup_files_of_both_versions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cpuacct.usage"), "2500000000\n").unwrap();
        assert_eq!(cgroup_seconds(dir.path()).unwrap(), 2.5);
        std::fs::write(
            dir.path().join("cpu.stat"),
            "usage_usec 1500000\nuser_usec 1\n",
        )
        .unwrap();
        assert_eq!(cgroup_seconds(dir.path()).unwrap(), 1.5);
        assert!(cgroup_seconds(&dir.path().join("missing")).is_err());
        assert_eq!(CpuSource::parse("--pid", "none").unwrap(), None);
        assert!(CpuSource::parse("--pid", "abc").is_err());
    }
}
