"""What the simulated buses and the vendor-SDK scripts share (imported by
feetech_bus.py, dynamixel_bus.py and the *_sdk_bus.py, *_capture.py
scripts beside it): the simulator's pty and main loop with its control
channel, starting a simulator from another script, and capturing the bytes
an SDK writes to a pty.

A bus object given to `serve` has:
  feed(bytes)     the host's bytes, split into instruction packets there;
  step(dt)        the servos move for dt seconds;
  control(dict)   one control-channel command, answered with a dict;
  slave           set by serve: the pty's slave fd (the host's termios);
and writes its replies with os.write(bus.fd, ...).
"""
import json
import os
import select
import subprocess
import sys
import time
import tty


def serve(bus):
    """Opens the pty, prints `PTY <path>` (stdout, flushed) and runs the
    bus until killed: the servos move every 2 ms or sooner, the host's
    bytes are fed as they come, and each JSON line on stdin is answered
    with one JSON line on stdout. The slave end stays open here, so the
    host may close and reopen the port."""
    master, slave = os.openpty()
    tty.setraw(slave)
    bus.fd, bus.slave = master, slave
    print("PTY %s" % os.ttyname(slave), flush=True)
    inputs = [master, sys.stdin]
    last = time.monotonic()
    while True:
        ready, _, _ = select.select(inputs, [], [], 0.002)
        now = time.monotonic()
        bus.step(now - last)
        last = now
        if sys.stdin in ready:
            line = sys.stdin.readline()
            if not line:
                inputs.remove(sys.stdin)
            elif line.strip():
                try:
                    answer = bus.control(json.loads(line))
                except ValueError:
                    answer = {"error": "not JSON: %r" % line}
                print(json.dumps(answer), flush=True)
        if master in ready:
            try:
                data = os.read(master, 4096)
            except OSError:
                data = b""
            if data:
                bus.feed(data)
            else:
                time.sleep(0.002)


class Hand:
    """A hand that moves one servo by one tick at each read of its present
    position, back and forth between LOW and HIGH (--hand ID:LOW:HIGH): a
    leader arm that is in a new pose at every frame, so each frame a host
    reads is a value of its own (scripts/teleop-bench times each from
    the read, logged as {"t", "id", "read"}, to the follower's goal)."""

    def __init__(self, text):
        ident, low, high = (int(x) for x in text.split(":"))
        if not low < high:
            raise ValueError("--hand ID:LOW:HIGH needs LOW < HIGH")
        self.id, self.low, self.high, self.k = ident, low, high, 0

    def next(self):
        span = self.high - self.low
        self.k += 1
        k = self.k % (2 * span)
        return self.low + (k if k < span else 2 * span - k)


class Log:
    """The simulator's JSON-lines log (nothing when no path is given)."""

    def __init__(self, path):
        self.f = open(path, "a", buffering=1) if path else None

    def record(self, **fields):
        if self.f:
            self.f.write(json.dumps(dict(t=time.time(), **fields)) + "\n")


def with_sim(script, args, session, prefix):
    """Runs `session(pty path)` against the simulator `script` (beside this
    file) started with `args`; returns its result with the simulator's
    log under "log"."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        log = os.path.join(folder, "events.jsonl")
        here = os.path.dirname(os.path.abspath(__file__))
        sim = subprocess.Popen([sys.executable, os.path.join(here, script), *args, "--log", log],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        try:
            line = sim.stdout.readline()
            if not line.startswith("PTY "):
                sys.exit("%s: the simulator printed %r, not a PTY line" % (prefix, line))
            out = session(line.split()[1])
        finally:
            sim.kill()
            sim.wait()
        with open(log) as f:
            out["log"] = [json.loads(x) for x in f]
    return out


def drain(fd, wait=0.0, gap=0.0):
    """Everything readable on fd now, waiting up to `wait` s for the first
    byte and `gap` s for each next one."""
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], wait if not out else gap)
        if not ready:
            return out
        out += os.read(fd, 4096)


class Capture:
    """The bytes an SDK writes to the slave end of a pty pair, per case:
    `capture(name, call)` runs `call` and keeps what it wrote. Nothing
    answers, so calls that wait for a reply time out (the SDK's own
    timeouts): only what was written matters."""

    def __init__(self, who, gap=0.0):
        self.who, self.gap = who, gap
        self.master, self.slave = os.openpty()
        self.path = os.ttyname(self.slave)
        self.cases = {}

    def capture(self, name, call):
        drain(self.master)
        call()
        sent = drain(self.master, wait=0.5, gap=self.gap)
        if not sent:
            sys.exit("%s: the SDK sent nothing for %s" % (self.who, name))
        self.cases[name] = list(sent)

    def close(self):
        os.close(self.master)
        os.close(self.slave)
