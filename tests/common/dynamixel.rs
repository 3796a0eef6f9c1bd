//! The simulated Dynamixel bus (`tests/python/dynamixel_bus.py`) with a
//! serial port open on it at 1 Mbaud, for the tests of the codec itself:
//! packets written and status packets decoded here, by arm_ik's own
//! reader, never by Python.

use super::TempDir;
use super::bus_sim::Sim;
use arm_ik::servo::bus::StatusStream;
use arm_ik::servo::dynamixel::packet;
use arm_ik::servo::dynamixel::{Register, StatusPacket, StatusReader};
use serialport::SerialPort;
use std::time::{Duration, Instant};

/// The Koch v1.1 follower's bus for `dynamixel_bus.py` (ids 1..6, its
/// default): XL430-W250 on ids 1 and 2, XL330-M288 on the others, as
/// config/servos_koch.yaml names them, and the gripper (id 6) in
/// current-based position mode, as LeRobot sets it.
pub const KOCH_BUS: &[&str] = &[
    "--model",
    "1:xl430-w250",
    "--model",
    "2:xl430-w250",
    "--mode",
    "6:5",
];

/// How long a test waits for replies that must come: a deadline, not a
/// pause ([`Bus::transact`] returns once they are in), long enough for a
/// loaded machine that does not schedule the Python simulator for a while.
pub const REPLY_WAIT: Duration = Duration::from_secs(2);

/// One simulator and a port open on it; the simulator is killed when
/// dropped.
pub struct Bus {
    pub sim: Sim,
    pub port: Box<dyn SerialPort>,
    pub reader: StatusReader,
    _dir: TempDir,
}

impl Bus {
    pub fn start(args: &[&str]) -> Bus {
        let dir = TempDir::new("dxl");
        let sim = Sim::start("dynamixel_bus.py", &dir.path().join("log.jsonl"), args);
        let port = serialport::new(&sim.pty, 1_000_000)
            .timeout(Duration::from_millis(5))
            .open()
            .expect("open the simulated bus");
        Bus {
            sim,
            port,
            reader: StatusReader::new(),
            _dir: dir,
        }
    }

    /// Every line the simulator logged so far.
    pub fn events(&self) -> Vec<serde_json::Value> {
        self.sim.events()
    }

    /// Sends a control-channel command; the simulator's answer.
    pub fn control(&mut self, cmd: serde_json::Value) -> serde_json::Value {
        self.sim.control(cmd)
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

    /// One reply (from `id`), which must come (within [`REPLY_WAIT`]).
    pub fn ask(&mut self, packet: Result<Vec<u8>, packet::EncodeError>, id: u8) -> StatusPacket {
        let (mut got, _) = self.transact(&packet.unwrap(), 1, REPLY_WAIT);
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
