//! The simulated Dynamixel bus (`tests/python/dynamixel_bus.py`) for the
//! integration tests: the process, its control channel and log, and a
//! serial port open on it at 1 Mbaud. `mod dynamixel_sim;` in each test.
#![allow(dead_code)]

use arm_ik::servo::dynamixel::packet;
use arm_ik::servo::dynamixel::{Register, StatusPacket, StatusReader};
use serialport::SerialPort;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// Numbers the simulators' logs within one test process.
static NEXT_LOG: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// True when python3 runs; otherwise SKIP, or fail under CI.
pub fn have_python() -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "CI is set but python3 does not run: the Dynamixel bus tests need it"
        );
        println!("SKIP: python3 not found (the simulated Dynamixel bus needs it)");
    }
    ok
}

/// One simulator and a port open on it; the simulator is killed when
/// dropped.
pub struct Bus {
    /// The simulator's JSON-lines log (removed when dropped).
    pub log: PathBuf,
    pub child: Child,
    pub control: ChildStdin,
    pub answers: BufReader<ChildStdout>,
    pub port: Box<dyn SerialPort>,
    pub reader: StatusReader,
}

impl Bus {
    pub fn start(args: &[&str]) -> Bus {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let script = root.join("tests/python/dynamixel_bus.py");
        let log = std::env::temp_dir().join(format!(
            "arm_ik_dxl_{}_{}.jsonl",
            std::process::id(),
            NEXT_LOG.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&log);
        let mut child = Command::new("python3")
            .arg(script)
            .arg("--log")
            .arg(&log)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start dynamixel_bus.py");
        let control = child.stdin.take().unwrap();
        let mut answers = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        answers.read_line(&mut line).unwrap();
        let pty = line
            .strip_prefix("PTY ")
            .unwrap_or_else(|| panic!("dynamixel_bus.py printed {line:?}, not PTY <path>"))
            .trim()
            .to_string();
        let port = serialport::new(&pty, 1_000_000)
            .timeout(Duration::from_millis(5))
            .open()
            .expect("open the simulated bus");
        Bus {
            log,
            child,
            control,
            answers,
            port,
            reader: StatusReader::new(),
        }
    }

    /// Every line the simulator logged so far.
    pub fn events(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Sends a control-channel command; the simulator's answer.
    pub fn control(&mut self, cmd: serde_json::Value) -> serde_json::Value {
        writeln!(self.control, "{cmd}").unwrap();
        let mut line = String::new();
        self.answers.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    /// Sends `packet`, then collects up to `n` status packets for at most
    /// `timeout`, counting decoding errors (there must be none).
    pub fn transact(
        &mut self,
        packet: &[u8],
        n: usize,
        timeout: Duration,
    ) -> (Vec<StatusPacket>, usize) {
        self.port.write_all(packet).unwrap();
        let end = Instant::now() + timeout;
        let (mut got, mut bad) = (Vec::new(), 0);
        let mut buf = [0u8; 256];
        while got.len() < n && Instant::now() < end {
            match self.port.read(&mut buf) {
                Ok(k) => self.reader.push(&buf[..k]),
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(e) => panic!("reading the bus: {e}"),
            }
            while let Some(r) = self.reader.next_status() {
                match r {
                    Ok(s) => got.push(s),
                    Err(_) => bad += 1,
                }
            }
        }
        (got, bad)
    }

    /// One reply (from `id`), which must come.
    pub fn ask(&mut self, packet: Result<Vec<u8>, packet::EncodeError>, id: u8) -> StatusPacket {
        let (mut got, _) = self.transact(&packet.unwrap(), 1, Duration::from_millis(300));
        assert_eq!(got.len(), 1, "servo {id} did not answer");
        let s = got.remove(0);
        assert_eq!(s.id, id);
        s
    }

    pub fn read(&mut self, id: u8, r: Register) -> (i64, StatusPacket) {
        let s = self.ask(packet::read_register(id, r), id);
        (r.decode(s.data(r.size.into()).unwrap()).unwrap(), s)
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
