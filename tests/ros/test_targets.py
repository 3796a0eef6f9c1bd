"""`target_pose` and `target_point`: a good target puts the tip there (the
tip computed by the suite's own FK from /joint_states); a stale, future,
wrong-frame, NaN or non-unit-quaternion one is refused with the reason in
/diagnostics, and nothing moves."""
import json
import math
import pathlib
import time

import numpy as np
import pytest

import fk
from msgs import joint_command, near, point_stamped, pose_of, pose_stamped, position_error, stamp_offset

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"

# A pose the 5-joint arm can take exactly: the suite's FK of these joints.
POSE_JOINTS = {"base_yaw": 0.4, "shoulder": 0.5, "elbow": 0.8, "wrist_pitch": 0.7, "wrist_roll": -0.3}


def test_target_pose_puts_the_tip_at_the_pose(arm):
    goal = arm.chain.tip_pose(POSE_JOINTS)
    start = arm.tip()
    assert position_error(start, goal) > 0.1
    arm.publish("/target_pose", pose_of(goal, stamp=arm.peer.now()))
    arm.wait_tip(lambda t: position_error(t, goal) < 1e-3, "the tip within 1 mm of the target pose")
    t = arm.tip(arm.wait_still())
    assert position_error(t, goal) < 5e-4, t
    assert fk.angle_between(t[:3, :3], goal[:3, :3]) < 5e-3, t


def test_target_point_puts_the_tip_at_the_point_with_a_zero_stamp(arm):
    goal = (0.18, -0.06, 0.2)
    arm.publish("/target_point", point_stamped(goal))
    arm.wait_tip(lambda t: position_error(t, goal) < 1e-3, "the tip within 1 mm of the point")
    t = arm.tip(arm.wait_still())
    assert position_error(t, goal) < 5e-4, t
    v = arm.wait_diag(lambda v: int(v["targets.reached"]) >= 1, "the target counted as reached")
    assert v["targets.received"] == "1" and v["last_rejection"] == "none", v


def test_an_empty_frame_is_the_base_link(arm):
    goal = (0.15, 0.1, 0.25)
    arm.publish("/target_point", point_stamped(goal, frame=""))
    arm.wait_tip(lambda t: position_error(t, goal) < 1e-3, "the tip at a point given with an empty frame")


def _stale(arm):
    return pose_stamped((0.2, 0.0, 0.2), stamp=stamp_offset(arm.peer.now(), -5.0))


def _future(arm):
    return pose_stamped((0.2, 0.0, 0.2), stamp=stamp_offset(arm.peer.now(), 5.0))


def _wrong_frame(arm):
    return pose_stamped((0.2, 0.0, 0.2), frame="map")


def _nan_position(arm):
    return point_stamped((math.nan, 0.0, 0.2))


def _nan_orientation(arm):
    return pose_stamped((0.2, 0.0, 0.2), (0.0, math.nan, 0.0, 1.0))


def _long_quaternion(arm):
    return pose_stamped((0.2, 0.0, 0.2), (0.0, 0.0, 0.0, 2.0))


def _zero_quaternion(arm):
    # What an unset orientation is: all four zero.
    return pose_stamped((0.2, 0.0, 0.2), (0.0, 0.0, 0.0, 0.0))


@pytest.mark.parametrize("make, reason, why", [
    (_stale, "stale", "older than the node clock"),
    (_future, "stale", "newer than the node clock"),
    (_wrong_frame, "wrong_frame", "frame 'map' is not the base link 'base_link'"),
    (_nan_position, "not_finite", "position is not finite"),
    (_nan_orientation, "not_finite", "orientation is not finite"),
    (_long_quaternion, "invalid", "length 2"),
    (_zero_quaternion, "invalid", "length 0"),
], ids=["stale", "future", "wrong_frame", "nan_position", "nan_orientation",
        "non_unit_quaternion", "zero_quaternion"])
def test_a_bad_target_is_refused_with_the_reason_and_nothing_moves(shared_arm, make, reason, why):
    arm = shared_arm
    rest = arm.wait_still().position
    before = arm.wait_diag(lambda v: True, "a diagnostics report")
    count = "targets.rejected." + reason
    n = len(arm.joints)
    msg = make(arm)
    arm.publish("/target_point" if hasattr(msg, "point") else "/target_pose", msg)
    v = arm.wait_diag(lambda v: int(v[count]) == int(before[count]) + 1,
                      "%s counted in /diagnostics" % count)
    assert v["last_rejection"].startswith(reason + ": ") and why in v["last_rejection"], v
    assert v["_level"] == 1, v
    assert ("(last: %s: " % reason) in v["_message"] and "rejected" in v["_message"], v
    assert v["targets.accepted"] == before["targets.accepted"], v
    # Nothing moved: every joint state since, and a few ticks more.
    arm.joints.wait(lambda m: True, "more joint states", start=len(arm.joints) + 5)
    moved = [m.position for m in arm.joints.since(n) if list(m.position) != list(rest)]
    assert not moved, moved[:3]


def reached_pointing(arm, asked, goal, axis):
    """Publishes the pose `asked` (at `goal`'s position) under
    `target_orientation: axis` and checks the arm gets there: the tip
    within 0.5 mm, its column `axis` (0: +x, 2: +z) within 5 mrad of the
    pose's, the whole rotation more than a radian from the pose's (the
    roll was not asked for), and the target counted as reached. Returns
    the tip's pose."""
    arm.publish("/target_pose", pose_of(asked, stamp=arm.peer.now()))
    arm.wait_tip(lambda t: position_error(t, goal) < 1e-3, "the tip within 1 mm of the pose")
    t = arm.tip(arm.wait_still())
    assert position_error(t, goal) < 5e-4, t
    got, want = t[:3, axis], asked[:3, axis]
    assert math.acos(min(1.0, float(got @ want))) < 5e-3, (got, want)
    assert fk.angle_between(t[:3, :3], asked[:3, :3]) > 1.0, "the roll was not asked for"
    v = arm.wait_diag(lambda v: int(v["targets.reached"]) >= 1, "the target counted as reached")
    assert v["last_rejection"] == "none", v
    return t


def test_under_target_orientation_axis_a_rolled_pose_is_reached_without_its_roll(start_arm):
    """`target_orientation: axis`: a PoseStamped counts only where its tool
    +z axis points (a 5D target). The pose of POSE_JOINTS rolled half a turn
    about its own +z would need wrist_roll at -0.3 + pi, beyond its
    +-1.5708 limits: as a full pose it cannot be reached, but its position
    and its +z axis can, and are; the roll is left to the arm."""
    arm = start_arm({"target_orientation": "axis"})
    goal = arm.chain.tip_pose(POSE_JOINTS)
    half_turn = np.diag([-1.0, -1.0, 1.0, 1.0])
    rolled = goal @ half_turn
    reached_pointing(arm, rolled, goal, axis=2)


def test_tool_axis_names_the_axis_that_points_and_changes_live(start_arm):
    """`tool_axis` (a double array): with `target_orientation: axis` the
    tip's named axis goes where the pose's same axis points, the roll about
    it free. Given at start from the parameter file ([0, 1, 0]) and read
    back; a zero axis or integers refused by `ros2 param set` naming it;
    then set live to +x. The pose of POSE_JOINTS turned over about its own
    +x (its +z reversed) cannot be reached as a full pose, nor with the tip's
    +z along the pose's: with tool_axis +x its position and +x are."""
    arm = start_arm({"target_orientation": "axis", "tool_axis": [0.0, 1.0, 0.0]})
    assert arm.get_parameters("tool_axis") == [[0.0, 1.0, 0.0]]
    for bad in ([0.0, 0.0, 0.0], [1, 0, 0]):
        ok, why = arm.set_parameter("tool_axis", bad)
        assert not ok and "tool_axis" in why, (bad, why)
    assert arm.get_parameters("tool_axis") == [[0.0, 1.0, 0.0]]
    assert arm.set_parameter("tool_axis", [1.0, 0.0, 0.0]) == (True, "")
    arm.node.wait_log("parameter tool_axis changed: applied at the next tick")
    goal = arm.chain.tip_pose(POSE_JOINTS)
    turned_over = goal @ np.diag([1.0, -1.0, -1.0, 1.0])
    t = reached_pointing(arm, turned_over, goal, axis=0)
    z, other = t[:3, 2], turned_over[:3, 2]
    assert math.acos(max(-1.0, min(1.0, float(z @ other)))) > 1.0, "the tip's +z went where the pose's does"


def _to_path(tip, path):
    """The tip's distance (m) to the nearest of the path's targets."""
    p = np.asarray(tip[:3, 3])
    return min(float(np.linalg.norm(p - np.asarray(q))) for q in path)


def test_a_stream_that_needs_a_swing_holds_the_arm_on_the_path_until_it_pauses(arm):
    """The project arm's position track of seed 41, path 2 (tests/data,
    made by make_targets): streamed at 20 Hz, the answers take the side of
    the stretched arm that 9 s later runs into the shoulder's limit. The
    node holds the arm rather than swing it across, which would take the
    tip 70 mm off the path (docs/solvers.md, Redundant arms): the tip never
    leaves the path, /diagnostics says why, and once the stream pauses
    the next target moves the arm."""
    track = json.loads((DATA / "arm_track_41_path2.json").read_text())
    names, start, path = track["joint_names"], track["start"], track["positions"]
    arm.publish("/ik_node/joint_command", joint_command(names, start))
    arm.wait_joints(lambda j: near(j, dict(zip(names, start))), "the arm at the path's start")
    first = len(arm.joints)
    period = 1.0 / track["rate_hz"]
    t0 = time.monotonic()
    for k, p in enumerate(path):
        delay = t0 + k * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        arm.publish("/target_point", point_stamped(p))
    v = arm.wait_diag(lambda v: int(v["targets.rejected.reconfiguration"]) >= 1,
                      "a streamed target refused as a reconfiguration")
    why = v["last_rejection"]
    assert why.startswith("reconfiguration: ") and "pause the stream" in why, v
    off = max(_to_path(arm.tip(m), path) for m in arm.joints.since(first))
    assert off < 0.02, "the tip went %.1f mm off the path" % (off * 1e3)
    # The stream has paused (its last target came more than 0.25 s ago):
    # a target now moves the arm, wherever its answer is.
    goal = path[-1]
    arm.publish("/target_point", point_stamped(goal))
    arm.wait_tip(lambda t: position_error(t, goal) < 1e-3, "the tip at the target after the pause")
