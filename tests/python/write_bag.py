"""Writes a rosbag2 target bag with the independent `rosbags` library.

usage: write_bag.py OUT_DIR STORAGE(mcap|sqlite3) ENDIAN(le|be) TYPE(pose|point) COUNT
                    [COMPRESSION(none|file|message) [VERSION(8|9) [SPLIT(1|2)]]]
                    [stamp_offset=SECONDS] [clock=1]

Targets: message k at log time 1.7e18 + k * 20 ms, header stamp = log time,
frame base_link, position (0.2, 0.001 k, 0.15), orientation (0, 0, 0, 1)
for poses; poses on /target_pose, points on /target_point, as ik_node
subscribes. Also writes an /other topic (std_msgs/msg/String) so replay
has to pick its topics. COMPRESSION is what `ros2 bag record
--compression-mode file|message --compression-format zstd` writes. SPLIT 2
writes the messages into two storage files, OUT_0 and OUT_1, with one
metadata.yaml listing both, as rosbag2 splits a recording. Prints the
values written as JSON on stdout.

stamp_offset=S writes what `ros2 bag record` makes of a bag played back
with `ros2 bag play --clock`: receive (log) times S seconds after the
header stamps, which keep the original recording's clock. clock=1 also
writes /clock (rosgraph_msgs/msg/Clock) at 40 Hz, as `ros2 bag play
--clock` publishes it: the original clock, received at its log time + S.
"""
import copy
import json
import shutil
import sys
import tempfile
from pathlib import Path

from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from ruamel.yaml import YAML

STORE = get_typestore(Stores.ROS2_HUMBLE)
T = STORE.types


def stamp(t: int) -> object:
    return T['builtin_interfaces/msg/Time'](sec=t // 10**9, nanosec=t % 10**9)


def target(kind: str, k: int, offset: int = 0) -> tuple[int, object, list[float]]:
    t = 1_700_000_000_000_000_000 + k * 20_000_000
    header = T['std_msgs/msg/Header'](stamp=stamp(t - offset), frame_id='base_link')
    p = T['geometry_msgs/msg/Point'](x=0.2, y=0.001 * k, z=0.15)
    if kind == 'pose':
        q = T['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)
        pose = T['geometry_msgs/msg/Pose'](position=p, orientation=q)
        msg = T['geometry_msgs/msg/PoseStamped'](header=header, pose=pose)
    else:
        msg = T['geometry_msgs/msg/PointStamped'](header=header, point=p)
    return t, msg, [p.x, p.y, p.z]


def write(out: Path, storage: str, little: bool, kind: str, ks: range, compression: str,
          version: int, offset: int = 0, clock: bool = False) -> list[dict]:
    typename = f'geometry_msgs/msg/{"PoseStamped" if kind == "pose" else "PointStamped"}'
    topic = '/target_pose' if kind == 'pose' else '/target_point'
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    w = Writer(out, version=version, storage_plugin=plugin)
    if compression != 'none':
        mode = CompressionMode.FILE if compression == 'file' else CompressionMode.MESSAGE
        w.set_compression(mode, CompressionFormat.ZSTD)
    written = []
    with w:
        conn = w.add_connection(topic, typename, typestore=STORE)
        other = w.add_connection('/other', 'std_msgs/msg/String', typestore=STORE)
        clock_type = 'rosgraph_msgs/msg/Clock'
        ticks = w.add_connection('/clock', clock_type, typestore=STORE) if clock else None
        next_clock = None
        for k in ks:
            t, msg, position = target(kind, k, offset)
            if ticks is not None:
                # /clock at 40 Hz up to this target, the first one before it.
                next_clock = t - 25_000_000 if next_clock is None else next_clock
                while next_clock <= t:
                    c = T[clock_type](clock=stamp(next_clock - offset))
                    w.write(ticks, next_clock, bytes(STORE.serialize_cdr(
                        c, clock_type, little_endian=little)))
                    next_clock += 25_000_000
            w.write(conn, t, bytes(STORE.serialize_cdr(msg, typename, little_endian=little)))
            written.append({'t': t, 'position': position})
            if k % 10 == 0:
                s = T['std_msgs/msg/String'](data='noise')
                w.write(other, t, bytes(STORE.serialize_cdr(s, 'std_msgs/msg/String',
                                                            little_endian=little)))
    return written


def merge_split(out: Path, parts: list[Path]) -> None:
    """One bag folder from single-file bags: their storage files renamed
    OUT_0, OUT_1, ..., and one metadata.yaml listing them in order."""
    yaml = YAML(typ='safe')
    metas = [yaml.load((p / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
             for p in parts]
    out.mkdir()
    merged = copy.deepcopy(metas[0])
    merged['relative_file_paths'] = []
    merged['files'] = []
    counts: dict[str, int] = {}
    for i, (part, meta) in enumerate(zip(parts, metas)):
        (src,) = [f for f in part.iterdir() if f.name != 'metadata.yaml']
        name = f'{out.name}_{i}{"".join(src.suffixes)}'
        shutil.move(str(src), out / name)
        merged['relative_file_paths'].append(name)
        merged['files'].append({**meta['files'][0], 'path': name})
        for t in meta['topics_with_message_count']:
            counts[t['topic_metadata']['name']] = (
                counts.get(t['topic_metadata']['name'], 0) + t['message_count'])
    for t in merged['topics_with_message_count']:
        t['message_count'] = counts[t['topic_metadata']['name']]
    merged['message_count'] = sum(m['message_count'] for m in metas)
    last = metas[-1]
    merged['duration']['nanoseconds'] = (
        last['starting_time']['nanoseconds_since_epoch'] + last['duration']['nanoseconds']
        - merged['starting_time']['nanoseconds_since_epoch'])
    with (out / 'metadata.yaml').open('w') as f:
        yaml.dump({'rosbag2_bagfile_information': merged}, f)


def main() -> None:
    args = [a for a in sys.argv[1:] if '=' not in a]
    opts = dict(a.split('=', 1) for a in sys.argv[1:] if '=' in a)
    out, storage, endian, kind, count = args[0:5]
    compression = args[5] if len(args) > 5 else 'none'
    version = int(args[6]) if len(args) > 6 else 8
    split = int(args[7]) if len(args) > 7 else 1
    offset = int(float(opts.get('stamp_offset', '0')) * 10**9)
    clock = opts.get('clock') == '1'
    out, count, little = Path(out), int(count), endian == 'le'
    if split == 1:
        written = write(out, storage, little, kind, range(count), compression, version,
                        offset, clock)
    else:
        written = []
        with tempfile.TemporaryDirectory() as tmp:
            parts = []
            for i in range(split):
                part = Path(tmp) / f'part{i}'
                ks = range(i * count // split, (i + 1) * count // split)
                written += write(part, storage, little, kind, ks, compression, version)
                parts.append(part)
            merge_split(out, parts)
    json.dump(written, sys.stdout)


if __name__ == '__main__':
    main()
