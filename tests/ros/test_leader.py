"""Leader–follower teleoperation over ROS (docs/teach.md): leader_node
reads a leader arm on a simulated Feetech bus (tests/python/feetech_bus.py,
on a pty), publishes its pose on /leader/joint_states and as frames on the
follower's ~/joint_command; the follower, ik_node with follow_leader on
virtual servos, first comes to the leader's pose at the start-up speed,
follows it, holds and says so in /diagnostics when the leader falls
silent, and comes back to it slowly when it speaks again; relax and enable
work meanwhile."""
import json
import math
import os
import subprocess
import sys

import pytest
from sensor_msgs.msg import JointState

from harness import ROOT, URDF, IkNode, node_binary
from msgs import near

FEETECH_SIM = os.path.join(ROOT, "tests", "python", "feetech_bus.py")
SERVOS = os.path.join(ROOT, "config", "servos_feetech.yaml")
# The leader's pose in servo ticks (config/servos_feetech.yaml: zero 2048,
# 4096 ticks a turn, the shoulder reversed), and in URDF angles.
TICKS = {1: 2309, 2: 1852, 3: 2439, 4: 1918, 5: 2048, 6: 2374}
POSE = {"base_yaw": 0.4, "shoulder": 0.3, "elbow": 0.6, "wrist_pitch": -0.2, "wrist_roll": 0.0,
        "gripper": 0.5}
# One tick is 1.5 mrad.
TICK = 2e-3
STARTUP_SPEED = 0.3


class Bus:
    """The simulated leader bus and its control channel (JSON lines)."""

    def __init__(self, tmp_path):
        ids = sorted(TICKS)
        self.proc = subprocess.Popen(
            [sys.executable, FEETECH_SIM, "--ids", ",".join(map(str, ids)),
             "--present", ",".join(str(TICKS[i]) for i in ids)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("PTY "), line
        self.port = line.split()[1]

    def control(self, cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def leader_bus(tmp_path):
    bus = Bus(tmp_path)
    yield bus
    bus.close()


@pytest.fixture
def start_leader(domain, tmp_path):
    """`start_leader(port)`: leader_node on the leader bus at `port`."""
    if not os.access(node_binary("leader_node"), os.X_OK):
        pytest.fail("%s is missing: build it with `cargo build --release --features ros2 --bin leader_node`"
                    % node_binary("leader_node"))
    nodes = []

    def start(port, params=None):
        d = tmp_path / ("leader%d" % len(nodes))
        d.mkdir()
        p = {"leader_config": SERVOS, "leader_port": port, "urdf_path": URDF}
        p.update(params or {})
        nodes.append(IkNode(domain, str(d), p, binary="leader_node", node="/**"))
        return nodes[-1]
    yield start
    for n in nodes:
        n.stop()
        print("---- leader_node log (%s) ----\n%s" % (n.log_path, n.log()))


def seconds(m):
    return m.header.stamp.sec + m.header.stamp.nanosec * 1e-9


def fastest_joint_speed(messages, span=25):
    """The highest joint speed over any `span` consecutive joint states
    (rad/s), from positions and stamps. Half a second at 50 Hz: the node's
    ticks keep a fixed grid, so a tick that fires late is stamped late
    and the window after it spans less time than the motion it holds; over
    25 ticks one late tick (under 20 ms) overstates the speed by at most
    4 %, over 10 by up to 10 %, which a busy machine made look like an
    over-speed."""
    top = 0.0
    for a, b in zip(messages, messages[span:]):
        dt = seconds(b) - seconds(a)
        top = max(top, max(abs(p - q) for p, q in zip(b.position, a.position)) / dt)
    return top


def test_the_follower_comes_to_the_leader_follows_it_and_holds_when_it_falls_silent(
        start_arm, leader_bus, start_leader):
    arm = start_arm({"follow_leader": True, "leader_timeout": 0.5,
                     "leader_startup_speed": STARTUP_SPEED})
    leader_states = arm.peer.record(JointState, "/leader/joint_states", 100)
    leader = start_leader(leader_bus.port)
    log = leader.wait_log("torque off")
    assert "leader arm on %s" % leader_bus.port in log, log

    m = leader_states.wait(lambda m: True, "the leader's /leader/joint_states")
    assert near(dict(zip(m.name, m.position)), POSE, TICK), m
    arm.wait_joints(lambda q: near(q, POSE, TICK), "the follower at the leader's pose", start=0)
    # The first move is the approach at the start-up speed, not faster.
    approach = arm.joints.since(0)
    moved = fastest_joint_speed(approach)
    assert 0.5 * STARTUP_SPEED < moved < 1.1 * STARTUP_SPEED, moved

    # Relax and enable work while the leader drives; enabled, the follower
    # approaches the leader again.
    assert arm.trigger("/ik_node/relax")[0]
    assert arm.trigger("/ik_node/enable")[0]
    arm.wait_diag(lambda v: v.get("teach.teleop.approaches") == "2", "a second approach after enable")

    # The leader falls silent: the follower holds and says so.
    for i in TICKS:
        leader_bus.control({"silent": i})
    v = arm.wait_diag(lambda v: "leader silent" in v["_message"], "the follower saying the leader is silent")
    assert "holding" in v["_message"], v
    leader.wait_log("leader arm silent")
    held = arm.wait_still()
    # Moved by hand while silent, then heard again: the follower comes to
    # the new pose (at the start-up speed again).
    leader_bus.control({"present": [1, 2048]})
    n = len(arm.joints)
    arm.joints.wait(lambda m: True, "more joint states", start=n + 10)
    assert all(list(m.position) == list(held.position) for m in arm.joints.since(n)), "moved while silent"
    for i in TICKS:
        leader_bus.control({"unsilent": i})
    n = len(arm.joints)
    arm.wait_joints(lambda q: near(q, dict(POSE, base_yaw=0.0), TICK), "the follower back with the leader", start=n)
    assert fastest_joint_speed(arm.joints.since(n)) < 1.1 * STARTUP_SPEED
    v = arm.wait_diag(lambda v: v["teach.teleop.silences"] == "1", "one silence counted")
    assert v["teach.teleop.approaches"] == "3", v


def test_a_yanked_leader_is_followed_at_the_speed_limit_not_faster(start_arm, leader_bus, start_leader):
    """The leader's elbow is moved 700 ticks (1.07 rad) at once, as a hand
    yanks it: the follower's /joint_states never report a joint faster than
    its max_velocity (the velocity the limiter publishes, and the speed its
    positions show over any half second), reach that speed (as fast as
    allowed), and arrive at the leader's new pose."""
    vmax = 1.0
    arm = start_arm({"follow_leader": True, "leader_timeout": 0.5, "leader_startup_speed": 1.0,
                     "max_velocity": vmax})
    start_leader(leader_bus.port).wait_log("torque off")
    arm.wait_joints(lambda q: near(q, POSE, TICK), "the follower at the leader's pose", start=0)
    arm.wait_diag(lambda v: v.get("teach.teleop.phase") == "follow", "the follower following")

    n = len(arm.joints)
    leader_bus.control({"present": [3, TICKS[3] - 700]})
    yanked = dict(POSE, elbow=(TICKS[3] - 700 - 2048) * 2 * math.pi / 4096)
    arm.wait_joints(lambda q: near(q, yanked, TICK), "the follower at the yanked pose", start=n)
    moving = arm.joints.since(n)
    top = max(abs(v) for m in moving for v in m.velocity)
    # What the limiter published: at the limit (a yank is caught up as
    # fast as allowed), never above it; ignoring the limit the elbow would
    # jump the whole 1.07 rad in one 20 ms tick (53 rad/s).
    assert 0.95 * vmax <= top <= vmax * 1.001, top
    # And what the positions show over any half second.
    assert fastest_joint_speed(moving) <= 1.1 * vmax


def test_a_leader_whose_servos_cannot_report_their_position_is_refused(start_leader, leader_bus):
    leader = start_leader(leader_bus.port, {"leader_config": os.path.join(ROOT, "config", "servos_pwm.yaml")})
    assert leader.wait_exit() == 1
    assert "cannot report their position, so they cannot lead" in leader.log(), leader.log()
