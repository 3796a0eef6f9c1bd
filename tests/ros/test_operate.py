"""Operating the arm beyond targets (docs/operate.md): the gripper
topic and services, joint commands, relax / enable, home and the named
poses, each checked in /joint_states."""
import yaml
from std_msgs.msg import Float64

from harness import POSES
from msgs import joint_command, near, point_stamped, position_error

CHAIN = ["base_yaw", "shoulder", "elbow", "wrist_pitch", "wrist_roll"]


def test_the_gripper_topic_moves_the_gripper_and_its_mirror_jaw_within_its_limits(arm):
    arm.publish("/ik_node/gripper", Float64(data=0.6))
    q = arm.state()
    arm.wait_joints(lambda q: near(q, {"gripper": 0.6, "gripper_mirror": -0.6}), "the gripper at 0.6")
    # The arm itself stays where it was.
    assert near(arm.state(), {k: q[k] for k in CHAIN})
    arm.publish("/ik_node/gripper", Float64(data=2.0))
    arm.wait_joints(lambda q: near(q, {"gripper": 1.2, "gripper_mirror": -1.2}), "the gripper clamped to 1.2")
    assert max(m.position[5] for m in arm.joints.since(0)) <= 1.2


def test_open_and_close_gripper_services(arm):
    ok, message = arm.trigger("/ik_node/open_gripper")
    assert ok and message == "opening the gripper", message
    arm.wait_joints(lambda q: near(q, {"gripper": 1.2}), "the gripper open (1.2, the end farther from zero)")
    ok, message = arm.trigger("/ik_node/close_gripper")
    assert ok and message == "closing the gripper", message
    arm.wait_joints(lambda q: near(q, {"gripper": 0.0, "gripper_mirror": 0.0}), "the gripper closed")


def test_a_joint_command_moves_a_subset_of_joints_and_leaves_the_others(arm):
    arm.publish("/ik_node/joint_command", joint_command(["shoulder", "elbow", "gripper"], [0.3, 1.0, 0.4]))
    arm.wait_joints(lambda q: near(q, {"shoulder": 0.3, "elbow": 1.0, "gripper": 0.4}), "the joints commanded")
    final = arm.state()
    assert near(final, {"base_yaw": 0.0, "wrist_pitch": 0.0, "wrist_roll": 0.0}), final
    # And out of range: clamped to the joint's limit (elbow: +-2.0944).
    arm.publish("/ik_node/joint_command", joint_command(["elbow"], [3.0]))
    arm.wait_joints(lambda q: near(q, {"elbow": 2.0944}), "the elbow clamped to its limit")


def test_a_joint_command_naming_an_unknown_or_mimic_joint_is_refused_whole(arm):
    for name in ["nope", "gripper_mirror"]:
        n = len(arm.joints)
        before = arm.wait_diag(lambda v: True, "a diagnostics report")
        arm.publish("/ik_node/joint_command", joint_command(["elbow", name], [0.5, 0.2]))
        v = arm.wait_diag(lambda v: int(v["commands.refused.unknown_joint"])
                          == int(before["commands.refused.unknown_joint"]) + 1, "the joint command refused")
        assert v["last_rejection"].startswith("unknown_joint: ") and "'%s'" % name in v["last_rejection"], v
        arm.joints.wait(lambda m: True, "more joint states", start=len(arm.joints) + 5)
        assert all(p == 0.0 for m in arm.joints.since(n) for p in m.position), "the elbow moved"


def test_relax_refuses_what_would_move_the_arm_until_enable(arm):
    ok, message = arm.trigger("/ik_node/relax")
    assert ok and message.startswith("relaxed"), message
    v = arm.wait_diag(lambda v: v["relaxed"] == "true", "relaxed in /diagnostics")
    assert "relaxed" in v["_message"], v
    n = len(arm.joints)
    arm.publish("/target_point", point_stamped((0.2, 0.0, 0.2)))
    v = arm.wait_diag(lambda v: v["targets.rejected.relaxed"] == "1", "the target refused while relaxed")
    assert v["last_rejection"].startswith("relaxed: "), v
    ok, message = arm.trigger("/ik_node/home")
    assert not ok and message.startswith("refused, relaxed: "), message
    arm.publish("/ik_node/joint_command", joint_command(["elbow"], [1.0]))
    arm.publish("/ik_node/gripper", Float64(data=0.5))
    arm.wait_diag(lambda v: int(v["commands.refused.relaxed"]) >= 3, "home, joint and gripper commands refused")
    assert all(p == 0.0 for m in arm.joints.since(n) for p in m.position), "the arm moved while relaxed"

    ok, message = arm.trigger("/ik_node/enable")
    assert ok and message.startswith("enabled"), message
    arm.publish("/target_point", point_stamped((0.2, 0.0, 0.2)))
    arm.wait_tip(lambda t: position_error(t, (0.2, 0.0, 0.2)) < 1e-3, "the tip at the target once enabled")


def test_home_and_go_to_move_to_the_named_poses_of_the_poses_file(arm):
    with open(POSES) as f:
        poses = yaml.safe_load(f)
    names = arm.peer.service_names()
    for name in poses:
        assert "/ik_node/go_to/%s" % name in names, sorted(names)
    ok, message = arm.trigger("/ik_node/home")
    assert ok and message == "moving to pose 'home'", message
    arm.wait_joints(lambda q: near(q, poses["home"]), "the arm at pose 'home'")
    arm.publish("/ik_node/gripper", Float64(data=0.8))
    arm.wait_joints(lambda q: near(q, {"gripper": 0.8}), "the gripper at 0.8")
    ok, message = arm.trigger("/ik_node/go_to/rest")
    assert ok and message == "moving to pose 'rest'", message
    # rest gives the gripper too (closed).
    arm.wait_joints(lambda q: near(q, poses["rest"]), "the arm at pose 'rest'")
    ok, _ = arm.trigger("/ik_node/go_to/zero")
    assert ok
    arm.wait_joints(lambda q: near(q, poses["zero"]), "the arm at pose 'zero'")


def test_without_a_poses_file_home_says_there_is_no_such_pose(start_arm):
    arm = start_arm({"poses_file": None})
    ok, message = arm.trigger("/ik_node/home")
    assert not ok, message
    assert message.startswith("refused, unknown_pose: ") and "'home'" in message, message
    assert not [s for s in arm.peer.service_names() if s.startswith("/ik_node/go_to/")]
    v = arm.wait_diag(lambda v: v["commands.refused.unknown_pose"] == "1", "the refusal counted")
    assert v["last_rejection"].startswith("unknown_pose: "), v
