"""Writes a rosbag2 target bag with the independent `rosbags` library.

usage: write_bag.py OUT_DIR STORAGE(mcap|sqlite3) ENDIAN(le|be) TYPE(pose|point) COUNT

Targets: message k at log time 1.7e18 + k * 20 ms, header stamp = log time,
frame base_link, position (0.2, 0.001 k, 0.15), orientation (0, 0, 0, 1)
for poses. Also writes an /other topic (std_msgs/msg/String) so replay has
to pick its topic. Prints the values written as JSON on stdout.
"""
import json
import sys
from pathlib import Path

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore


def main() -> None:
    out, storage, endian, kind, count = sys.argv[1:6]
    count = int(count)
    store = get_typestore(Stores.ROS2_HUMBLE)
    Header = store.types['std_msgs/msg/Header']
    Time = store.types['builtin_interfaces/msg/Time']
    Point = store.types['geometry_msgs/msg/Point']
    Quat = store.types['geometry_msgs/msg/Quaternion']
    Pose = store.types['geometry_msgs/msg/Pose']
    PoseStamped = store.types['geometry_msgs/msg/PoseStamped']
    PointStamped = store.types['geometry_msgs/msg/PointStamped']
    String = store.types['std_msgs/msg/String']
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    little = endian == 'le'
    typename = (
        'geometry_msgs/msg/PoseStamped' if kind == 'pose' else 'geometry_msgs/msg/PointStamped'
    )
    written = []
    with Writer(Path(out), version=8, storage_plugin=plugin) as w:
        conn = w.add_connection('/target_pose', typename, typestore=store)
        other = w.add_connection('/other', 'std_msgs/msg/String', typestore=store)
        for k in range(count):
            t = 1_700_000_000_000_000_000 + k * 20_000_000
            header = Header(stamp=Time(sec=t // 10**9, nanosec=t % 10**9), frame_id='base_link')
            p = Point(x=0.2, y=0.001 * k, z=0.15)
            if kind == 'pose':
                msg = PoseStamped(
                    header=header, pose=Pose(position=p, orientation=Quat(x=0.0, y=0.0, z=0.0, w=1.0))
                )
            else:
                msg = PointStamped(header=header, point=p)
            w.write(conn, t, bytes(store.serialize_cdr(msg, typename, little_endian=little)))
            written.append({'t': t, 'position': [p.x, p.y, p.z]})
            if k % 10 == 0:
                s = store.serialize_cdr(String(data='noise'), 'std_msgs/msg/String', little_endian=little)
                w.write(other, t, bytes(s))
    json.dump(written, sys.stdout)


if __name__ == '__main__':
    main()
