#!/usr/bin/env python3
"""A simulated Dynamixel Protocol 2.0 bus on a pty: X-series servos behind one port.

Written from the ROBOTIS e-manual (Protocol 2.0 page, X-series control
tables), with no code from arm_ik, so that arm_ik's driver is checked against
an independent reading of the protocol; tests/dynamixel_sdk.rs checks this
simulator against the vendor SDK in turn.

Each servo has an X-series control table (little-endian values): model number
(0), firmware version (6), id (7), baud code (8), return delay (9), drive mode
(10), operating mode (11), homing offset (20), current limit (38, models that
sense current), velocity limit (44), position limits (48, 52), torque enable
(64), status return level (68), hardware error status (70), goal current
(102), profile velocity (112), goal position (116), moving (122), present
current or load (126), present velocity (128), present position (132),
input voltage (144), temperature (146). Present position = actual + homing
offset. The drive mode register is kept but not simulated (positions never
count backwards). While its torque is on and its mode follows goal positions, a servo
moves toward the goal at its profile velocity (0.229 rev/min units; 0 means
--speed ticks/s) and reports moving = 1 until it is there. Its present
current (or load, in 0.1 %, on models that do not sense current) is 120
units while moving and 20 at rest, capped by the goal current in
current-based position mode. An obstacle (--obstacle) stops it: pushing
against it the servo draws its current limit (1000 on load models), or its
goal current in current-based position mode, and after a second of that in
another mode it latches an overload error (torque off), as real servos do.

As real servos do, it refuses with an error number in the status packet:
EEPROM (addresses below 64) while the torque is on, and read-only registers
(access error, 7); a write that cuts a multi-byte register (data length
error, 5); an operating mode the model lacks or a torque value not 0/1 (data
range error, 4); a goal outside the position limits in position mode (data
limit error, 6); a packet with a bad CRC addressed to it (CRC error, 3). A
latched hardware error (register 70) switches the torque off, sets the alert
bit (0x80) of every status packet and refuses torque on (result fail, 1)
until a REBOOT.

Instructions answered: PING (model number, firmware), READ, WRITE, REBOOT,
SYNC WRITE (no reply), SYNC READ (each listed servo replies in list order;
a missing one is skipped), FAST SYNC READ (one packet; firmware 45+ on the
X430 series, 46+ on the X330 series; the reply stops at the first servo that
cannot answer, as the chain of servos does). Broadcast PING: every servo in
id order. Status packets are byte-stuffed; an instruction packet with an
unstuffed FF FF FD inside is dropped (logged as "bad_stuffing"). Replies
honour the status return level and the return delay, and take the time their
bytes need at the bus speed: a reply's last byte is out its return delay
plus its bytes' time after the instruction came in (in a SYNC READ, after
the servo before it finished), a deadline the simulator sleeps to, so its
own work in between is not added.

Bus speed: --baud (default 1000000) is every servo's rate. When the speed the
host set on the pty can be read (termios) and differs, the servos hear
garbage and stay silent, as on a real bus.

Prints `PTY <path>` first (stdout, flushed), then runs until killed. The
slave end stays open inside the simulator, so the host may close and reopen
the port. --log gets JSON lines: goal writes {"t", "id", "goal", "present",
"torque", "via", "heard"} ("heard": when the instruction's bytes came in),
with --log-replies every status packet sent (see --help), torque writes {"t", "id", "torque"}, other events {"t",
"id", "event", ...}.

Options to misbehave: --silent ID (never answers; repeatable),
--silent-after-goals N (with --silent: answers until it has N goal writes),
--model ID:NAME|NUMBER, --mode ID:CODE, --firmware ID:N, --hw-error ID:BITS,
--delay ID:VALUE (return delay time, 2 µs units; every servo starts at the
factory 250, and a write of it is logged as {"event": "delay", "old", "new"}),
--obstacle ID:POS, --noise (random bytes and a corrupt status packet before
every reply).

Control channel: JSON lines on stdin, each answered with one JSON line on
stdout: {"dump": true} (every servo's state), {"silent": ID},
{"unsilent": ID}, {"hw_error": [ID, BITS]}, {"noise": BOOL},
{"obstacle": [ID, POS or null]}, {"present": [ID, POS]} (moved there, as by
hand), {"write": [ID, ADDR, SIZE, VALUE]} (a register, bypassing every
check).
"""
import argparse
import fcntl
import os
import random
import struct
import sys
import termios
import time

from simbus import Hand, Log, serve

BROADCAST = 0xFE
PING, READ, WRITE, REBOOT, STATUS = 0x01, 0x02, 0x03, 0x08, 0x55
SYNC_READ, SYNC_WRITE, FAST_SYNC_READ = 0x82, 0x83, 0x8A
ERR_RESULT, ERR_CRC, ERR_RANGE, ERR_LENGTH, ERR_LIMIT, ERR_ACCESS = 1, 3, 4, 5, 6, 7
ALERT = 0x80

# name: (model number, senses current, series)
MODELS = {
    "xl330-m077": (1190, True, 330), "xl330-m288": (1200, True, 330),
    "xl430-w250": (1060, False, 430), "xm430-w350": (1020, True, 430),
    "xc430-w150": (1070, False, 430), "xc430-w240": (1080, False, 430),
}
BAUDS = [9600, 57600, 115200, 1000000, 2000000, 3000000, 4000000, 4500000]
# Registers: name -> (address, size). Multi-byte ones must be written whole.
REG = {
    "model": (0, 2), "firmware": (6, 1), "id": (7, 1), "baud": (8, 1), "delay": (9, 1),
    "drive": (10, 1), "mode": (11, 1), "homing": (20, 4), "current_limit": (38, 2),
    "velocity_limit": (44, 4), "max_pos": (48, 4), "min_pos": (52, 4), "torque": (64, 1),
    "return_level": (68, 1), "hw_error": (70, 1), "goal_current": (102, 2),
    "goal_velocity": (104, 4), "profile_acc": (108, 4), "profile_vel": (112, 4),
    "goal": (116, 4), "moving": (122, 1), "current": (126, 2), "velocity": (128, 4),
    "present": (132, 4), "voltage": (144, 2), "temperature": (146, 1),
}
READ_ONLY = set(range(0, 7)) | {69, 70} | set(range(120, 148))
OVERLOAD = 32
# Seconds of pushing against an obstacle before an overload error.
OVERLOAD_AFTER = 1.0
TABLE_SIZE = 662


def crc16(data, crc=0):
    """CRC-16, polynomial 0x8005, initial value 0, MSB first (e-manual)."""
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def stuff(body):
    out = bytearray()
    for i, b in enumerate(body):
        out.append(b)
        if b == 0xFD and i >= 2 and body[i - 2] == 0xFF and body[i - 1] == 0xFF:
            out.append(0xFD)
    return bytes(out)


def unstuff(body):
    """None when an FF FF FD inside is not followed by the stuffing FD."""
    out, i = bytearray(), 0
    while i < len(body):
        out.append(body[i])
        if body[i] == 0xFD and i >= 2 and body[i - 2:i] == b"\xff\xff":
            if i + 1 >= len(body) or body[i + 1] != 0xFD:
                return None
            i += 1
        i += 1
    return bytes(out)


def wait_until(due):
    """Sleeps until monotonic time `due` (at once when it has passed)."""
    left = due - time.monotonic()
    if left > 0:
        time.sleep(left)


def status_packet(ident, error, params=b""):
    body = stuff(bytes([STATUS, error]) + bytes(params))
    head = b"\xff\xff\xfd\x00" + bytes([ident]) + struct.pack("<H", len(body) + 2)
    pkt = head + body
    return pkt + struct.pack("<H", crc16(pkt))


def host_baud(fd):
    """The speed the host set on the pty, or None when it cannot be told."""
    try:  # Linux termios2 (TCGETS2), which also holds arbitrary rates.
        buf = fcntl.ioctl(fd, 0x802C542A, bytes(44))
        _, _, cflag, _, _, _, _, ospeed = struct.unpack("IIIIB19sII", buf)
        if cflag & 0o010017 == 0o010000:  # BOTHER: the rate is in c_ospeed
            return ospeed
    except OSError:
        pass
    code = termios.tcgetattr(fd)[5]
    rates = {getattr(termios, "B%d" % r): r for r in BAUDS + [19200, 38400, 230400, 460800]
             if hasattr(termios, "B%d" % r)}
    return rates.get(code)


class Servo:
    def __init__(self, ident, model, present, firmware, baud_code):
        number, self.senses_current, self.series = MODELS[model]
        self.name = model
        self.t = bytearray(TABLE_SIZE)
        self.set("model", number)
        self.set("firmware", firmware)
        self.set("id", ident)
        self.set("baud", baud_code)
        self.set("delay", 250)
        self.set("mode", 3)
        self.set("current_limit", 1750 if self.series == 330 else 1193)
        self.set("velocity_limit", 445)
        self.set("max_pos", 4095)
        self.set("min_pos", 0)
        self.set("return_level", 2)
        self.set("voltage", 50 if self.series == 330 else 120)
        self.set("temperature", 30)
        self.actual = float(present)
        self.set("present", present)
        self.set("goal", present)
        self.silent = False
        self.silent_after = None
        self.goals = 0
        self.obstacle = None
        self.pushing = 0.0

    @property
    def id(self):
        return self.t[7]

    def get(self, name, signed=True):
        addr, size = REG[name]
        return int.from_bytes(self.t[addr:addr + size], "little", signed=signed)

    def set(self, name, value):
        addr, size = REG[name]
        self.t[addr:addr + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def error_byte(self, number=0):
        return number | (ALERT if self.t[70] else 0)

    def modes(self):
        return {0, 1, 3, 4, 5, 16} if self.senses_current else {1, 3, 4, 16}

    def has_fast_sync(self):
        return self.t[6] >= (46 if self.series == 330 else 45)

    def latch(self, bits):
        self.set("hw_error", bits)
        if bits:
            self.set("torque", 0)

    def check_write(self, addr, data):
        """The error number a write of `data` at `addr` gets, 0 if none."""
        end = addr + len(data)
        if end > TABLE_SIZE or any(a in READ_ONLY for a in range(addr, end)):
            return ERR_ACCESS
        if addr < 64 and self.t[64]:
            return ERR_ACCESS
        if not self.senses_current and any(a in (38, 39, 102, 103) for a in range(addr, end)):
            return ERR_ACCESS
        for a, size in REG.values():
            inside = [x for x in range(a, a + size) if addr <= x < end]
            if inside and len(inside) != size:
                return ERR_LENGTH
        new = bytearray(self.t)
        new[addr:end] = data
        val = lambda name: int.from_bytes(new[REG[name][0]:sum(REG[name])], "little", signed=True)
        if addr <= 11 < end and new[11] not in self.modes():
            return ERR_RANGE
        if addr <= 64 < end and new[64] > 1:
            return ERR_RANGE
        if addr <= 64 < end and new[64] == 1 and self.t[70]:
            return ERR_RESULT
        if addr < 120 and end > 116 and new[11] == 3 and not (
                val("min_pos") <= val("goal") <= val("max_pos")):
            return ERR_LIMIT
        return 0

    def block_at(self, pos):
        """An obstacle at `pos` (None: none) on the far side from where the
        servo is now (positions as it reports them)."""
        if pos is None:
            self.obstacle = None
        else:
            o = pos - self.get("homing")
            self.obstacle = (o, 1 if self.actual >= o else -1)

    def move(self, dt, speed):
        homing = self.get("homing")
        if not self.t[64] or self.t[11] not in (3, 4, 5):
            self.set("moving", 0)
            self.set("velocity", 0)
            self.set("current", 0)
            self.set("present", int(round(self.actual)) + homing)
            self.pushing = 0.0
            return
        pv = self.get("profile_vel", signed=False)
        ticks_per_s = pv * 0.229 / 60 * 4096 if pv else speed
        target = self.get("goal") - homing
        step = ticks_per_s * dt
        delta = target - self.actual
        sign = 1 if delta > 0 else -1
        reach = target if abs(delta) <= step else self.actual + step * sign
        blocked = False
        if self.obstacle is not None:
            o, side = self.obstacle
            if side * (reach - o) < 0 or (reach == o and side * (target - o) < 0):
                reach, blocked = o, True
        self.actual = reach
        moving = int(round(self.actual)) != target and not blocked
        self.set("moving", int(moving))
        self.set("velocity", int(ticks_per_s / 4096 * 60 / 0.229) * sign if moving else 0)
        self.set("current", (sign if delta else 1) * self.draw(moving, blocked, dt))
        self.set("present", int(round(self.actual)) + homing)

    def draw(self, moving, blocked, dt):
        """The current (or load) it draws, and the overload it latches."""
        full = self.get("current_limit") if self.senses_current else 1000
        load = full if blocked else (120 if moving else 20)
        if self.t[11] == 5:
            return min(load, abs(self.get("goal_current")))
        self.pushing = self.pushing + dt if blocked else 0.0
        if self.pushing >= OVERLOAD_AFTER:
            self.latch(OVERLOAD)
        return load


class Bus:
    def __init__(self, args):
        self.fd = self.slave = None  # set by simbus.serve
        self.speed = args.speed
        self.noise = args.noise
        self.pace = not args.no_pace
        self.baud = args.baud
        self.rng = random.Random(1)
        self.record = Log(args.log).record
        presents = args.present if len(args.present) > 1 else args.present * len(args.ids)
        if len(presents) != len(args.ids):
            sys.exit("dynamixel_bus: --present needs one value or one per id")
        models, modes, firmware = dict(args.model), dict(args.mode), dict(args.firmware)
        delays = dict(args.delay)
        code = BAUDS.index(args.baud)
        self.servos = {}
        for i, p in zip(args.ids, presents):
            model = models.get(i, args.default_model)
            fw = firmware.get(i, 52 if MODELS[model][2] == 330 else 46)
            s = Servo(i, model, p, fw, code)
            s.set("mode", modes.get(i, 3))
            s.set("delay", delays.get(i, 250))
            self.servos[i] = s
        for i, bits in args.hw_error:
            self.servos[i].latch(bits)
        for i, pos in args.obstacle:
            self.servos[i].block_at(pos)
        for i in args.silent:
            if args.silent_after_goals is None:
                self.servos[i].silent = True
            else:
                self.servos[i].silent_after = args.silent_after_goals
        self.buf = bytearray()
        self.mismatch_logged = False
        self.hands = {h.id: h for h in args.hand}
        self.log_replies = args.log_replies
        # The instruction being answered, and when its bytes came in.
        self.inst, self.heard = None, None
        # The same on the monotonic clock, and when the bus is free again
        # (the end of the last reply).
        self.heard_at = self.free = 0.0

    def read(self, s, addr, n):
        """The bytes a read of servo s gets; a hand moves it first when the
        read covers its present position."""
        hand = self.hands.get(s.id)
        at = REG["present"][0]
        if hand and addr <= at < addr + n:
            pos = hand.next()
            s.actual = float(pos - s.get("homing"))
            s.set("present", pos)
            self.record(id=s.id, read=pos)
        return s.t[addr:addr + n]

    def live(self, ident):
        s = self.servos.get(ident)
        return s if s is not None and not s.silent else None

    def send(self, servo, data):
        if self.noise:
            junk = bytes(self.rng.randrange(0, 0xFF) for _ in range(self.rng.randrange(1, 8)))
            bad = bytearray(status_packet(servo.id, 0, b"\x00\x00\x00\x00"))
            bad[-1] ^= 0x5A
            data = junk + bytes(bad) + b"\xff" + data
        start = time.monotonic()
        want = 0.0
        if self.pace:
            # The servo starts its reply its return delay after the
            # instruction came in (or after the servo before it in a
            # SYNC READ finished), and the last byte is out after the
            # bytes' time at the bus speed: a deadline, not a pause after
            # whatever this process did in between.
            due = max(self.free, self.heard_at) + servo.t[9] * 2e-6 + len(data) * 10.0 / self.baud
            want = due - start
            wait_until(due)
            self.free = due
        os.write(self.fd, data)
        if self.log_replies:
            self.record(id=servo.id, reply=self.inst, bytes=len(data), heard=self.heard,
                        pace=want, slept=time.monotonic() - start)

    def reply(self, servo, inst, number=0, params=b""):
        level = servo.t[68]
        if inst != PING and (level == 0 or (level == 1 and inst != READ)):
            return
        self.send(servo, status_packet(servo.id, servo.error_byte(number), params))

    def write(self, servo, addr, data, via):
        """Applies a write after its checks; the error number (0 = done)."""
        err = servo.check_write(addr, data)
        if err:
            self.record(id=servo.id, event="refused", addr=addr, error=err, via=via)
            return err
        old_homing, old_delay = servo.get("homing"), servo.t[9]
        servo.t[addr:addr + len(data)] = data
        if addr <= 9 < addr + len(data):
            self.record(id=servo.id, event="delay", old=old_delay, new=servo.t[9])
        if addr < 24 and addr + len(data) > 20:
            servo.set("present", int(round(servo.actual)) + servo.get("homing"))
            self.record(id=servo.id, event="homing", old=old_homing, new=servo.get("homing"))
        if addr <= 116 < addr + len(data):
            servo.goals += 1
            self.record(id=servo.id, goal=servo.get("goal"), present=servo.get("present"),
                        torque=servo.t[64], via=via, heard=self.heard)
            if servo.silent_after is not None and servo.goals >= servo.silent_after:
                servo.silent = True
                self.record(id=servo.id, event="silent")
        if addr <= 64 < addr + len(data):
            self.record(id=servo.id, torque=servo.t[64])
        if addr <= 11 < addr + len(data):
            self.record(id=servo.id, event="mode", mode=servo.t[11])
        return 0

    def handle(self, ident, inst, p):
        self.inst = inst
        if inst == PING:
            for i in (sorted(self.servos) if ident == BROADCAST else [ident]):
                s = self.live(i)
                if s:
                    self.reply(s, PING, 0, s.t[0:2] + s.t[6:7])
        elif inst == READ and len(p) == 4:
            addr, n = struct.unpack("<HH", p)
            s = self.live(ident)
            if s and addr + n <= TABLE_SIZE:
                self.reply(s, READ, 0, self.read(s, addr, n))
            elif s:
                self.reply(s, READ, ERR_ACCESS)
        elif inst == WRITE and len(p) >= 3:
            addr = struct.unpack("<H", p[:2])[0]
            for i in (sorted(self.servos) if ident == BROADCAST else [ident]):
                s = self.live(i)
                if s:
                    err = self.write(s, addr, p[2:], "write")
                    if ident != BROADCAST:
                        old = s.id
                        self.reply(s, WRITE, err)
                        if s.id != old:
                            self.servos[s.id] = self.servos.pop(old)
        elif inst == REBOOT:
            for i in (sorted(self.servos) if ident == BROADCAST else [ident]):
                s = self.live(i)
                if s:
                    s.latch(0)
                    s.set("torque", 0)
                    self.record(id=s.id, event="reboot")
                    if ident != BROADCAST:
                        self.reply(s, REBOOT)
        elif inst == SYNC_WRITE and ident == BROADCAST and len(p) >= 4:
            addr, n = struct.unpack("<HH", p[:4])
            blocks = p[4:]
            if n and len(blocks) % (n + 1) == 0:
                for k in range(0, len(blocks), n + 1):
                    s = self.live(blocks[k])
                    if s:
                        self.write(s, addr, blocks[k + 1:k + 1 + n], "sync_write")
        elif inst == SYNC_READ and ident == BROADCAST and len(p) >= 5:
            addr, n = struct.unpack("<HH", p[:4])
            for i in p[4:]:
                s = self.live(i)
                if s and addr + n <= TABLE_SIZE:
                    self.reply(s, READ, 0, self.read(s, addr, n))
        elif inst == FAST_SYNC_READ and ident == BROADCAST and len(p) >= 5:
            self.fast_sync_read(*struct.unpack("<HH", p[:4]), p[4:])

    def fast_sync_read(self, addr, n, ids):
        """One packet: each servo appends error, id, data and a running CRC;
        the last one's CRC is the packet's. It stops at a servo that cannot
        answer, leaving the packet incomplete."""
        pkt = bytearray(b"\xff\xff\xfd\x00\xfe")
        pkt += struct.pack("<H", 1 + len(ids) * (n + 4)) + bytes([STATUS])
        first = None
        for i in ids:
            s = self.live(i)
            if not s or not s.has_fast_sync() or addr + n > TABLE_SIZE:
                break
            first = first or s
            pkt += bytes([s.error_byte(), i]) + self.read(s, addr, n)
            pkt += struct.pack("<H", crc16(pkt))
        if first:
            self.send(first, bytes(pkt))

    def feed(self, data):
        """Splits the host's bytes into instruction packets; resynchronises
        on the next header after anything invalid."""
        self.heard, self.heard_at = time.time(), time.monotonic()
        hb = host_baud(self.slave)
        if hb is not None and hb != self.baud:
            if not self.mismatch_logged:
                self.record(event="baud_mismatch", host=hb, servos=self.baud)
                self.mismatch_logged = True
            return
        self.buf += data
        while True:
            start = self.buf.find(b"\xff\xff\xfd\x00")
            if start < 0:
                del self.buf[:max(0, len(self.buf) - 3)]
                return
            del self.buf[:start]
            if len(self.buf) < 8:
                return
            ident, length = self.buf[4], struct.unpack("<H", self.buf[5:7])[0]
            if length < 3 or length > 1017:
                del self.buf[:3]
                continue
            total = 7 + length
            if len(self.buf) < total:
                return
            pkt = bytes(self.buf[:total])
            if crc16(pkt[:-2]) != struct.unpack("<H", pkt[-2:])[0]:
                del self.buf[:3]
                s = self.live(ident)
                if s:
                    self.record(id=ident, event="bad_crc")
                    self.reply(s, pkt[7], ERR_CRC)
                continue
            del self.buf[:total]
            body = unstuff(pkt[7:-2])
            if body is None:
                self.record(id=ident, event="bad_stuffing")
                continue
            self.handle(ident, body[0], body[1:])

    def step(self, dt):
        for s in self.servos.values():
            s.move(dt, self.speed)

    def control(self, cmd):
        if "silent" in cmd:
            self.servos[cmd["silent"]].silent = True
        if "unsilent" in cmd:
            self.servos[cmd["unsilent"]].silent = False
        if "hw_error" in cmd:
            i, bits = cmd["hw_error"]
            self.servos[i].latch(bits)
            self.record(id=i, event="hw_error", bits=bits)
        if "noise" in cmd:
            self.noise = bool(cmd["noise"])
        if "obstacle" in cmd:
            i, pos = cmd["obstacle"]
            self.servos[i].block_at(pos)
        if "present" in cmd:
            i, pos = cmd["present"]
            s = self.servos[i]
            s.actual = float(pos - s.get("homing"))
            s.set("present", pos)
        if "write" in cmd:
            i, addr, size, value = cmd["write"]
            self.servos[i].t[addr:addr + size] = (value & ((1 << 8 * size) - 1)).to_bytes(size, "little")
            if addr == 132:
                self.servos[i].actual = float(value - self.servos[i].get("homing"))
        return {"servos": {str(i): {n: s.get(n) for n in REG} | {"silent": s.silent}
                           for i, s in self.servos.items()}}


def pair(text):
    a, b = text.split(":")
    return int(a), (b if b in MODELS else int(b))


def model_pair(text):
    i, m = pair(text)
    if not isinstance(m, str):
        names = [n for n, v in MODELS.items() if v[0] == m]
        if not names:
            sys.exit("dynamixel_bus: unknown model number %d" % m)
        m = names[0]
    return i, m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ints = lambda t: [int(x) for x in t.split(",")]
    ap.add_argument("--ids", type=ints, default=[1, 2, 3, 4, 5, 6])
    ap.add_argument("--present", type=ints, default=[2048])
    ap.add_argument("--default-model", default="xl330-m288", choices=sorted(MODELS))
    ap.add_argument("--model", type=model_pair, action="append", default=[])
    ap.add_argument("--mode", type=pair, action="append", default=[])
    ap.add_argument("--firmware", type=pair, action="append", default=[])
    ap.add_argument("--hw-error", type=pair, action="append", default=[])
    ap.add_argument("--delay", type=pair, action="append", default=[],
                    help="ID:VALUE, the servo's return delay time (default 250)")
    ap.add_argument("--obstacle", type=pair, action="append", default=[])
    ap.add_argument("--silent", type=int, action="append", default=[])
    ap.add_argument("--silent-after-goals", type=int)
    ap.add_argument("--speed", type=float, default=3000.0, help="ticks/s at profile velocity 0")
    ap.add_argument("--baud", type=int, default=1000000, choices=BAUDS)
    ap.add_argument("--no-pace", action="store_true", help="reply at once, whatever the baud")
    ap.add_argument("--noise", action="store_true")
    ap.add_argument("--hand", type=Hand, action="append", default=[],
                    help="ID:LOW:HIGH: servo ID moves one tick at each read of its position")
    ap.add_argument("--log", help="JSON lines of goal, torque and other events")
    ap.add_argument("--log-replies", action="store_true",
                    help="log each status packet sent: {t, id, reply (instruction), bytes, "
                         "heard (when the instruction came in), pace (s asked), slept (s taken)}")
    args = ap.parse_args()

    serve(Bus(args))


if __name__ == "__main__":
    main()
