#!/usr/bin/env python3
"""Captures the exact bytes the Feetech vendor SDK (`scservo_sdk`, PyPI
`feetech-servo-sdk`) sends for a fixed set of instructions, for
tests/feetech_sdk.rs to compare with arm_ik's encoder byte for byte.

The SDK is pointed at the slave end of a pty pair; this script reads the
master end. Nothing answers, so calls that wait for a status packet time out
after about 34 ms (the SDK's own timeout): only what was written matters.

Prints one JSON object: {"sdk_version": ..., "cases": {name: [bytes...]}}.
Case names and parameters must match the table in tests/feetech_sdk.rs.
"""
import importlib.metadata
import json
import sys

import scservo_sdk as scs

from simbus import Capture


def main():
    pty = Capture("feetech_capture")
    port = scs.PortHandler(pty.path)
    if not port.openPort():
        sys.exit("feetech_capture: cannot open the pty with the SDK")
    capture = pty.capture

    # STS: PacketHandler(0) = little-endian 2-byte values.
    ph = scs.PacketHandler(0)
    for sid in (0, 1, 0xFC):
        capture("ping_%d" % sid, lambda: ph.ping(port, sid))
    capture("read_1_56_2", lambda: ph.readTxRx(port, 1, 56, 2))
    capture("read_7_3_2", lambda: ph.read2ByteTxRx(port, 7, 3))
    capture("write1_1_40_1", lambda: ph.write1ByteTxRx(port, 1, 40, 1))
    capture("write2_sts_3_42_3000", lambda: ph.write2ByteTxRx(port, 3, 42, 3000))
    capture("write2_sts_broadcast_42_2048", lambda: ph.write2ByteTxOnly(port, 0xFE, 42, 2048))
    # The "write position with speed" block: acc 50, position 1234, time 0, speed 2400.
    block = [50, scs.SCS_LOBYTE(1234), scs.SCS_HIBYTE(1234), 0, 0,
             scs.SCS_LOBYTE(2400), scs.SCS_HIBYTE(2400)]
    capture("write_pos_speed_sts_2", lambda: ph.writeTxRx(port, 2, 41, 7, block))

    def sync_write(name, goals, start=42, length=2):
        def run():
            group = scs.GroupSyncWrite(port, ph, start, length)
            for sid, data in goals:
                assert group.addParam(sid, data)
            group.txPacket()
        capture(name, run)

    words = lambda goals: [(sid, [scs.SCS_LOBYTE(v), scs.SCS_HIBYTE(v)]) for sid, v in goals]
    sync_write("sync_write_sts_1", words([(1, 2048)]))
    sync_write("sync_write_sts_6", words([(1, 0), (2, 1000), (3, 2048), (4, 3000), (5, 4095), (6, 511)]))
    sync_write("sync_write_pos_speed_sts_2",
               [(sid, [a, scs.SCS_LOBYTE(p), scs.SCS_HIBYTE(p), 0, 0, scs.SCS_LOBYTE(s), scs.SCS_HIBYTE(s)])
                for sid, p, s, a in [(1, 100, 500, 10), (9, 4000, 3000, 254)]],
               start=41, length=7)

    def sync_read(name, start, length, ids):
        def run():
            group = scs.GroupSyncRead(port, ph, start, length)
            for sid in ids:
                assert group.addParam(sid)
            # txRxPacket, not txPacket: only the receive path releases the
            # SDK's port lock (it then times out, nobody answers).
            group.txRxPacket()
        capture(name, run)

    sync_read("sync_read_56_2_123", 56, 2, [1, 2, 3])
    sync_read("sync_read_56_8_6", 56, 8, [1, 2, 3, 4, 5, 6])

    # SCS: PacketHandler(1) = big-endian 2-byte values (a global in the SDK).
    ph = scs.PacketHandler(1)
    capture("write2_scs_3_42_3000", lambda: ph.write2ByteTxRx(port, 3, 42, 3000))
    sync_write("sync_write_scs_3", words([(1, 300), (2, 512), (3, 1023)]))
    block = [50, scs.SCS_LOBYTE(1234), scs.SCS_HIBYTE(1234), 0, 0,
             scs.SCS_LOBYTE(2400), scs.SCS_HIBYTE(2400)]
    capture("write_pos_speed_scs_2", lambda: ph.writeTxRx(port, 2, 41, 7, block))

    port.closePort()
    pty.close()
    print(json.dumps({
        "sdk_version": importlib.metadata.version("feetech-servo-sdk"),
        "cases": pty.cases,
    }))


if __name__ == "__main__":
    main()
