"""Forward kinematics of a URDF chain, written here from the URDF
specification with numpy alone, so that the end-to-end suite checks where
ik_node put the tip without trusting any of the node's numbers: the tip is
computed from the joint positions ik_node publishes on /joint_states.

URDF conventions used (https://wiki.ros.org/urdf/XML/joint): a joint's
<origin xyz rpy> places its frame in the parent link's frame, rpy being
fixed-axis roll, pitch, yaw (R = Rz(yaw) Ry(pitch) Rx(roll)); a revolute or
continuous joint then turns about its <axis> (default x) by its position, a
prismatic joint slides along it; a fixed joint only has its origin.
"""
import xml.etree.ElementTree as ET

import numpy as np


def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def axis_angle(axis, angle):
    """Rodrigues' formula: the rotation by `angle` about the unit `axis`."""
    k = np.asarray(axis, float)
    k = k / np.linalg.norm(k)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


def homogeneous(r, p):
    t = np.eye(4)
    t[:3, :3] = r
    t[:3, 3] = p
    return t


def numbers(text, default):
    return [float(v) for v in text.split()] if text else list(default)


class Joint:
    def __init__(self, el):
        self.name = el.get("name")
        self.type = el.get("type")
        self.parent = el.find("parent").get("link")
        self.child = el.find("child").get("link")
        origin = el.find("origin")
        xyz = numbers(origin.get("xyz") if origin is not None else None, [0, 0, 0])
        r, p, y = numbers(origin.get("rpy") if origin is not None else None, [0, 0, 0])
        self.origin = homogeneous(rot_z(y) @ rot_y(p) @ rot_x(r), xyz)
        axis = el.find("axis")
        self.axis = numbers(axis.get("xyz") if axis is not None else None, [1, 0, 0])
        limit = el.find("limit")
        self.lower = float(limit.get("lower", 0)) if limit is not None else None
        self.upper = float(limit.get("upper", 0)) if limit is not None else None

    def moves(self):
        return self.type in ("revolute", "continuous", "prismatic")

    def transform(self, q):
        if self.type in ("revolute", "continuous"):
            return self.origin @ homogeneous(axis_angle(self.axis, q), [0, 0, 0])
        if self.type == "prismatic":
            return self.origin @ homogeneous(np.eye(3), np.asarray(self.axis, float) * q)
        return self.origin


class Chain:
    """The joints from `base` down to `tip` of a URDF."""

    def __init__(self, urdf_text, base, tip):
        root = ET.fromstring(urdf_text)
        by_child = {j.child: j for j in map(Joint, root.findall("joint"))}
        joints, link = [], tip
        while link != base:
            if link not in by_child:
                raise ValueError("no joint chain from %r to %r" % (base, tip))
            joints.append(by_child[link])
            link = by_child[link].parent
        self.joints = list(reversed(joints))
        self.base, self.tip = base, tip

    @classmethod
    def from_file(cls, path, base, tip):
        with open(path) as f:
            return cls(f.read(), base, tip)

    def names(self):
        """The moving joints, base first."""
        return [j.name for j in self.joints if j.moves()]

    def limits(self):
        return {j.name: (j.lower, j.upper) for j in self.joints if j.moves()}

    def tip_pose(self, positions):
        """The tip's 4x4 pose in the base frame; `positions` maps every
        moving joint's name to its position (a JointState's name/position)."""
        t = np.eye(4)
        for j in self.joints:
            t = t @ j.transform(positions[j.name] if j.moves() else 0.0)
        return t

    def tip_of(self, joint_state):
        """The tip pose for a sensor_msgs/JointState."""
        return self.tip_pose(dict(zip(joint_state.name, joint_state.position)))


def quaternion(r):
    """A rotation matrix as an (x, y, z, w) unit quaternion, w >= 0."""
    w = np.sqrt(max(0.0, 1 + r[0, 0] + r[1, 1] + r[2, 2])) / 2
    x = np.sqrt(max(0.0, 1 + r[0, 0] - r[1, 1] - r[2, 2])) / 2
    y = np.sqrt(max(0.0, 1 - r[0, 0] + r[1, 1] - r[2, 2])) / 2
    z = np.sqrt(max(0.0, 1 - r[0, 0] - r[1, 1] + r[2, 2])) / 2
    x = np.copysign(x, r[2, 1] - r[1, 2])
    y = np.copysign(y, r[0, 2] - r[2, 0])
    z = np.copysign(z, r[1, 0] - r[0, 1])
    q = np.array([x, y, z, w])
    return q / np.linalg.norm(q)


def rotation(q):
    """An (x, y, z, w) quaternion as a rotation matrix."""
    x, y, z, w = np.asarray(q, float) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def angle_between(r1, r2):
    """The angle (rad) of the rotation that takes r1 to r2."""
    c = (np.trace(r1.T @ r2) - 1) / 2
    return float(np.arccos(np.clip(c, -1.0, 1.0)))
