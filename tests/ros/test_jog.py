"""Jogging the tip: `~/target_twist` (TwistStamped, in the frame it names)
and `~/cmd_vel` (Twist, as teleop_twist_keyboard / teleop_twist_joy send
it, in `cmd_vel_frame`) move the tip along the twist, and when the teleop
goes silent the arm slows to a stop by itself (`jog_timeout`)."""
import time

import numpy as np

import fk
from msgs import twist, twist_stamped

SPEED = 0.02  # m/s, under jog_linear_speed (0.1)
RATE = 20.0  # Hz, as `ros2 topic pub -r 20` and the teleops publish
JOG_TIMEOUT = 0.2  # s, the default


def at_home(arm):
    assert arm.trigger("/ik_node/home")[0]
    arm.wait_joints(lambda q: abs(q["elbow"] - 1.0) < 1e-6, "the arm at home")
    return arm.tip(arm.wait_still())


def jog(arm, topic, make, seconds=1.5):
    """Publishes `make()` at RATE for `seconds`; returns the joint-state
    index at the first and after the last message."""
    pub = arm.publisher(type(make()), topic)
    first = len(arm.joints)
    for _ in range(int(seconds * RATE)):
        pub.publish(make())
        time.sleep(1.0 / RATE)
    return first, len(arm.joints)


def tip_path(arm, start, end):
    return [arm.tip(m)[:3, 3] for m in arm.joints.since(start)[: end - start]]


def check_line_and_stop(arm, start_tip, last, direction):
    """The tip went along `direction` while jogged, then came to rest by
    itself without going on further than the jog's timeout and braking
    allow."""
    at_last = arm.tip(arm.joints.messages[last - 1])[:3, 3]
    moved = at_last - start_tip[:3, 3]
    along = float(moved @ direction)
    assert along > 0.01, "the tip moved %s along %s, expected about %.3f m" % (moved, direction, SPEED * 1.5)
    off = np.linalg.norm(moved - along * direction)
    assert off < 0.1 * along, "the tip left the line: %s along %s" % (moved, direction)
    rest = arm.tip(arm.wait_still())[:3, 3]
    after = np.linalg.norm(rest - at_last)
    # Half a jog timeout of latency, the timeout itself, then the braking
    # distance v^2 / 2a at jog_linear_acceleration (0.5 m/s^2), doubled.
    assert after < 2 * (SPEED * 1.5 * JOG_TIMEOUT + SPEED ** 2 / (2 * 0.5)), \
        "the tip went on %.4f m after the teleop went silent" % after


def test_target_twist_in_the_base_frame_moves_the_tip_along_base_x_and_stops_when_silent(arm):
    start = at_home(arm)
    _, last = jog(arm, "/ik_node/target_twist", lambda: twist_stamped((SPEED, 0, 0), frame="base_link"))
    check_line_and_stop(arm, start, last, np.array([1.0, 0, 0]))


def test_target_twist_in_the_tool_frame_turns_the_tip_about_its_own_axis(arm):
    start = at_home(arm)
    jog(arm, "/ik_node/target_twist", lambda: twist_stamped(angular=(0, 0, 0.3), frame="tool"), 1.0)
    t = arm.tip(arm.wait_still())
    assert np.linalg.norm(t[:3, 3] - start[:3, 3]) < 2e-3, "the tip moved while only turned: %s" % t
    turn = start[:3, :3].T @ t[:3, :3]
    angle = fk.angle_between(start[:3, :3], t[:3, :3])
    assert angle > 0.15, angle
    # About the tool's z axis: z stays where it was.
    assert abs(turn[2, 2] - 1.0) < 1e-3, turn


def test_cmd_vel_moves_the_tip_along_the_tool_x_axis_by_default(arm):
    """Forward along the tool's x axis, as a hand-held tool moves: each
    tick's step is along the x axis the tool had then (the 5-joint arm's
    orientation may follow the motion a little, docs/operate.md "Jog the tip")."""
    start = at_home(arm)
    first, last = jog(arm, "/ik_node/cmd_vel", lambda: twist((SPEED, 0, 0)))
    poses = [arm.tip(m) for m in arm.joints.messages[first:last]]
    steps = 0
    for a, b in zip(poses, poses[1:]):
        step = b[:3, 3] - a[:3, 3]
        if np.linalg.norm(step) > 1e-5:
            steps += 1
            cos = step @ a[:3, 0] / np.linalg.norm(step)
            assert cos > 0.98, "a step %s off the tool's x axis %s" % (step, a[:3, 0])
    assert steps > 20, steps
    moved = poses[-1][:3, 3] - start[:3, 3]
    assert moved @ start[:3, 0] > 0.01, moved
    rest = arm.tip(arm.wait_still())[:3, 3]
    assert np.linalg.norm(rest - poses[-1][:3, 3]) < 0.01, "the tip went on after the teleop went silent"


def test_cmd_vel_in_the_base_frame_with_cmd_vel_frame_base(start_arm):
    arm = start_arm({"cmd_vel_frame": "base"})
    start = at_home(arm)
    _, last = jog(arm, "/ik_node/cmd_vel", lambda: twist((0, 0, SPEED)))
    check_line_and_stop(arm, start, last, np.array([0, 0, 1.0]))


def test_a_twist_in_another_frame_is_refused_and_nothing_moves(arm):
    start = at_home(arm)
    n = len(arm.joints)
    arm.publish("/ik_node/target_twist", twist_stamped((SPEED, 0, 0), frame="map"))
    v = arm.wait_diag(lambda v: v["last_rejection"] != "none", "the twist refused in /diagnostics")
    assert v["last_rejection"].startswith("wrong_frame: ") and "'map'" in v["last_rejection"], v
    assert int(v["steering.refused"]) == 1 and v["steering.twists"] == "0", v
    arm.joints.wait(lambda m: True, "more joint states", start=len(arm.joints) + 5)
    assert all(np.allclose(arm.tip(m), start) for m in arm.joints.since(n))
