//! Helpers shared by the integration tests (`mod common;` in each file).
//!
//! Not every test file uses every helper.
#![allow(dead_code)]

#[cfg(feature = "app")]
pub mod bus_sim;
#[cfg(feature = "app")]
pub mod drive;
#[cfg(feature = "app")]
pub mod dynamixel;
#[cfg(feature = "app")]
pub mod feetech;
#[cfg(feature = "app")]
pub mod firmware;
#[cfg(feature = "app")]
pub mod measuring;
#[cfg(feature = "app")]
pub mod pulses;

#[cfg(feature = "app")]
use arm_ik::ik::{Common, SolverConfig, SolverKind};
use arm_ik::model::Chain;
#[cfg(feature = "app")]
use arm_ik::node::{JointState, MemoryNode, NodeConfig, NodeCore, TargetMsg};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The crate root (where `urdf/` lives).
pub fn project_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A project robot, e.g. `project_urdf("arm.urdf")`.
pub fn project_urdf(name: &str) -> PathBuf {
    project_dir().join("urdf").join(name)
}

/// The shared conformance data: `$ARM_IK_SHARED`, else `<manifest>/../shared`.
///
/// When it is missing, CI (env `CI` set and non-empty) fails loudly, because
/// CI must run the conformance tests; a developer's clone just skips them.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("ARM_IK_SHARED") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => project_dir().join("..").join("shared"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    if in_ci {
        panic!(
            "conformance data not found at {} (CI is set, so the shared robots are required; \
             set ARM_IK_SHARED to the directory holding robots/*.urdf)",
            dir.display()
        );
    }
    eprintln!("SKIP: ../shared not found (conformance tests need it)");
    None
}

/// A robot description from the PyPI package example-robot-data that
/// `scripts/python-env` installs in `.venv` (its share folder,
/// `cmeel.prefix/share/example-robot-data/robots/<rel>`). `None` when the
/// venv is not there, except in CI (env `CI` set and non-empty), where it is
/// required and its absence fails loudly.
pub fn example_robot_data(rel: &str) -> Option<PathBuf> {
    let found = std::fs::read_dir(project_dir().join(".venv/lib"))
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            e.path()
                .join("site-packages/cmeel.prefix/share/example-robot-data/robots")
                .join(rel)
        })
        .find(|p| p.is_file());
    if found.is_none() {
        if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
            panic!(
                "example-robot-data's {rel} not found in .venv (CI is set, so it is required; run scripts/python-env)"
            );
        }
        eprintln!("SKIP: no .venv with example-robot-data (run scripts/python-env)");
    }
    found
}

/// A shared robot file, e.g. `shared_urdf("panda.urdf")`; None when the
/// shared data is absent (see [`shared_dir`]).
pub fn shared_urdf(name: &str) -> Option<PathBuf> {
    shared_dir().map(|d| d.join("robots").join(name))
}

/// The library's deterministic generator (SplitMix64), so failures
/// reproduce exactly.
pub use arm_ik::ik::Rng as TestRng;

/// A random configuration within the joint limits; continuous joints in
/// `[-pi, pi]`.
pub fn random_q(chain: &Chain, rng: &mut TestRng) -> Vec<f64> {
    chain
        .joints
        .iter()
        .map(|j| {
            let (lo, hi) = j.sample_range();
            rng.range(lo, hi)
        })
        .collect()
}

/// The chains the conformance tests cut from the shared robots:
/// (file under `robots/`, base link, tip link, DOF).
pub const SHARED_CHAINS: &[(&str, &str, &str, usize)] = &[
    ("ur5_robot.urdf", "base_link", "tool0", 6),
    ("panda.urdf", "panda_link0", "panda_hand", 7),
    ("so101.urdf", "base_link", "gripper_frame_link", 5),
    ("solo12.urdf", "base_link", "FL_FOOT", 3),
    ("solo12.urdf", "base_link", "FR_FOOT", 3),
    ("solo12.urdf", "base_link", "HL_FOOT", 3),
    ("solo12.urdf", "base_link", "HR_FOOT", 3),
];

/// Every chain worth testing kinematics on: the project robots, the messy
/// fixture, and the shared robots when present. (path, base, tip).
pub fn all_chains() -> Vec<(PathBuf, Option<&'static str>, Option<&'static str>)> {
    let mut out = vec![
        (project_urdf("arm.urdf"), None, None),
        (project_urdf("leg.urdf"), None, None),
        (
            project_dir().join("tests/data/messy.urdf"),
            None,
            Some("tool_tip"),
        ),
    ];
    if let Some(dir) = shared_dir() {
        for &(file, base, tip, _) in SHARED_CHAINS {
            out.push((dir.join("robots").join(file), Some(base), Some(tip)));
        }
    }
    out
}

/// Runs the `arm_ik` binary of this build from the project folder.
#[cfg(feature = "app")]
pub fn arm_ik(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_arm_ik"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run arm_ik")
}

/// `arm_ik ARGS` started in `dir` with every stream piped.
pub fn spawn_arm_ik(args: &[&str], dir: &std::path::Path) -> std::process::Child {
    use std::process::Stdio;
    std::process::Command::new(env!("CARGO_BIN_EXE_arm_ik"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run arm_ik")
}

/// Sends `signal` (`INT`, `TERM`) to a child.
pub fn signal(child: &std::process::Child, signal: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// `arm_ik ARGS` in `dir` with `input` on its stdin, to its end.
pub fn arm_ik_with_stdin(
    args: &[&str],
    input: &str,
    dir: &std::path::Path,
) -> std::process::Output {
    use std::io::Write;
    let mut child = spawn_arm_ik(args, dir);
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    // A writer thread: a large input must not fill the pipe while the
    // child writes its own output.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// The tip pose at `q` as a full pose target.
pub fn pose_of(chain: &Chain, q: &[f64]) -> arm_ik::ik::Target {
    let tip = chain.fk(q);
    arm_ik::ik::Target::pose(
        tip.translation.vector,
        nalgebra::UnitQuaternion::from_rotation_matrix(&tip.rotation),
    )
}

/// The tip position at `q` as a position-only target.
pub fn position_of(chain: &Chain, q: &[f64]) -> arm_ik::ik::Target {
    arm_ik::ik::Target::position(chain.fk(q).translation.vector)
}

/// The clock the accuracy tests count solve budgets on: the solving
/// thread's CPU time (`--budget-clock cpu`). On a loaded machine a solve
/// can be preempted for longer than its whole budget; counted on wall time
/// it then gives a best-effort answer and an accuracy test fails for a
/// reason that has nothing to do with accuracy. On this clock the budget
/// is spent only while the solve computes, so the outcome is the same on a
/// quiet and a busy machine (timing goals live in the benchmarks).
pub fn cpu_clock() -> arm_ik::ik::Clock {
    #[cfg(feature = "app")]
    return arm_ik::bench::clock(arm_ik::ik::BudgetClock::Cpu);
    #[cfg(not(feature = "app"))]
    return lib_only::cpu_clock();
}

/// Without the `app` feature the library has no thread CPU clock (it
/// builds on nalgebra, urdf-rs and thiserror alone); the tests read it
/// themselves through libc, a dev-dependency.
#[cfg(not(feature = "app"))]
mod lib_only {
    use arm_ik::ik::Clock;

    #[cfg(unix)]
    pub fn cpu_clock() -> Clock {
        Clock::Own(|| {
            let mut t = std::mem::MaybeUninit::<libc::timespec>::zeroed();
            // SAFETY: the call writes the timespec it is given; the clock
            // id is one every POSIX system with thread CPU clocks has.
            let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, t.as_mut_ptr()) };
            assert_eq!(rc, 0, "no thread CPU clock");
            // SAFETY: written by the successful call above.
            let t = unsafe { t.assume_init() };
            std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
        })
    }

    /// No thread CPU clock to read: wall time.
    #[cfg(not(unix))]
    pub fn cpu_clock() -> Clock {
        Clock::Wall
    }
}

/// A temporary folder, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(what: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "arm_ik-{what}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary folder");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// A `TempDir` is used where a path is: `dir.join(..)`, `&dir` as `&Path`.
impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// True when python3 runs (the simulated servo buses need it); otherwise
/// SKIP, or fail when the environment variable `CI` is set.
pub fn have_python() -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "CI is set but python3 does not run: the simulated servo bus tests need it"
        );
        println!("SKIP: python3 not found (the simulated servo buses need it)");
    }
    ok
}

/// The venv's python (`.venv`, made by `scripts/python-env`, or
/// `ARM_IK_PYTHON`) when it imports `module`; else None (SKIP), or a
/// failure when the environment variable `CI` is set.
pub fn venv_python(module: &str) -> Option<PathBuf> {
    let p = match std::env::var_os("ARM_IK_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => project_dir().join(".venv/bin/python"),
    };
    let ok = p.is_file()
        && Command::new(&p)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success());
    if ok {
        return Some(p);
    }
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!(
            "{} with {module} not found (CI is set, so the tests that need it are required; run scripts/python-env)",
            p.display()
        );
    }
    eprintln!(
        "SKIP: no python with {module} at {} (run scripts/python-env)",
        p.display()
    );
    None
}

/// A servo file of `config/`, as written.
pub fn project_config(name: &str) -> String {
    std::fs::read_to_string(project_dir().join("config").join(name)).unwrap()
}

/// A project servo file without its gripper entry: the arm's joints only,
/// whether or not the URDF has a gripper joint.
pub fn arm_only(text: &str) -> String {
    text.lines()
        .filter(|l| !l.contains("joint: gripper,"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// urdf/arm.urdf with its gripper jaw: the revolute joint `gripper` (0 =
/// closed .. 1.2 rad open) off the chain, as the project's servo files
/// expect; added here when the file does not have it yet. The chain ends
/// at `tool`.
pub fn arm_with_gripper() -> Chain {
    let text = std::fs::read_to_string(project_urdf("arm.urdf")).unwrap();
    let text = if text.contains(r#"<joint name="gripper""#) {
        text
    } else {
        text.replace(
            "</robot>",
            r#"<joint name="gripper" type="revolute">
    <parent link="gripper"/>
    <child link="jaw"/>
    <origin xyz="0.02 0 0.03" rpy="0 0 0"/>
    <axis xyz="0 1 0"/>
    <limit lower="0" upper="1.2" effort="0.2" velocity="4"/>
  </joint>
  <link name="jaw"/>
</robot>"#,
        )
    };
    let chain = Chain::from_urdf_str(&text, None, Some("tool")).unwrap();
    assert!(
        chain.extras.iter().any(|e| e.name == "gripper"),
        "no gripper joint off the chain"
    );
    chain
}

/// The project arm's node on virtual servos with the Jacobian solver and
/// `config`, not yet ticked; and its period.
#[cfg(feature = "app")]
fn arm_node(config: NodeConfig) -> (MemoryNode, f64) {
    let chain = Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).unwrap();
    let dt = 1.0 / config.rate_hz;
    let core = NodeCore::with_virtual_servos(
        &chain,
        SolverConfig::default_for(SolverKind::Jacobian),
        Common::default(),
        config,
    )
    .unwrap();
    (MemoryNode::new(core), dt)
}

/// The project arm's node as it starts on virtual servos, one tick in:
/// every joint at zero, the arm straight up (the stretched elbow is
/// singular: the tip cannot move along the arm to first order). Returns
/// the node and its period.
#[cfg(feature = "app")]
pub fn start_pose_arm_node() -> (MemoryNode, f64) {
    let (mut node, dt) = arm_node(NodeConfig::default());
    node.tick(0.0);
    assert!(node.core().motion().position().iter().all(|&q| q == 0.0));
    (node, dt)
}

/// The project arm's node at the default rate, after 6 s holding the tip
/// at (0.15, 0, 0.15) m, in front of the arm with room all around (the
/// jog and marker tests start there). Returns the node, its period and
/// the next tick's number.
#[cfg(feature = "app")]
pub fn ready_arm_node() -> (MemoryNode, f64, u64) {
    ready_arm_node_with(NodeConfig::default())
}

/// [`ready_arm_node`] with `config` (e.g. the collision check off).
#[cfg(feature = "app")]
pub fn ready_arm_node_with(config: NodeConfig) -> (MemoryNode, f64, u64) {
    let (mut node, dt) = arm_node(config);
    node.push_target(TargetMsg::position([0.15, 0.0, 0.15]));
    let ticks = 300;
    for k in 0..ticks {
        node.tick(k as f64 * dt);
    }
    assert!(node.core().motion().is_settled());
    node.drain_joint_states();
    // What it said at start (the collision model) is logged by now.
    while node.core_mut().take_notice().is_some() {}
    (node, dt, ticks)
}

/// Ticks a node driving real (simulated) servos every 20 ms until `done`
/// says its latest joint state (and the node) are where the test wants
/// them, for at most `deadline`: a fixed number of seconds could end
/// before a loaded machine had scheduled the simulator enough. The last
/// joint state (`None`: none at all), for the caller to check.
#[cfg(feature = "app")]
pub fn tick_until(
    node: &mut MemoryNode<arm_ik::servo::output::Output>,
    deadline: std::time::Duration,
    mut done: impl FnMut(&MemoryNode<arm_ik::servo::output::Output>, &JointState) -> bool,
) -> Option<JointState> {
    let start = std::time::Instant::now();
    let (mut k, mut last) = (0u32, None);
    while start.elapsed() < deadline {
        node.tick(f64::from(k) * 0.02);
        k += 1;
        if let Some(js) = node.drain_joint_states().pop() {
            let finished = done(node, &js);
            last = Some(js);
            if finished {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    last
}

/// The state of the node's servo link (`sim: false`). Its `connects`
/// says whether the hardware was found once and never lost, which a
/// snapshot of the state cannot: it may catch a stall of the simulator.
#[cfg(feature = "app")]
pub fn link_status(
    node: &MemoryNode<arm_ik::servo::output::Output>,
) -> arm_ik::servo::link::LinkStatus {
    let arm_ik::servo::output::Output::Serial(servo) = node.core().servo() else {
        panic!("sim: false drives the servo link, not virtual servos");
    };
    servo.status()
}

/// Every consecutive pair of joint states keeps the velocity, acceleration
/// and position limits (velocities from the positions and stamps, as a
/// servo sees them).
#[cfg(feature = "app")]
pub fn assert_limits_kept(
    node: &MemoryNode<impl arm_ik::servo::ServoOutput>,
    states: &[JointState],
) {
    let limits = node.core().motion().limits().to_vec();
    let mut prev_v: Option<Vec<f64>> = None;
    for (k, w) in states.windows(2).enumerate() {
        let dt = w[1].stamp - w[0].stamp;
        assert!(dt > 0.0);
        let v: Vec<f64> = (0..limits.len())
            .map(|i| (w[1].position[i] - w[0].position[i]) / dt)
            .collect();
        for (i, l) in limits.iter().enumerate() {
            let q = w[1].position[i];
            assert!(
                q.is_finite() && l.lower <= q && q <= l.upper,
                "state {k}: joint {i} at {q} outside [{}, {}]",
                l.lower,
                l.upper
            );
            assert!(
                v[i].abs() <= l.velocity * (1.0 + 1e-9),
                "state {k}: joint {i} speed {} > {}",
                v[i],
                l.velocity
            );
            if let Some(pv) = &prev_v {
                let a = (v[i] - pv[i]) / dt;
                assert!(
                    a.abs() <= l.acceleration * (1.0 + 1e-6),
                    "state {k}: joint {i} acceleration {a} > {}",
                    l.acceleration
                );
            }
        }
        prev_v = Some(v);
    }
}
