"""Message builders the suite and the benchmark scripts share."""
import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PointStamped, PoseStamped, Twist, TwistStamped
from sensor_msgs.msg import JointState

import fk

ZERO = Time(sec=0, nanosec=0)


def stamp_offset(t, seconds):
    """`t` (a builtin_interfaces Time) moved by `seconds`."""
    ns = t.sec * 1_000_000_000 + t.nanosec + int(seconds * 1e9)
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def pose_stamped(position, orientation=(0.0, 0.0, 0.0, 1.0), frame="base_link", stamp=ZERO):
    m = PoseStamped()
    m.header.frame_id, m.header.stamp = frame, stamp
    p, q = m.pose.position, m.pose.orientation
    p.x, p.y, p.z = (float(v) for v in position)
    q.x, q.y, q.z, q.w = (float(v) for v in orientation)
    return m


def pose_of(t, frame="base_link", stamp=ZERO):
    """A PoseStamped of a 4x4 pose."""
    return pose_stamped(t[:3, 3], fk.quaternion(t[:3, :3]), frame, stamp)


def point_stamped(position, frame="base_link", stamp=ZERO):
    m = PointStamped()
    m.header.frame_id, m.header.stamp = frame, stamp
    m.point.x, m.point.y, m.point.z = (float(v) for v in position)
    return m


def twist(linear=(0, 0, 0), angular=(0, 0, 0)):
    m = Twist()
    m.linear.x, m.linear.y, m.linear.z = (float(v) for v in linear)
    m.angular.x, m.angular.y, m.angular.z = (float(v) for v in angular)
    return m


def twist_stamped(linear=(0, 0, 0), angular=(0, 0, 0), frame="base_link", stamp=ZERO):
    m = TwistStamped()
    m.header.frame_id, m.header.stamp = frame, stamp
    m.twist = twist(linear, angular)
    return m


def joint_command(names, positions):
    """A JointState of positions by joint name, as ~/joint_command takes it."""
    m = JointState()
    m.name, m.position = list(names), [float(p) for p in positions]
    return m


def near(q, want, tol=1e-6):
    """True when every joint of `want` ({name: position}) is within `tol` of `q`'s."""
    return all(abs(q[k] - v) < tol for k, v in want.items())


def position_error(t, goal):
    """Distance (m) between the positions of two 4x4 poses, or a pose and a point."""
    g = goal[:3, 3] if np.ndim(goal) == 2 else np.asarray(goal, float)
    return float(np.linalg.norm(t[:3, 3] - g))
