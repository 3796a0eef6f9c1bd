#!/usr/bin/env python3
"""Captures the exact bytes the ROBOTIS Dynamixel SDK (`dynamixel_sdk`, PyPI
`dynamixel-sdk`) sends for a fixed set of Protocol 2.0 instructions, for
tests/dynamixel_sdk.rs to compare with arm_ik's encoder byte for byte.

The SDK is pointed at the slave end of a pty pair; this script reads the
master end.

Byte stuffing: the SDK's txPacket calls its own stuffer (addStuffing) but
drops the stuffed copy it returns whenever stuffing changes the packet, so on
the wire it sends `FF FF FD` inside parameters unstuffed, which the e-manual
forbids. For those cases this script also records, under "<case>_sdk_stuffer",
the packet the SDK's stuffer and CRC make of the same instruction: what the
SDK means to send, and what arm_ik sends. Nothing answers, so calls that wait for a status packet time out
(the SDK's own timeouts, tens of ms): only what was written matters.

Prints one JSON object: {"sdk_version": ..., "cases": {name: [bytes...]}}.
Case names and parameters must match the table in tests/dynamixel_sdk.rs.
"""
import importlib.metadata
import json
import sys

import dynamixel_sdk as dxl

from simbus import Capture

GOALS_6 = [(1, 0), (2, 1000), (3, 2048), (4, 3000), (5, 4095), (6, -1000)]
IDS_6 = [1, 2, 3, 4, 5, 6]


def u32(v):
    """The SDK's four little-endian bytes of a (possibly negative) value."""
    return [dxl.DXL_LOBYTE(dxl.DXL_LOWORD(v)), dxl.DXL_HIBYTE(dxl.DXL_LOWORD(v)),
            dxl.DXL_LOBYTE(dxl.DXL_HIWORD(v)), dxl.DXL_HIBYTE(dxl.DXL_HIWORD(v))]


def sdk_stuffer(ph, txpacket):
    """The packet txPacket means to send: the SDK's own stuffer and CRC
    applied to `txpacket` (laid out as the SDK lays it out, header left 0)."""
    pkt = ph.addStuffing(list(txpacket))
    total = dxl.DXL_MAKEWORD(pkt[5], pkt[6]) + 7
    pkt[0:4] = [0xFF, 0xFF, 0xFD, 0x00]
    crc = ph.updateCRC(0, pkt, total - 2)
    pkt[total - 2:total] = [dxl.DXL_LOBYTE(crc), dxl.DXL_HIBYTE(crc)]
    return pkt[:total]


def main():
    pty = Capture("dynamixel_capture", gap=0.02)
    port = dxl.PortHandler(pty.path)
    if not port.openPort() or not port.setBaudRate(1000000):
        sys.exit("dynamixel_capture: cannot open the pty with the SDK")
    ph = dxl.PacketHandler(2.0)
    capture, cases = pty.capture, pty.cases

    for sid in (0, 1, 252):
        capture("ping_%d" % sid, lambda: ph.ping(port, sid))
    capture("ping_broadcast", lambda: ph.broadcastPing(port))
    capture("reboot_1", lambda: ph.reboot(port, 1))
    capture("read_1_132_4", lambda: ph.readTxRx(port, 1, 132, 4))
    capture("read1_7_11", lambda: ph.read1ByteTxRx(port, 7, 11))
    capture("read2_3_0", lambda: ph.read2ByteTxRx(port, 3, 0))
    capture("read4_2_132", lambda: ph.read4ByteTxRx(port, 2, 132))
    capture("write1_1_64_1", lambda: ph.write1ByteTxRx(port, 1, 64, 1))
    capture("write1_broadcast_64_0", lambda: ph.write1ByteTxOnly(port, dxl.BROADCAST_ID, 64, 0))
    capture("write2_3_102_200", lambda: ph.write2ByteTxRx(port, 3, 102, 200))
    capture("write4_2_116_2048", lambda: ph.write4ByteTxRx(port, 2, 116, 2048))
    capture("write4_1_20_-1470", lambda: ph.write4ByteTxRx(port, 1, 20, -1470))
    # 0x00FDFFFF puts FF FF FD in the parameters: the SDK stuffs an FD.
    capture("write4_1_116_stuffed", lambda: ph.write4ByteTxRx(port, 1, 116, 0x00FDFFFF))
    tx = [0] * 16
    tx[4:8] = [1, 9, 0, dxl.INST_WRITE]
    tx[8:14] = [116, 0] + u32(0x00FDFFFF)
    cases["write4_1_116_stuffed_sdk_stuffer"] = sdk_stuffer(ph, tx)

    def sync_write(name, start, length, values):
        def run():
            group = dxl.GroupSyncWrite(port, ph, start, length)
            for sid, v in values:
                assert group.addParam(sid, u32(v)[:length])
            group.txPacket()
        capture(name, run)

    sync_write("sync_write_116_4_6", 116, 4, GOALS_6)
    sync_write("sync_write_112_4_2", 112, 4, [(1, 300), (2, 0)])
    sync_write("sync_write_116_4_stuffed", 116, 4, [(1, 0x00FDFFFF), (2, 2048)])
    params = [1] + u32(0x00FDFFFF) + [2] + u32(2048)
    tx = [0] * (len(params) + 14)
    tx[4:8] = [dxl.BROADCAST_ID, len(params) + 7, 0, dxl.INST_SYNC_WRITE]
    tx[8:12] = [116, 0, 4, 0]
    tx[12:12 + len(params)] = params
    cases["sync_write_116_4_stuffed_sdk_stuffer"] = sdk_stuffer(ph, tx)

    def sync_read(name, start, length, ids, fast):
        def run():
            group = dxl.GroupSyncRead(port, ph, start, length)
            for sid in ids:
                assert group.addParam(sid)
            # The receive path releases the SDK's port lock (it then times
            # out: nobody answers).
            group.fastSyncRead() if fast else group.txRxPacket()
        capture(name, run)

    sync_read("sync_read_132_4_6", 132, 4, IDS_6, False)
    sync_read("sync_read_126_10_2", 126, 10, [1, 2], False)
    sync_read("fast_sync_read_132_4_6", 132, 4, IDS_6, True)
    sync_read("fast_sync_read_132_4_3", 132, 4, [3, 7, 4], True)

    port.closePort()
    pty.close()
    print(json.dumps({
        "sdk_version": importlib.metadata.version("dynamixel-sdk"),
        "cases": cases,
    }))


if __name__ == "__main__":
    main()
