//! The Arduino firmware bridge (`firmware-bridge/`) running in simavr, for
//! tests that drive it from the host side.
//!
//! [`Harness::start`] builds the firmware (once per set of build flags, into
//! the test target's scratch folder, so the source tree's `build-out/` is
//! left alone) and runs `firmware-bridge/sim/run --realtime --pulses FILE`
//! in a temporary folder. The test talks to the firmware on
//! [`Harness::pty`] and reads the pulse widths the harness measured on the
//! pins, in simulated time ([`Harness::medians`], [`Harness::pulses`]).
//! Dropping the harness kills it.
//!
//! Without the AVR toolchain or simavr the start returns `None` after
//! printing SKIP, unless the environment variable `CI` is set: then it
//! panics, so CI cannot silently lose these tests.

pub use super::TempDir;
use super::project_dir;
use arm_ik::servo::pwm_bridge::{self, FirmwareStatus, FrameReader, cmd};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The firmware's servo channels.
pub const CHANNELS: usize = pwm_bridge::CHANNELS;

/// One pulse measured on a pin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pulse {
    pub ch: usize,
    pub width_us: f64,
    /// Simulated time of the falling edge (s).
    pub t_sim: f64,
}

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// What is missing to build and simulate the firmware, if anything.
fn missing_tools() -> Option<String> {
    let runs = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let mut missing = vec![];
    if !runs("avr-gcc", &["--version"]) {
        missing.push("avr-gcc (gcc-avr)");
    }
    if !Path::new("/usr/lib/avr/include/avr/io.h").exists() {
        missing.push("avr-libc");
    }
    if !Path::new("/usr/share/arduino/hardware/arduino/avr/cores/arduino/Arduino.h").exists() {
        missing.push("the Arduino core (arduino-core-avr)");
    }
    if !runs("cc", &["--version"]) {
        missing.push("a C compiler (gcc)");
    }
    if !runs("pkg-config", &["--exists", "simavr"]) {
        missing.push("simavr (simavr libsimavr-dev pkg-config)");
    }
    if !Path::new("/usr/include/libelf.h").exists() && !Path::new("/usr/include/gelf.h").exists() {
        missing.push("libelf-dev");
    }
    (!missing.is_empty()).then(|| missing.join(", "))
}

/// Builds the firmware with `defines` (extra `-D` flags, FIRMWARE_DEFINES)
/// and the simavr harness, once per process and set of flags. `None` when
/// the tools are missing (SKIP; a panic under CI).
pub fn firmware_elf(defines: &str) -> Option<PathBuf> {
    static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let built = built.get_or_insert_with(HashMap::new);
    if let Some(elf) = built.get(defines) {
        return Some(elf.clone());
    }
    if let Some(missing) = missing_tools() {
        assert!(
            !in_ci(),
            "CI is set but the firmware cannot be built or simulated: missing {missing} \
             (scripts/test installs the Debian packages gcc-avr avr-libc arduino-core-avr \
             simavr libsimavr-dev libelf-dev pkg-config)"
        );
        eprintln!("SKIP: firmware simulation needs {missing}");
        return None;
    }
    let tag: String = defines
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("firmware{tag}"));
    // Test processes running at once (two `cargo test` in two terminals)
    // build in the same folder: one at a time, and each simulates its own
    // copy of the ELF, which no later build overwrites.
    std::fs::create_dir_all(&out).expect("create the firmware build folder");
    let lock = std::fs::File::create(out.join(".lock")).expect("create the build lock");
    lock.lock().expect("lock the firmware build folder");
    let fw = project_dir().join("firmware-bridge");
    let o = Command::new(fw.join("build"))
        .env("FIRMWARE_DEFINES", defines)
        .env("FIRMWARE_OUT", &out)
        .output()
        .expect("run firmware-bridge/build");
    assert!(
        o.status.success(),
        "firmware-bridge/build failed (FIRMWARE_DEFINES={defines:?}):\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let built_elf = out.join("firmware.elf");
    assert!(
        built_elf.exists(),
        "the build made no {}",
        built_elf.display()
    );
    let elf = out.join(format!("firmware-{}.elf", std::process::id()));
    std::fs::copy(&built_elf, &elf).expect("copy the firmware ELF");
    // sim/run compiles the harness on its first run: do it once here, not
    // in several tests starting at the same time.
    let o = Command::new(fw.join("sim/run"))
        .arg("--help")
        .output()
        .expect("run firmware-bridge/sim/run");
    assert!(
        fw.join("build-out/sim-harness").exists(),
        "firmware-bridge/sim/run did not build the harness:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    drop(lock);
    built.insert(defines.to_string(), elf.clone());
    Some(elf)
}

/// One byte on the firmware's UART at 115200 baud 8N1 (start, 8 data,
/// stop bits), s.
const UART_BYTE_S: f64 = 10.0 / 115_200.0;

/// How much later than the firmware really had it a frame's time from
/// [`Harness::received`] can be: the harness hands the host's bytes to the
/// UART in chunks of up to 256, timed at the end of the chunk (s).
pub const RECEIVED_LATE_S: f64 = 256.0 * UART_BYTE_S;

/// The firmware running in simavr, paced to the wall clock.
pub struct Harness {
    child: Child,
    dir: TempDir,
    pty: String,
    reader: BufReader<std::fs::File>,
    partial: String,
    pulses: Vec<Pulse>,
    /// The host's frames, decoded from the bytes it wrote, with the
    /// simulated time their last chunk reached the UART.
    received: Vec<(f64, pwm_bridge::Frame)>,
    rx: FrameReader,
    /// Simulated times the board reset (`--reset-on-open`).
    resets: Vec<f64>,
    /// When the simulated UART has shifted in every byte handed to it so
    /// far (s, simulated).
    uart_free_at: f64,
    now: f64,
}

impl Harness {
    /// The default firmware; `None` when skipped (see the module docs).
    pub fn start() -> Option<Harness> {
        Harness::start_with("")
    }

    /// The firmware built with `defines` (FIRMWARE_DEFINES).
    pub fn start_with(defines: &str) -> Option<Harness> {
        Harness::start_args(defines, &[])
    }

    /// The default firmware on a board that resets whenever a program
    /// opens its port and runs its boot loader for `boot` (an Uno, a
    /// Nano: the harness's `--reset-on-open`).
    pub fn start_resetting_on_open(boot: Duration) -> Option<Harness> {
        let ms = boot.as_millis().to_string();
        Harness::start_args("", &["--reset-on-open", &ms])
    }

    fn start_args(defines: &str, args: &[&str]) -> Option<Harness> {
        let elf = firmware_elf(defines)?;
        let dir = TempDir::new("fwsim");
        let pulses = dir.path().join("pulses.jsonl");
        std::fs::File::create(&pulses).expect("create the pulse file");
        let stdout = std::fs::File::create(dir.path().join("stdout")).unwrap();
        let stderr = std::fs::File::create(dir.path().join("stderr")).unwrap();
        let child = Command::new(project_dir().join("firmware-bridge/sim/run"))
            .arg("--realtime")
            .args(args)
            .arg("--pulses")
            .arg(&pulses)
            .arg(&elf)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .expect("start firmware-bridge/sim/run");
        let reader = BufReader::new(std::fs::File::open(&pulses).unwrap());
        let mut h = Harness {
            child,
            dir,
            pty: String::new(),
            reader,
            partial: String::new(),
            pulses: vec![],
            received: vec![],
            rx: FrameReader::default(),
            resets: vec![],
            uart_free_at: 0.0,
            now: 0.0,
        };
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let out = std::fs::read_to_string(h.dir.path().join("stdout")).unwrap_or_default();
            if let Some(p) = out.lines().find_map(|l| l.strip_prefix("PTY ")) {
                h.pty = p.trim().to_string();
                break;
            }
            h.assert_alive();
            assert!(
                Instant::now() < end,
                "the harness printed no PTY line in 20 s: {}",
                h.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(h)
    }

    /// The firmware's UART, to open like a serial port.
    pub fn pty(&self) -> &str {
        &self.pty
    }

    /// The harness's folder (for files a test wants to keep next to it).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr")).unwrap_or_default()
    }

    fn assert_alive(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("the harness exited ({status}): {}", self.stderr());
        }
    }

    /// Reads the pulse lines written so far.
    fn drain(&mut self) {
        loop {
            let mut line = String::new();
            let n = self
                .reader
                .read_line(&mut line)
                .expect("read the pulse file");
            if n == 0 {
                return;
            }
            self.partial.push_str(&line);
            if !self.partial.ends_with('\n') {
                return; // the rest of the line is not written yet
            }
            let line = std::mem::take(&mut self.partial);
            let v: serde_json::Value = serde_json::from_str(line.trim())
                .unwrap_or_else(|e| panic!("pulse line {line:?}: {e}"));
            let t = v["t_sim"].as_f64().expect("t_sim in every pulse line");
            self.now = self.now.max(t);
            if let Some(hex) = v["rx"].as_str() {
                self.take_rx(hex, t);
            }
            if v["reset"].as_bool() == Some(true) {
                self.resets.push(t);
            }
            if let Some(ch) = v["ch"].as_u64() {
                self.pulses.push(Pulse {
                    ch: ch as usize,
                    width_us: v["width_us"].as_f64().expect("width_us"),
                    t_sim: t,
                });
            }
        }
    }

    /// Decodes bytes the host wrote (hex) into its frames.
    fn take_rx(&mut self, hex: &str, t: f64) {
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("rx hex"))
            .collect();
        // The harness hands a chunk to the UART when it reads it from the
        // pty; the firmware has it once the UART has shifted it in behind
        // what was queued before (a loaded host writes several frames at
        // once). A frame counts as received when its chunk is all in: at
        // most one chunk's transfer later than its last byte.
        let start = t.max(self.uart_free_at);
        self.uart_free_at = start + bytes.len() as f64 * UART_BYTE_S;
        self.rx.push(&bytes);
        while let Some(f) = self.rx.next_frame() {
            self.received.push((self.uart_free_at, f));
        }
    }

    /// The simulated times (s) at which frames with command `command`
    /// from the host reached the firmware, up to now.
    pub fn received(&mut self, command: u8) -> Vec<f64> {
        self.drain();
        self.received
            .iter()
            .filter(|(_, f)| f.command == command)
            .map(|(t, _)| *t)
            .collect()
    }

    /// The simulated times (s) at which the board reset, up to now.
    pub fn resets(&mut self) -> Vec<f64> {
        self.drain();
        self.resets.clone()
    }

    /// Simulated time reached so far (s), to 100 ms at worst.
    pub fn sim_time(&mut self) -> f64 {
        self.drain();
        self.now
    }

    /// Waits until simulated time reaches `t` (panics if the simulation
    /// stalls: it runs at about wall-clock speed).
    pub fn wait_until(&mut self, t: f64) {
        let start = self.sim_time();
        let end = Instant::now() + Duration::from_secs_f64((t - start).max(0.0) * 4.0 + 20.0);
        while self.sim_time() < t {
            self.assert_alive();
            assert!(
                Instant::now() < end,
                "simulated time stuck at {} s, waiting for {t} s",
                self.now
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The pulses on channel `ch` whose falling edge is in `[from, to]`
    /// (s of simulated time), once the simulation has got to `to`.
    pub fn pulses(&mut self, ch: usize, from: f64, to: f64) -> Vec<Pulse> {
        self.wait_until(to);
        self.pulses
            .iter()
            .filter(|p| p.ch == ch && p.t_sim >= from && p.t_sim <= to)
            .copied()
            .collect()
    }

    /// The median width per channel over `[from, to]`; `None` for a
    /// channel without pulses then.
    pub fn medians(&mut self, from: f64, to: f64) -> [Option<f64>; CHANNELS] {
        let mut out = [None; CHANNELS];
        for (ch, m) in out.iter_mut().enumerate() {
            let mut w: Vec<f64> = self
                .pulses(ch, from, to)
                .iter()
                .map(|p| p.width_us)
                .collect();
            w.sort_by(f64::total_cmp);
            *m = w.get(w.len() / 2).copied();
        }
        out
    }

    /// The falling edge of the last pulse on `ch` up to now.
    pub fn last_pulse(&mut self, ch: usize) -> Option<f64> {
        self.drain();
        self.pulses
            .iter()
            .rev()
            .find(|p| p.ch == ch)
            .map(|p| p.t_sim)
    }

    /// Writes raw bytes to the firmware on a connection of its own.
    pub fn write_raw(&self, bytes: &[u8]) {
        let mut port = serialport::new(&self.pty, 115_200)
            .timeout(Duration::from_secs(2))
            .open()
            .expect("open the firmware's pty");
        port.write_all(bytes).expect("write to the firmware");
        port.flush().expect("flush");
    }

    /// Asks the firmware for its status on a short connection of its own
    /// (the request is a valid frame: it feeds the firmware's watchdog).
    pub fn status(&self) -> FirmwareStatus {
        let mut port = serialport::new(&self.pty, 115_200)
            .timeout(Duration::from_millis(50))
            .open()
            .expect("open the firmware's pty");
        port.clear(serialport::ClearBuffer::Input).unwrap();
        port.write_all(&pwm_bridge::frame(0x7E, cmd::STATUS, &[]))
            .expect("write to the firmware");
        let mut reader = FrameReader::default();
        let end = Instant::now() + Duration::from_secs(3);
        let mut buf = [0u8; 256];
        while Instant::now() < end {
            match port.read(&mut buf) {
                Ok(n) => reader.push(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(e) => panic!("reading the firmware's reply: {e}"),
            }
            while let Some(f) = reader.next_frame() {
                if f.seq == 0x7E && f.command == cmd::STATUS | cmd::REPLY {
                    return FirmwareStatus::parse(&f.payload).expect("a 30-byte status");
                }
            }
        }
        panic!("no status reply from the simulated firmware in 3 s");
    }

    /// Freezes the simulation for `d` of wall time (SIGSTOP, then
    /// SIGCONT), as a loaded host stalls it: nothing is answered
    /// meanwhile, then it catches up on what the host wrote.
    pub fn stall(&self, d: Duration) {
        self.signal("-STOP");
        std::thread::sleep(d);
        self.signal("-CONT");
    }

    /// Presses the board's reset button: the firmware starts afresh, after
    /// the boot loader's time when the board has one (see
    /// [`Harness::start_resetting_on_open`]).
    pub fn press_reset(&self) {
        self.signal("-USR1");
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig} the harness");
    }

    /// Stops the simulation (the board is unplugged).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.kill();
    }
}
