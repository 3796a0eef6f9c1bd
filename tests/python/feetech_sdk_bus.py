#!/usr/bin/env python3
"""Drives the simulated bus (feetech_bus.py) with the Feetech vendor SDK
(`scservo_sdk`), for tests/feetech_sdk.rs: if the SDK that has driven real
STS3215 servos for years gets the answers it expects from the simulator,
the simulator answers like the servos do, and tests/feetech_bus.rs can
trust it as the peer of arm_ik's driver.

Starts the simulator with ids 1, 2, 3 at 1000, 2000, 3000 ticks and id 9
silent; prints one JSON object with what the SDK saw: the communication
result and value of each call, and the simulator's log of goal writes.
Then the same for SCS0009 servos (simulator --scs, the SDK's big-endian
PacketHandler(1)), under the key "scs".
"""
import json
import sys
import time

import scservo_sdk as scs

from simbus import with_sim
import scservo_sdk.port_handler as sdk_port

# The SDK waits 2 x its USB latency timer (16 ms) + 2 ms for a reply, sized
# for an FTDI adapter. The peer here is a Python process on a shared 2-core
# machine that may be descheduled longer than that while a build runs; a
# longer wait changes no byte on the wire, it only keeps a slow reply from
# counting as none.
sdk_port.LATENCY_TIMER = 100


def main():
    out = sim(["--ids", "1,2,3,9", "--present", "1000,2000,3000,500", "--silent", "9"], run)
    out["scs"] = sim(["--scs", "--ids", "1,2", "--present", "300,700"], run_scs)
    print(json.dumps(out))


def sim(args, session):
    """Runs `session(pty path)` against a simulator started with `args`
    (servos moving at 100000 ticks/s); adds the simulator's log."""
    return with_sim("feetech_bus.py", args + ["--speed", "100000"], session, "feetech_sdk_bus")


def recorder(out):
    """(value..., comm result, servo error) -> out[name] = {"ok": bool, "value": ..., "error": ...}"""
    def record(name, result):
        *value, comm, error = result if isinstance(result, tuple) else (result, 0)
        out[name] = {"ok": comm == scs.COMM_SUCCESS, "error": error,
                     "value": value[0] if len(value) == 1 else value}
    return record


def open_port(path):
    port = scs.PortHandler(path)
    if not port.openPort():
        sys.exit("feetech_sdk_bus: the SDK cannot open %s" % path)
    return port


def run(path):
    port = open_port(path)
    ph = scs.PacketHandler(0)  # STS: little-endian
    ok = scs.COMM_SUCCESS
    out = {}
    record = recorder(out)

    for sid in (1, 2, 3, 9):
        record("ping_%d" % sid, ph.ping(port, sid))
    for sid in (1, 2, 3):
        record("present_%d" % sid, ph.read2ByteTxRx(port, sid, 56))
    record("write_goal_2", ph.write2ByteTxRx(port, 2, 42, 2500))
    record("torque_2", ph.write1ByteTxRx(port, 2, 40, 1))
    group = scs.GroupSyncWrite(port, ph, 42, 2)
    for sid, goal in ((1, 1200), (3, 2800)):
        group.addParam(sid, [scs.SCS_LOBYTE(goal), scs.SCS_HIBYTE(goal)])
    record("sync_write", (group.txPacket(), 0))
    for sid in (1, 3):
        record("torque_%d" % sid, ph.write1ByteTxRx(port, sid, 40, 1))
    time.sleep(0.2)  # the servos move at 100000 ticks/s: arrived
    reader = scs.GroupSyncRead(port, ph, 56, 2)
    for sid in (1, 2, 3):
        reader.addParam(sid)
    result = reader.txRxPacket()
    out["sync_read"] = {"ok": result == ok,
                        "value": [reader.getData(sid, 56, 2) for sid in (1, 2, 3)]}
    for sid in (1, 2, 3):
        record("goal_%d" % sid, ph.read2ByteTxRx(port, sid, 42))
    port.closePort()
    return out


def run_scs(path):
    """SCS0009 servos: PacketHandler(1) packs and reads words big-endian
    (the setting is global in the SDK, so this runs after run())."""
    port = open_port(path)
    ph = scs.PacketHandler(1)
    out = {}
    record = recorder(out)
    for sid in (1, 2):
        record("ping_%d" % sid, ph.ping(port, sid))
        record("present_%d" % sid, ph.read2ByteTxRx(port, sid, 56))
    record("write_goal_1", ph.write2ByteTxRx(port, 1, 42, 900))
    group = scs.GroupSyncWrite(port, ph, 42, 2)
    group.addParam(2, [scs.SCS_LOBYTE(100), scs.SCS_HIBYTE(100)])
    record("sync_write", (group.txPacket(), 0))
    for sid in (1, 2):
        record("torque_%d" % sid, ph.write1ByteTxRx(port, sid, 40, 1))
    time.sleep(0.2)
    for sid in (1, 2):
        record("moved_%d" % sid, ph.read2ByteTxRx(port, sid, 56))
    port.closePort()
    return out


if __name__ == "__main__":
    main()
