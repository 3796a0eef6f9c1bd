"""Reads a rosbag2 bag with the independent `rosbags` library and prints
every message decoded, as JSON lines: topic, type, log time, the header
when the message has one, and the fields (joint states: name, position,
velocity; targets: position, orientation).

usage: read_bag.py BAG   (a bag folder, or a bare .mcap file)
"""
import json
import sys
from pathlib import Path

from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore


def main() -> None:
    path = Path(sys.argv[1])
    store = get_typestore(Stores.ROS2_HUMBLE)
    with AnyReader([path], default_typestore=store) as r:
        for conn, t, raw in r.messages():
            msg = r.deserialize(raw, conn.msgtype)
            row = {
                'topic': conn.topic,
                'type': conn.msgtype,
                't': t,
                'big_endian': raw[1] == 0,
            }
            if hasattr(msg, 'header'):
                row['stamp'] = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
                row['frame_id'] = msg.header.frame_id
            if conn.msgtype == 'sensor_msgs/msg/JointState':
                row['name'] = list(msg.name)
                row['position'] = [float(x) for x in msg.position]
                row['velocity'] = [float(x) for x in msg.velocity]
            elif conn.msgtype == 'geometry_msgs/msg/PoseStamped':
                p, q = msg.pose.position, msg.pose.orientation
                row['position'] = [p.x, p.y, p.z]
                row['orientation'] = [q.x, q.y, q.z, q.w]
            elif conn.msgtype == 'geometry_msgs/msg/PointStamped':
                p = msg.point
                row['position'] = [p.x, p.y, p.z]
            print(json.dumps(row))


if __name__ == '__main__':
    main()
