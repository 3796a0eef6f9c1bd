"""Teaching the arm (docs/teach.md) over ROS: `~/joint_trajectory` moves
the joints through its points at their times (seen in /joint_states), a
point the speed limit cannot meet in time is said in /diagnostics and
reached late within the limit, an unknown joint is refused with the reason
in /diagnostics; `~/record_pose`
writes where the arm is into `poses_file`, served as `~/go_to/<name>`
at once and after a restart; the `programs` parameter gives `~/program/<name>`, which
runs the program to its last step."""
import os
import shutil

import pytest
import yaml
from builtin_interfaces.msg import Duration
from std_msgs.msg import String
from geometry_msgs.msg import Transform
from trajectory_msgs.msg import (JointTrajectory, JointTrajectoryPoint, MultiDOFJointTrajectory,
                                 MultiDOFJointTrajectoryPoint)

from harness import POSES, ROOT, wait_until
from msgs import joint_command, near, position_error

PICK_PLACE = os.path.join(ROOT, "config", "programs", "pick_place.yaml")


def trajectory(names, points, stamp=None):
    """A JointTrajectory of (time_from_start s, positions) points."""
    m = JointTrajectory()
    if stamp is not None:
        m.header.stamp = stamp
    m.joint_names = list(names)
    for t, positions in points:
        p = JointTrajectoryPoint()
        p.positions = [float(q) for q in positions]
        p.time_from_start = Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))
        m.points.append(p)
    return m


def seconds(t):
    return t.sec + t.nanosec * 1e-9


def test_a_joint_trajectory_reaches_its_points_at_their_times(arm):
    names = ["shoulder", "elbow"]
    points = [(1.0, [0.3, 0.6]), (2.0, [0.5, 1.0])]
    start = arm.peer.now()
    arm.publish("/ik_node/joint_trajectory", trajectory(names, points, start))
    end = arm.wait_joints(lambda q: near(q, dict(zip(names, points[-1][1])), 1e-4), "the last point")
    arm.wait_still()
    states = [m for m in arm.joints.since(0) if seconds(m.header.stamp) >= seconds(start)]
    for t, positions in points:
        # Within 0.1 s of the point's time the joints pass there (within
        # what a 50 Hz tick moves them, < 0.02 rad). A window, not the one
        # state nearest in time: a tick that a busy machine delays is
        # skipped, and the arm then trails its reference for a few ticks.
        want = dict(zip(names, positions))
        window = [m for m in states if abs(seconds(m.header.stamp) - seconds(start) - t) <= 0.1]
        assert window, "no joint state within 0.1 s of %s s" % t
        off = min(max(abs(dict(zip(m.name, m.position))[n] - want[n]) for n in names) for m in window)
        assert off < 0.02, (t, off)
    assert seconds(end.header.stamp) - seconds(start) > points[-1][0] - 0.05
    # The joints it does not name stayed.
    assert near(arm.state(), {"base_yaw": 0.0, "wrist_pitch": 0.0, "wrist_roll": 0.0}), arm.state()


def test_a_point_the_limits_cannot_meet_is_said_in_diagnostics_and_reached_late_within_them(arm):
    # The elbow's limit is 5.2 rad/s (urdf/arm.urdf): 2 rad in 0.2 s would
    # need 10.
    start = arm.peer.now()
    arm.publish("/ik_node/joint_trajectory", trajectory(["elbow"], [(0.2, [2.0])], start))
    v = arm.wait_diag(lambda v: "cannot be met in time" in v["_message"], "the late point in /diagnostics")
    assert "joint 'elbow'" in v["_message"] and v["_level"] == 1, v
    end = arm.wait_joints(lambda q: near(q, {"elbow": 2.0}, 1e-4), "the point, late")
    assert seconds(end.header.stamp) - seconds(start) > 0.2 + 0.15, end.header.stamp
    speeds = [abs(dict(zip(m.name, m.velocity))["elbow"])
              for m in arm.joints.since(0) if m.velocity and seconds(m.header.stamp) >= seconds(start)]
    assert speeds and max(speeds) <= 5.2 * 1.001, max(speeds)


@pytest.mark.parametrize("names, positions, reason, why", [
    (["elbow", "nope"], [0.5, 0.2], "unknown_joint", "'nope'"),
    (["shoulder", "elbow"], [0.2, 3.0], "invalid", "joint 'elbow' at 3 is outside its limits"),
], ids=["unknown_joint", "outside_limits"])
def test_a_bad_trajectory_is_refused_with_the_reason_and_nothing_moves(arm, names, positions, reason, why):
    count = "commands.refused." + reason
    before = arm.wait_diag(lambda v: True, "a diagnostics report")
    n = len(arm.joints)
    arm.publish("/ik_node/joint_trajectory", trajectory(names, [(1.0, positions)]))
    v = arm.wait_diag(lambda v: int(v[count]) == int(before[count]) + 1, "the trajectory refused")
    assert v["last_rejection"].startswith(reason + ": ") and why in v["last_rejection"], v
    arm.joints.wait(lambda m: True, "more joint states", start=len(arm.joints) + 5)
    assert all(p == 0.0 for m in arm.joints.since(n) for p in m.position), "a joint moved"


def cartesian_path(points, frame_id=""):
    """A MultiDOFJointTrajectory of (time_from_start s, (x, y, z)) tip
    positions, each with the identity rotation."""
    m = MultiDOFJointTrajectory()
    m.header.frame_id = frame_id
    for t, xyz in points:
        p = MultiDOFJointTrajectoryPoint()
        tf = Transform()
        tf.translation.x, tf.translation.y, tf.translation.z = (float(v) for v in xyz)
        p.transforms = [tf]
        p.time_from_start = Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))
        m.points.append(p)
    return m


def test_a_cartesian_path_is_planned_whole_then_followed_and_a_bad_one_refused(start_arm):
    """`~/cartesian_path`: a 7 cm line given by its two ends (the
    orientation ignored by `target_orientation`) gets points put in
    between, is planned while the arm holds, then followed to its end
    along the line; the status says so. A path with a point in another
    frame is refused, naming the point, and nothing moves; so is one
    through the floor, naming the line and the pair."""
    arm = start_arm({"target_orientation": "ignore"})
    line = [(1.0, (0.12, 0.0, 0.2)), (3.0, (0.17, 0.0, 0.15))]
    arm.publish("/ik_node/cartesian_path", cartesian_path(line))
    v = arm.wait_diag(lambda v: v.get("teach.cartesian.accepted") == "1" and v["teach.cartesian.planning"] == "false",
                      "the path planned")
    assert v["teach.cartesian.failed"] == "none", v
    assert v["teach.cartesian.solved"] == "2", v
    # 70.7 mm in steps of at most 1 cm: 8 steps, 7 points between.
    assert v["teach.cartesian.between"] == "7", v
    arm.wait_tip(lambda t: position_error(t, line[-1][1]) < 1e-3, "the tip at the path's end", start=0)
    # Passed through the middle of the line on the way.
    assert any(position_error(arm.chain.tip_of(m), (0.145, 0.0, 0.175)) < 0.005 for m in arm.joints.since(0))

    count = "commands.refused.wrong_frame"
    before = arm.wait_diag(lambda v: True, "a diagnostics report")
    arm.publish("/ik_node/cartesian_path", cartesian_path(line, frame_id="world"))
    v = arm.wait_diag(lambda v: int(v[count]) == int(before[count]) + 1, "the path refused")
    assert v["last_rejection"].startswith("wrong_frame: point 1: "), v

    # Down through the floor and up: planned only through answers clear of
    # collisions, it is refused before the arm moves, naming the line and
    # the pair.
    arm.wait_still()
    n = len(arm.joints)
    rest = list(arm.joints.messages[n - 1].position)
    dip = [(1.0, (0.15, 0.0, 0.18)), (3.0, (0.15, 0.0, -0.02)), (5.0, (0.15, 0.0, 0.18))]
    arm.publish("/ik_node/cartesian_path", cartesian_path(dip))
    v = arm.wait_diag(lambda v: v.get("teach.cartesian.accepted") == "2" and v["teach.cartesian.planning"] == "false",
                      "the path through the floor planned or refused")
    why = v["teach.cartesian.failed"]
    assert why.startswith("the line from point 1 to point 2 of 3: ") and "in collision" in why and "vs floor" in why, v
    moved = max((abs(a - b) for m in arm.joints.since(n) for a, b in zip(m.position, rest)), default=0.0)
    assert moved < 1e-9, "the arm moved %g rad" % moved


def test_record_pose_writes_the_pose_served_at_once_and_after_a_restart(start_arm, tmp_path):
    poses = str(tmp_path / "poses.yaml")
    shutil.copy(POSES, poses)
    arm = start_arm({"poses_file": poses})
    want = {"base_yaw": 0.5, "shoulder": 0.4, "elbow": 0.9, "wrist_pitch": -0.3, "wrist_roll": 0.2}
    arm.publish("/ik_node/joint_command", joint_command(want, want.values()))
    arm.wait_joints(lambda q: near(q, want), "the arm at the pose to record")
    arm.wait_still()
    arm.publish("/ik_node/record_pose", String(data="perch"))

    def recorded():
        with open(poses) as f:
            return (yaml.safe_load(f) or {}).get("perch")
    stored = wait_until(recorded, "pose 'perch' in the poses file")
    v = arm.wait_diag(lambda v: v.get("teach.recorded", "none") != "none", "the recording in /diagnostics")
    assert v["teach.recorded"] == "recorded pose 'perch' in %s" % poses, v
    assert near(stored, want), stored
    with open(poses) as f:
        text = f.read()
    assert "# Named joint-space poses" in text, text  # the comments kept
    assert {"home", "rest", "zero"} <= set(yaml.safe_load(text)), text
    # Served at once, without a restart: moved away, the arm goes back.
    zero = {k: 0.0 for k in want}
    arm.publish("/ik_node/joint_command", joint_command(zero, zero.values()))
    arm.wait_joints(lambda q: near(q, zero), "the arm moved away from the recorded pose")
    ok, message = arm.trigger("/ik_node/go_to/perch")
    assert ok and message == "moving to pose 'perch'", message
    arm.wait_joints(lambda q: near(q, want), "the arm back at the pose recorded while it ran")
    assert "pose 'perch' recorded: serving ~/go_to/perch" in arm.node.log()
    arm.node.stop()

    again = start_arm({"poses_file": poses})
    ok, message = again.trigger("/ik_node/go_to/perch")
    assert ok and message == "moving to pose 'perch'", message
    again.wait_joints(lambda q: near(q, want), "the arm at the recorded pose after a restart")


def test_the_program_service_runs_pick_and_place_to_its_last_step(start_arm):
    arm = start_arm({"programs": PICK_PLACE})
    with open(POSES) as f:
        home = yaml.safe_load(f)["home"]
    n = len(arm.joints)
    ok, message = arm.trigger("/ik_node/program/pick_place")
    assert ok and message == "running program 'pick_place'", message
    # Down to the part, the swing over the drop-off, then home with the
    # gripper left open by the step before.
    arm.wait_tip(lambda t: position_error(t, (0.18, 0.0, 0.08)) < 1e-3, "the tip down at the part", start=n)
    swing = arm.wait_joints(lambda q: near(q, {"base_yaw": 0.8}, 1e-4), "the swing over the drop-off", start=n)
    after = arm.joints.messages.index(swing)
    arm.wait_joints(lambda q: near(q, dict(home, gripper=1.2)), "the arm home, gripper open", start=after)
    v = arm.wait_diag(lambda v: v["teach.program.state"] == "done", "the program done in /diagnostics")
    assert v["teach.program.step"] == v["teach.program.steps"] == "9", v
