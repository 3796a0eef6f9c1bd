#!/usr/bin/env python3
"""Drives the simulated bus (dynamixel_bus.py) with ROBOTIS' Dynamixel SDK
(`dynamixel_sdk`), for tests/dynamixel_sdk.rs: if the vendor's SDK gets the
answers it expects from the simulator, the simulator answers like the servos
do, and the tests of arm_ik's driver can trust it as their peer.

The simulator has id 1 (XL430-W250), 2 (XL330-M288), 3 (XL330-M077) at 1000,
2000, 3000 ticks, id 4 (XM430-W350) with an overload latched, and id 9
silent. Prints one JSON object: for each SDK call, {"ok": the communication
succeeded, "error": the status error byte, "value": what it returned}, and
the simulator's log.
"""
import json
import sys
import time

import dynamixel_sdk as dxl

from simbus import with_sim
import dynamixel_sdk.port_handler as sdk_port

# The SDK waits 2 x its USB latency timer (16 ms) + 2 ms for a reply, sized
# for an FTDI adapter. The peer here is a Python process on a shared 2-core
# machine that may be descheduled longer than that while a build runs; a
# longer wait changes no byte on the wire, it only keeps a slow reply from
# counting as none.
sdk_port.LATENCY_TIMER = 100

SIM_ARGS = ["--ids", "1,2,3,4,9", "--present", "1000,2000,3000,500,500",
            "--model", "1:xl430-w250", "--model", "2:xl330-m288", "--model", "3:xl330-m077",
            "--model", "4:xm430-w350", "--hw-error", "4:32", "--silent", "9",
            "--speed", "100000"]


def main():
    print(json.dumps(with_sim("dynamixel_bus.py", SIM_ARGS, session, "dynamixel_sdk_bus")))


def session(path):
    port = dxl.PortHandler(path)
    if not port.openPort() or not port.setBaudRate(1000000):
        sys.exit("dynamixel_sdk_bus: the SDK cannot open %s" % path)
    ph = dxl.PacketHandler(2.0)
    out = {}

    def record(name, result):
        """(value..., comm result, servo error) or (comm result, servo error)."""
        *value, comm, error = result
        out[name] = {"ok": comm == dxl.COMM_SUCCESS, "error": error,
                     "value": value[0] if len(value) == 1 else value}

    for sid in (1, 2, 3, 4, 9):
        record("ping_%d" % sid, ph.ping(port, sid))
    found, comm = ph.broadcastPing(port)
    out["broadcast_ping"] = {"ok": comm == dxl.COMM_SUCCESS, "error": 0,
                             "value": {str(k): v for k, v in found.items()}}
    for sid in (1, 2, 3):
        record("present_%d" % sid, ph.read4ByteTxRx(port, sid, 132))
    record("firmware_2", ph.read1ByteTxRx(port, 2, 6))

    # EEPROM is locked while the torque is on; a mode the model lacks is refused.
    record("torque_2", ph.write1ByteTxRx(port, 2, 64, 1))
    record("mode_2_torque_on", ph.write1ByteTxRx(port, 2, 11, 4))
    record("torque_2_off", ph.write1ByteTxRx(port, 2, 64, 0))
    record("mode_2_torque_off", ph.write1ByteTxRx(port, 2, 11, 4))
    record("mode_2", ph.read1ByteTxRx(port, 2, 11))
    record("mode_1_current_based", ph.write1ByteTxRx(port, 1, 11, 5))
    record("half_goal_2", ph.write2ByteTxRx(port, 2, 116, 5))

    # A goal and a slow profile: moving while under way, then there.
    record("profile_2", ph.write4ByteTxRx(port, 2, 112, 200))
    record("goal_2", ph.write4ByteTxRx(port, 2, 116, 3000))
    record("torque_2_again", ph.write1ByteTxRx(port, 2, 64, 1))
    time.sleep(0.05)
    record("moving_2_early", ph.read1ByteTxRx(port, 2, 122))
    time.sleep(0.7)
    record("moving_2_late", ph.read1ByteTxRx(port, 2, 122))

    group = dxl.GroupSyncWrite(port, ph, 116, 4)
    for sid, goal in ((1, 1200), (3, 2800)):
        group.addParam(sid, list(goal.to_bytes(4, "little")))
    out["sync_write"] = {"ok": group.txPacket() == dxl.COMM_SUCCESS, "error": 0, "value": None}
    for sid in (1, 3):
        record("torque_%d" % sid, ph.write1ByteTxRx(port, sid, 64, 1))
    time.sleep(0.2)
    for name, fast in (("sync_read", False), ("fast_sync_read", True)):
        reader = dxl.GroupSyncRead(port, ph, 132, 4)
        for sid in (1, 2, 3):
            reader.addParam(sid)
        result = reader.fastSyncRead() if fast else reader.txRxPacket()
        out[name] = {"ok": result == dxl.COMM_SUCCESS, "error": 0,
                     "value": [reader.getData(sid, 132, 4) for sid in (1, 2, 3)]}

    # The latched overload of id 4: alert bit, torque refused, cleared by REBOOT.
    record("hw_error_4", ph.read1ByteTxRx(port, 4, 70))
    record("torque_4", ph.write1ByteTxRx(port, 4, 64, 1))
    record("reboot_4", ph.reboot(port, 4))
    record("hw_error_4_after_reboot", ph.read1ByteTxRx(port, 4, 70))

    # At another baud rate the servos hear garbage.
    port.setBaudRate(57600)
    record("ping_1_at_57600", ph.ping(port, 1))
    port.setBaudRate(1000000)
    record("ping_1_back_at_1M", ph.ping(port, 1))
    port.closePort()
    return out


if __name__ == "__main__":
    main()
