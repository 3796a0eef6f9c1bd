#!/usr/bin/env python3
"""A simulated Feetech bus on a pty: N STS3215 (or SCS0009) servos behind one port.

Written from the protocol facts (shared/notes/servo-protocols.md), with no
code from arm_ik, so that the tests in tests/feetech_bus.rs check our driver
against an independent reading of the protocol; tests/feetech_sdk.rs checks
this simulator against the vendor SDK in turn.

Each servo has a 256-byte register table: model number 777 (STS3215) at 3,
its id at 5, torque enable at 40, goal position at 42, present position at
56, present speed at 58 (sign bit 15), present load at 60 (0.1 % of the
maximum, sign bit 10: pushing toward lower positions), moving at 66
(two-byte values little-endian). With --scs they are SCS0009 servos
instead: model number 1284, two-byte values big-endian, positions 0..1023,
and no SYNC READ (the SCS protocol has none: such a packet is ignored).
While its torque is on, a servo moves its present position toward the goal
at --speed ticks/s (load 10 %); with the torque off it stays where it is
(load 0). An obstacle stops it: pushing against it the load is 90 %, and
after a second of that the servo sets its overload flag (bit 5), cleared
when it stops pushing.

Instructions answered: PING, READ, WRITE, SYNC WRITE (no reply), SYNC READ
(each listed servo replies with its own status packet, in list order).
Packets with a bad checksum are dropped without a reply, as a servo does.
A broadcast (id 0xFE) gets no reply, except PING, which every servo answers
in id order. ID and baud-rate changes are not simulated (those registers
are read-only here), nor is REG WRITE / ACTION.

Prints `PTY <path>` first (stdout, flushed), then runs until killed (see
simbus.serve). Every goal position write is logged to --log as a JSON line
{"t", "id", "goal", "present", "via"}; torque writes as {"t", "id",
"torque"}; a servo going silent as {"t", "id", "event": "silent"}.

Fault modes:
  --silent ID        the servo never answers and ignores everything
                     (repeatable); with --silent-after-goals N it works
                     normally until it has received N goal writes;
  --flags ID:BITS    the servo's status packets carry this error byte;
  --model ID:N       the servo reports model number N;
  --obstacle ID:POS  something stops the servo at position POS;
  --garbage          random bytes and a status packet with a bad checksum
                     (and a wrong position) go out before every reply.

Control channel: JSON lines on stdin, each answered with one JSON line on
stdout: {"dump": true} (every servo's state), {"silent": ID}, {"unsilent":
ID}, {"obstacle": [ID, POS or null]}, {"present": [ID, POS]} (the servo is
moved there, as by hand).

Return delay time (register 7, 2 µs units, EEPROM): every servo starts at
0 (as LeRobot leaves it), or at --delay ID:VALUE (250, 500 µs, is the
factory value: scripts/teleop-bench starts every servo there); a servo's reply goes out its
return delay after the instruction came in (in a SYNC READ, after the servo
before it), a deadline the simulator sleeps to; there is no byte time. A
write of it is logged as {"t", "id", "event": "delay", "old", "new", "lock"}
("lock": the lock flag, 55, when it was written; 0 = the value is kept at
power-off).

--log-replies also logs every status packet sent (see --help).

--hand ID:LOW:HIGH moves servo ID by one tick at each read of its present
position (see simbus.Hand), logging each read as {"t", "id", "read"}.
"""
import argparse
import os
import random
import sys
import time

from simbus import Hand, Log, serve

BROADCAST = 0xFE
PING, READ, WRITE, SYNC_READ, SYNC_WRITE = 0x01, 0x02, 0x03, 0x82, 0x83
MODEL, ID, DELAY, TORQUE, GOAL, PRESENT, SPEED, LOAD, MOVING = 3, 5, 7, 40, 42, 56, 58, 60, 66
LOCK = 55
OVERLOAD = 32
# Seconds of pushing against an obstacle before the overload flag.
OVERLOAD_AFTER = 1.0
# Registers a WRITE may change: the RAM control block from torque enable
# up to the lock flag (40..55), plus the EEPROM return delay, position
# limits and mode.
WRITABLE = {DELAY} | set(range(9, 13)) | {31, 32, 33} | set(range(40, 56))


def checksum(body):
    return (~sum(body)) & 0xFF


def packet(ident, code, params=b""):
    body = bytes([ident, len(params) + 2, code]) + bytes(params)
    return b"\xff\xff" + body + bytes([checksum(body)])


class Servo:
    def __init__(self, ident, present, model, big_endian=False, top=4095):
        self.id = ident
        self.big = big_endian
        self.table = bytearray(256)
        self.set_word(MODEL, model)
        self.table[ID] = ident
        self.table[DELAY] = 0
        self.table[LOCK] = 1
        self.set_word(9, 0)
        self.set_word(11, top)
        self.table[62] = 120  # 12.0 V
        self.table[63] = 30  # 30 degrees C
        self.set_word(PRESENT, present)
        self.set_word(GOAL, present)
        self.position = float(present)
        self.flags = 0
        self.obstacle = None
        self.pushing = 0.0
        self.silent = False
        self.silent_after = None
        self.goals = 0

    def word(self, addr):
        lo, hi = (addr + 1, addr) if self.big else (addr, addr + 1)
        return self.table[lo] | (self.table[hi] << 8)

    def set_word(self, addr, value):
        lo, hi = (addr + 1, addr) if self.big else (addr, addr + 1)
        self.table[lo] = value & 0xFF
        self.table[hi] = (value >> 8) & 0xFF

    def move(self, dt, speed):
        if not self.table[TORQUE]:
            self.table[MOVING] = 0
            self.report(0, 0, dt)
            return
        goal = self.word(GOAL)
        step = speed * dt
        delta = goal - self.position
        sign = 1 if delta > 0 else -1
        target = goal if abs(delta) <= step else self.position + step * sign
        blocked = False
        if self.obstacle is not None:
            o, side = self.obstacle
            # The servo stays on its side of the obstacle.
            if side * (target - o) < 0 or (target == o and side * (goal - o) < 0):
                target, blocked = o, True
        self.position = target
        self.set_word(PRESENT, int(round(self.position)))
        self.table[MOVING] = int(self.word(PRESENT) != goal and not blocked)
        if blocked:
            self.report(0, 900 * sign, dt)
        elif self.table[MOVING]:
            self.report(int(speed) * sign, 100 * sign, dt)
        else:
            self.report(0, 0, dt)

    def block_at(self, pos):
        """An obstacle at `pos` (None: none), on the far side from where the
        servo is now."""
        self.obstacle = None if pos is None else (pos, 1 if self.position >= pos else -1)

    def report(self, speed, load, dt):
        """Present speed and load (sign-magnitude) and the overload flag."""
        self.set_word(SPEED, min(abs(speed), 0x7FFF) | (0x8000 if speed < 0 else 0))
        self.set_word(LOAD, min(abs(load), 1000) | (0x400 if load < 0 else 0))
        self.pushing = self.pushing + dt if abs(load) >= 900 else 0.0

    def error_byte(self):
        """Its status packets' error byte: the flags it was started with,
        and overload after pushing against an obstacle for a while."""
        return self.flags | (OVERLOAD if self.pushing >= OVERLOAD_AFTER else 0)


class Bus:
    def __init__(self, args):
        self.fd = self.slave = None  # set by simbus.serve
        self.speed = args.speed
        self.garbage = args.garbage
        self.rng = random.Random(1)
        self.record = Log(args.log).record
        presents = args.present
        if len(presents) == 1:
            presents = presents * len(args.ids)
        if len(presents) != len(args.ids):
            sys.exit("feetech_bus: --present needs one value or one per id")
        models = dict(args.model)
        self.sync_read = not args.scs
        default_model, top = (1284, 1023) if args.scs else (777, 4095)
        self.servos = {i: Servo(i, p, models.get(i, default_model), args.scs, top)
                       for i, p in zip(args.ids, presents)}
        for i, bits in args.flags:
            self.servos[i].flags = bits
        for i, delay in args.delay:
            self.servos[i].table[DELAY] = delay
        for i, pos in args.obstacle:
            self.servos[i].block_at(pos)
        for i in args.silent:
            if args.silent_after_goals is None:
                self.servos[i].silent = True
            else:
                self.servos[i].silent_after = args.silent_after_goals
        self.buf = bytearray()
        self.hands = {h.id: h for h in args.hand}
        self.log_replies = args.log_replies
        # The instruction being answered, and when its bytes came in.
        self.inst, self.heard = None, None
        # The same on the monotonic clock, and when the bus is free again
        # (the end of the last reply's return delay).
        self.heard_at = self.free = 0.0

    def live(self, ident):
        s = self.servos.get(ident)
        return s if s is not None and not s.silent else None

    def read(self, servo, addr, n):
        """The bytes a READ or SYNC READ of servo gets; a hand moves it first
        when the read covers its present position."""
        hand = self.hands.get(servo.id)
        if hand and addr <= PRESENT < addr + n:
            pos = hand.next()
            servo.position = float(pos)
            servo.set_word(PRESENT, pos)
            self.record(id=servo.id, read=pos)
        return servo.table[addr:addr + n]

    def reply(self, servo, params=b""):
        out = b""
        if self.garbage:
            junk = bytes(self.rng.randrange(0, 0xFF) for _ in range(self.rng.randrange(1, 8)))
            bad = bytearray(packet(servo.id, 0, b"\x00\x00"))
            bad[-1] ^= 0x5A
            out += junk + bytes(bad) + b"\xff"
        out += packet(servo.id, servo.error_byte(), params)
        due = max(self.free, self.heard_at) + servo.table[DELAY] * 2e-6
        left = due - time.monotonic()
        if left > 0:
            time.sleep(left)
        self.free = due
        os.write(self.fd, out)
        if self.log_replies:
            self.record(id=servo.id, reply=self.inst, bytes=len(out), heard=self.heard)

    def write(self, servo, addr, data, via):
        old_delay = servo.table[DELAY]
        for k, b in enumerate(data):
            if addr + k in WRITABLE:
                servo.table[addr + k] = b
        if addr <= GOAL + 1 and addr + len(data) > GOAL:
            servo.goals += 1
            self.record(id=servo.id, goal=servo.word(GOAL), present=servo.word(PRESENT), via=via)
            if servo.silent_after is not None and servo.goals >= servo.silent_after:
                servo.silent = True
                self.record(id=servo.id, event="silent")
        if addr <= TORQUE < addr + len(data):
            self.record(id=servo.id, torque=servo.table[TORQUE])
        if addr <= DELAY < addr + len(data):
            self.record(id=servo.id, event="delay", old=old_delay, new=servo.table[DELAY],
                        lock=servo.table[LOCK])

    def handle(self, ident, code, p):
        self.inst = code
        if code == PING:
            targets = sorted(self.servos) if ident == BROADCAST else [ident]
            for i in targets:
                s = self.live(i)
                if s:
                    self.reply(s)
        elif code == READ and len(p) == 2:
            s = self.live(ident)
            if s and p[0] + p[1] <= 256:
                self.reply(s, self.read(s, p[0], p[1]))
        elif code == WRITE and len(p) >= 2:
            targets = list(self.servos) if ident == BROADCAST else [ident]
            for i in targets:
                s = self.live(i)
                if s:
                    self.write(s, p[0], p[1:], "write")
                    if ident != BROADCAST:
                        self.reply(s)
        elif code == SYNC_WRITE and ident == BROADCAST and len(p) >= 2:
            addr, n = p[0], p[1]
            blocks = p[2:]
            if n == 0 or len(blocks) % (n + 1):
                return
            for k in range(0, len(blocks), n + 1):
                s = self.live(blocks[k])
                if s:
                    self.write(s, addr, blocks[k + 1:k + 1 + n], "sync_write")
        elif code == SYNC_READ and ident == BROADCAST and len(p) >= 3 and self.sync_read:
            addr, n = p[0], p[1]
            for i in p[2:]:
                s = self.live(i)
                if s and addr + n <= 256:
                    self.reply(s, self.read(s, addr, n))

    def feed(self, data):
        """Splits the byte stream into instruction packets; resynchronises
        on the next header after anything invalid."""
        self.heard, self.heard_at = time.time(), time.monotonic()
        self.buf += data
        while True:
            start = self.buf.find(b"\xff\xff")
            if start < 0:
                del self.buf[:max(0, len(self.buf) - 1)]
                return
            del self.buf[:start]
            if len(self.buf) < 4:
                return
            ident, length = self.buf[2], self.buf[3]
            if ident == 0xFF or length < 2:
                del self.buf[:1]
                continue
            total = length + 4
            if len(self.buf) < total:
                return
            body = bytes(self.buf[2:total - 1])
            ok = checksum(body) == self.buf[total - 1]
            if not ok:
                del self.buf[:2]
                continue
            del self.buf[:total]
            self.handle(ident, body[2], body[3:])

    def step(self, dt):
        for s in self.servos.values():
            s.move(dt, self.speed)

    def control(self, cmd):
        if "silent" in cmd:
            self.servos[cmd["silent"]].silent = True
        if "unsilent" in cmd:
            self.servos[cmd["unsilent"]].silent = False
        if "obstacle" in cmd:
            i, pos = cmd["obstacle"]
            self.servos[i].block_at(pos)
        if "present" in cmd:
            i, pos = cmd["present"]
            self.servos[i].position = float(pos)
            self.servos[i].set_word(PRESENT, pos)
        return {"servos": {str(i): {"present": s.word(PRESENT), "goal": s.word(GOAL),
                                    "torque": s.table[TORQUE], "load": s.word(LOAD),
                                    "flags": s.error_byte(), "silent": s.silent,
                                    "delay": s.table[DELAY], "lock": s.table[LOCK]}
                           for i, s in self.servos.items()}}


def pair(text):
    a, b = text.split(":")
    return int(a), int(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ids", type=lambda t: [int(x) for x in t.split(",")], default=[1, 2, 3, 4, 5])
    ap.add_argument("--present", type=lambda t: [int(x) for x in t.split(",")], default=[2048])
    ap.add_argument("--speed", type=float, default=3000.0, help="ticks per second with torque on")
    ap.add_argument("--log", help="JSON lines of goal and torque writes")
    ap.add_argument("--log-replies", action="store_true",
                    help="log each status packet sent: {t, id, reply (instruction), bytes, "
                         "heard (when the instruction came in)}")
    ap.add_argument("--silent", type=int, action="append", default=[])
    ap.add_argument("--silent-after-goals", type=int)
    ap.add_argument("--flags", type=pair, action="append", default=[])
    ap.add_argument("--delay", type=pair, action="append", default=[],
                    help="ID:VALUE, the servo's return delay time (default 0; factory 250, 2 us units)")
    ap.add_argument("--model", type=pair, action="append", default=[])
    ap.add_argument("--obstacle", type=pair, action="append", default=[])
    ap.add_argument("--garbage", action="store_true")
    ap.add_argument("--hand", type=Hand, action="append", default=[])
    ap.add_argument("--scs", action="store_true", help="SCS0009 servos (big-endian, 0..1023, no SYNC READ)")
    args = ap.parse_args()

    serve(Bus(args))


if __name__ == "__main__":
    main()
