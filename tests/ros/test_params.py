"""Parameters through the standard services `ros2 param` uses
(list/describe/get/set_parameters): every parameter of docs/ros.md's table
is declared with its type and a description, start values are read back, a
live change takes effect on the arm, and a bad value or a parameter fixed
at start is refused with the reason while the old value stays."""
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import DescribeParameters, ListParameters

from msgs import joint_command
from readme import table

TYPES = {"string": ParameterType.PARAMETER_STRING, "double": ParameterType.PARAMETER_DOUBLE,
         "integer": ParameterType.PARAMETER_INTEGER, "bool": ParameterType.PARAMETER_BOOL,
         "double array": ParameterType.PARAMETER_DOUBLE_ARRAY}


def get(arm, *names):
    return arm.get_parameters(*names)


def set_one(arm, name, v):
    return arm.set_parameter(name, v)


def test_every_documented_parameter_is_declared_with_its_type_and_a_description(arm):
    rows = table("## Parameters")
    documented = {r[0].strip("`"): r[1] for r in rows}
    assert len(documented) > 30, documented
    listed = arm.peer.call(ListParameters, "/ik_node/list_parameters").result.names
    missing = set(documented) - set(listed)
    assert not missing, "in docs/ros.md, not declared by ik_node: %s" % sorted(missing)
    req = DescribeParameters.Request(names=list(documented))
    for d in arm.peer.call(DescribeParameters, "/ik_node/describe_parameters", req).descriptors:
        assert d.type == TYPES[documented[d.name]], "%s: type %d, docs/ros.md says %s" % (d.name, d.type, documented[d.name])
        assert d.description.strip(), "%s has no description" % d.name


def test_start_values_and_defaults_are_read_back(start_arm):
    arm = start_arm({"solver": "ccd", "max_velocity": 1.0, "lock": "wrist_roll"})
    assert get(arm, "solver", "max_velocity", "lock", "rate_hz", "jog_timeout", "sim") == \
        ["ccd", 1.0, "wrist_roll", 50.0, 0.2, True]


def top_speed(arm, joint, target):
    """Moves `joint` to `target` with a joint command; returns the largest
    speed joint_states reported on the way."""
    n = len(arm.joints)
    arm.publish("/ik_node/joint_command", joint_command([joint], [target]))
    arm.wait_joints(lambda q: abs(q[joint] - target) < 1e-6, "%s at %s" % (joint, target))
    i = arm.joints.messages[n].name.index(joint)
    return max(abs(m.velocity[i]) for m in arm.joints.since(n))


def test_a_live_change_applies_to_the_moving_arm(start_arm):
    arm = start_arm({"max_velocity": 1.0})
    assert 0.9 < top_speed(arm, "base_yaw", 1.2) <= 1.0 + 1e-9
    assert set_one(arm, "max_velocity", 0.3) == (True, "")
    assert get(arm, "max_velocity") == [0.3]
    arm.node.wait_log("parameter max_velocity changed: applied at the next tick")
    assert 0.25 < top_speed(arm, "base_yaw", -0.4) <= 0.3 + 1e-9
    # The solver too: /diagnostics names the one in use.
    assert set_one(arm, "solver", "ccd") == (True, "")
    arm.wait_diag(lambda v: v["solver"] == "ccd", "/diagnostics naming the ccd solver")


def test_a_bad_value_is_refused_with_the_reason_and_the_old_value_stays(start_arm):
    arm = start_arm({"solver": "jacobian"})
    for name, bad, reason in [
        ("solver", "nope", "nope"),
        ("gripper_open", "3", "1.2"),  # outside the gripper's range 0..1.2
        ("max_velocity", -1.0, "max_velocity"),
        ("max_velocity", 1, "max_velocity"),  # an integer for a double
        ("lock", "no_such_joint", "no_such_joint"),
    ]:
        old = get(arm, name)
        ok, why = set_one(arm, name, bad)
        assert not ok and reason in why and name in why, (name, bad, why)
        assert get(arm, name) == old, name
    v = arm.wait_diag(lambda v: True, "a diagnostics report")
    assert v["solver"] == "jacobian", v


def test_a_parameter_fixed_at_start_is_refused_with_the_reason(arm):
    ok, why = set_one(arm, "rate_hz", 100.0)
    assert not ok and "rate_hz cannot change while the node runs" in why and "restart" in why, why
    assert get(arm, "rate_hz") == [50.0]
    for name, v in [("urdf_path", "/tmp/other.urdf"), ("tip_link", "hand"), ("poses_file", ""), ("sim", False)]:
        old = get(arm, name)
        ok, why = set_one(arm, name, v)
        assert not ok and name in why and "cannot change while the node runs" in why, (name, why)
        assert get(arm, name) == old


def test_a_bad_value_at_start_stops_the_node_naming_the_parameter(start_arm):
    arm = start_arm({"solver": "nope"}, wait=False)
    assert arm.node.wait_exit() == 1
    log = arm.node.log()
    assert "invalid parameter" in log and "solver" in log and "nope" in log, log


def test_live_changes_of_the_gripper_positions_lock_and_target_age_take_effect(arm):
    """Live parameters as `ros2 param set` changes them, seen on the arm:
    the gripper's open and closed positions (used by the very next
    service call), a locked joint, the stale limit of targets."""
    from msgs import point_stamped, pose_stamped, stamp_offset
    from test_operate import near

    assert set_one(arm, "gripper_open", "0.9") == (True, "")
    assert set_one(arm, "gripper_closed", "0.3") == (True, "")
    assert arm.trigger("/ik_node/open_gripper")[0]
    arm.wait_joints(lambda q: near(q, {"gripper": 0.9}), "the gripper open at the new 0.9")
    assert arm.trigger("/ik_node/close_gripper")[0]
    arm.wait_joints(lambda q: near(q, {"gripper": 0.3}), "the gripper closed at the new 0.3")

    assert set_one(arm, "lock", "base_yaw") == (True, "")
    yaw = arm.state()["base_yaw"]
    arm.publish("/target_point", point_stamped((0.15, 0.08, 0.2)))
    arm.wait_diag(lambda v: int(v["targets.solved"]) >= 1, "the target solved")
    arm.wait_still()
    assert arm.state()["base_yaw"] == yaw, "a locked joint moved"
    assert set_one(arm, "lock", "") == (True, "")

    # A target 5 s old: stale at the default 0.5 s, taken at 10 s.
    stale = pose_stamped((0.2, 0.0, 0.2))
    stale.header.stamp = stamp_offset(arm.peer.now(), -5.0)
    arm.publish("/target_pose", stale)
    arm.wait_diag(lambda v: v["targets.rejected.stale"] == "1", "the old target refused as stale")
    assert set_one(arm, "max_target_age", 10.0) == (True, "")
    point = point_stamped((0.2, 0.0, 0.2), stamp=stamp_offset(arm.peer.now(), -5.0))
    arm.publish("/target_point", point)
    from msgs import position_error
    arm.wait_tip(lambda t: position_error(t, (0.2, 0.0, 0.2)) < 1e-3, "the 5 s old target reached")


def test_a_live_jog_speed_limit_slows_the_jog(arm):
    import time

    import numpy as np

    from msgs import twist_stamped
    assert arm.trigger("/ik_node/home")[0]
    arm.wait_joints(lambda q: abs(q["elbow"] - 1.0) < 1e-6, "the arm at home")
    assert set_one(arm, "jog_linear_speed", 0.01) == (True, "")
    pub = arm.publisher(type(twist_stamped()), "/ik_node/target_twist")
    start = arm.tip(arm.wait_still())
    first = len(arm.joints)
    for _ in range(30):  # 1.5 s of a 0.05 m/s twist
        pub.publish(twist_stamped((0.05, 0, 0), frame="base_link"))
        time.sleep(0.05)
    # Each tick moves the arm by one control period (20 ms), whenever the
    # tick runs: its step over the period is the speed.
    tips = [arm.tip(m)[:3, 3] for m in arm.joints.since(first)]
    speed = max(np.linalg.norm(b - a) / 0.02 for a, b in zip(tips, tips[1:]))
    assert speed < 0.01 * 1.05, "the tip went %.4f m/s, over the new 0.01 m/s" % speed
    assert np.linalg.norm(tips[-1] - start[:3, 3]) > 0.005, "the jog did not move the tip"
