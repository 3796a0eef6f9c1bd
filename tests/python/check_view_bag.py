"""Checks an MCAP written by `arm_ik` (`replay --output`, `sim --record`)
shows the arm with no other node, independently of the Rust code:

- every message decodes with `rosbags` from the bag's own schemas, and
  re-encodes with rosbags' ROS 2 Jazzy type store to the very same bytes
  (so the CDR is what ROS 2 writes);
- the schema texts of the robot topics equal rosbags' Jazzy definitions;
- /robot_description (once, latched: transient local in the channel's
  offered_qos_profiles) equals the URDF file; /tf_static is latched too;
- every joint state has a /tf of the same stamp, and composing /tf_static
  and that /tf from BASE to TIP gives the tip that forward kinematics,
  computed here from the URDF with numpy, gives for the joint state's
  angles (largest difference printed);
- every target has a marker at its position.

usage: check_view_bag.py BAG URDF BASE TIP
Prints one JSON object: counts and the largest tip difference (m).
"""
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore


def rot(rpy):
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def axis_angle(axis, q):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(q) * k + (1 - np.cos(q)) * (k @ k)


def homogeneous(r, t):
    m = np.eye(4)
    m[:3, :3] = r
    m[:3, 3] = t
    return m


def floats(text, default):
    return [float(x) for x in text.split()] if text else default


def urdf_joints(path):
    """child link -> (parent link, joint name, type, origin 4x4, axis)"""
    out = {}
    for j in ET.parse(path).getroot().findall('joint'):
        o = j.find('origin')
        xyz = floats(o.get('xyz') if o is not None else None, [0, 0, 0])
        rpy = floats(o.get('rpy') if o is not None else None, [0, 0, 0])
        a = j.find('axis')
        axis = floats(a.get('xyz') if a is not None else None, [1, 0, 0])
        out[j.find('child').get('link')] = (
            j.find('parent').get('link'), j.get('name'), j.get('type'),
            homogeneous(rot(rpy), xyz), axis)
    return out


def fk(joints, base, tip, q):
    m = np.eye(4)
    link = tip
    while link != base:
        parent, name, kind, origin, axis = joints[link]
        motion = np.eye(4)
        if kind in ('revolute', 'continuous'):
            motion[:3, :3] = axis_angle(axis, q[name])
        elif kind == 'prismatic':
            motion[:3, 3] = np.asarray(axis, float) / np.linalg.norm(axis) * q[name]
        m = origin @ motion @ m
        link = parent
    return m[:3, 3]


def quat_matrix(q):
    x, y, z, w = q.x, q.y, q.z, q.w
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def compose(frames, base, tip):
    """frames: child -> (parent, 4x4); the tip's position in base."""
    m = np.eye(4)
    link = tip
    while link != base:
        parent, step = frames[link]
        m = step @ m
        link = parent
    return m[:3, 3]


def stamp(h):
    return h.stamp.sec * 10**9 + h.stamp.nanosec


def main():
    bag, urdf, base, tip = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    jazzy = get_typestore(Stores.ROS2_JAZZY)
    joints = urdf_joints(urdf)
    fail = []
    static, tf_by_stamp, states, targets, markers, descriptions = {}, {}, [], [], [], []
    with AnyReader([bag], default_typestore=jazzy) as r:
        for c in r.connections:
            if c.topic in ('/robot_description', '/tf_static', '/tf', '/target_marker'):
                ours = c.msgdef.data if hasattr(c.msgdef, 'data') else c.msgdef
                theirs = jazzy.generate_msgdef(c.msgtype, ros_version=2)[0]
                if ours.strip() != theirs.strip():
                    fail.append(f'{c.topic}: schema differs from Jazzy')
            # rosbags parses offered_qos_profiles into Qos objects.
            qos = getattr(c.ext, 'offered_qos_profiles', None) or []
            latched = any(q.durability.name == 'TRANSIENT_LOCAL' for q in qos)
            if (c.topic in ('/robot_description', '/tf_static')) != latched:
                fail.append(f'{c.topic}: latched {latched} in {qos!r}')
        for c, t, raw in r.messages():
            msg = r.deserialize(raw, c.msgtype)
            if bytes(jazzy.serialize_cdr(msg, c.msgtype)) != bytes(raw):
                fail.append(f'{c.topic} at {t}: re-encoded bytes differ')
            if c.topic == '/robot_description':
                descriptions.append(msg.data)
            elif c.topic in ('/tf', '/tf_static'):
                frames = {}
                for ts in msg.transforms:
                    tr = ts.transform.translation
                    m = homogeneous(quat_matrix(ts.transform.rotation), [tr.x, tr.y, tr.z])
                    frames[ts.child_frame_id] = (ts.header.frame_id, m)
                    if c.topic == '/tf' and stamp(ts.header) != t:
                        fail.append(f'/tf at {t}: stamp {stamp(ts.header)}')
                if c.topic == '/tf_static':
                    static.update(frames)
                else:
                    tf_by_stamp[t] = frames
            elif c.msgtype == 'sensor_msgs/msg/JointState':
                states.append((stamp(msg.header), dict(zip(msg.name, msg.position))))
            elif c.topic == '/target_marker':
                p = msg.pose.position
                markers.append([p.x, p.y, p.z])
            elif c.msgtype in ('geometry_msgs/msg/PoseStamped', 'geometry_msgs/msg/PointStamped'):
                p = msg.pose.position if hasattr(msg, 'pose') else msg.point
                targets.append([p.x, p.y, p.z])
    if descriptions != [Path(urdf).read_text()]:
        fail.append(f'{len(descriptions)} descriptions, or not the URDF')
    worst = 0.0
    for s, q in states:
        if s not in tf_by_stamp:
            fail.append(f'joint state at {s} has no /tf')
            continue
        frames = dict(static)
        frames.update(tf_by_stamp[s])
        d = float(np.linalg.norm(compose(frames, base, tip) - fk(joints, base, tip, q)))
        worst = max(worst, d)
    if not np.allclose(np.array(markers).reshape(-1, 3), np.array(targets).reshape(-1, 3)):
        fail.append('markers are not at the targets')
    print(json.dumps({
        'joint_states': len(states), 'tf': len(tf_by_stamp), 'tf_static': len(static),
        'targets': len(targets), 'markers': len(markers), 'max_tip_error_m': worst,
        'failures': fail[:20],
    }))


if __name__ == '__main__':
    main()
