"""What ik_node offers on the ROS graph is what docs/ros.md's Topics and
Services tables say (names, types, directions); and what it publishes
(joint_states, /diagnostics, ~/markers) carries what they say."""
import re
import time

import numpy as np
import yaml

import fk
from rclpy.qos import DurabilityPolicy
from visualization_msgs.msg import Marker, MarkerArray

from harness import POSES, diag_values, wait_until
from msgs import point_stamped, position_error
from readme import table

JOINTS = ["base_yaw", "shoulder", "elbow", "wrist_pitch", "wrist_roll", "gripper", "gripper_mirror"]


def resolve(name):
    """A documented name (`~/x`, `x` or `/x`) as ik_node's graph shows it."""
    if name.startswith("~/"):
        return "/ik_node/" + name[2:]
    return name if name.startswith("/") else "/" + name


def names_in(cell):
    """The names in a table cell (`~/a`, `~/b` (`/ik_node/b`)): the
    backquoted words outside parentheses."""
    return re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", cell))


def stamp(header):
    return header.stamp.sec + header.stamp.nanosec * 1e-9


def test_the_graph_has_every_topic_and_service_of_the_readme(start_arm):
    # Without a URDF the node waits for robot_description, with every other
    # topic and service already there: the whole table at once.
    arm = start_arm({"urdf_path": None}, wait=False)
    arm.node.wait_log("waiting for the robot_description topic")
    node = arm.peer.node
    expected = {"in": {}, "out": {}}
    for name, types, direction, _ in table("## Topics"):
        expected[direction][resolve(names_in(name)[0])] = types.split("`")[1]
    services = {}
    for cell, _ in table("## Services") + table("## Services", nth=1):
        typ = re.search(r"\(`([^`]+/srv/[^`]+)`\)", cell)
        for n in names_in(cell):
            if n == "~/program/<name>":
                # One per file of `programs`; the node here is given none.
                continue
            if n.endswith("/<name>"):
                with open(POSES) as f:
                    for pose in yaml.safe_load(f):
                        services[resolve(n.replace("<name>", pose))] = "std_srvs/srv/Trigger"
            else:
                services[resolve(n)] = typ.group(1) if typ else "std_srvs/srv/Trigger"
    assert len(expected["in"]) >= 8 and len(expected["out"]) >= 4 and len(services) >= 9

    def graph():
        if "ik_node" not in node.get_node_names():
            return False
        subs = dict(node.get_subscriber_names_and_types_by_node("ik_node", "/"))
        pubs = dict(node.get_publisher_names_and_types_by_node("ik_node", "/"))
        srvs = dict(node.get_service_names_and_types_by_node("ik_node", "/"))
        have = all(t in subs for t in expected["in"]) and all(t in pubs for t in expected["out"]) \
            and all(s in srvs for s in services)
        return have and (subs, pubs, srvs)
    try:
        subs, pubs, srvs = wait_until(graph, "every documented topic and service on ik_node's graph")
    except AssertionError:
        raise AssertionError("ik_node has subscriptions %s, publishers %s, services %s; docs/ros.md: %s %s"
                             % (node.get_subscriber_names_and_types_by_node("ik_node", "/"),
                                node.get_publisher_names_and_types_by_node("ik_node", "/"),
                                node.get_service_names_and_types_by_node("ik_node", "/"), expected, services))
    for topic, typ in expected["in"].items():
        assert subs[topic] == [typ], (topic, subs[topic], typ)
    for topic, typ in expected["out"].items():
        assert pubs[topic] == [typ], (topic, pubs[topic], typ)
    for service, typ in services.items():
        assert srvs[service] == [typ], (service, srvs[service], typ)
    # robot_description is latched by robot_state_publisher: only a
    # transient-local subscription gets it after the fact.
    info = node.get_subscriptions_info_by_topic("/robot_description")
    assert [i.qos_profile.durability for i in info] == [DurabilityPolicy.TRANSIENT_LOCAL], info


def test_joint_states_carry_every_moving_joint_stamped_now_every_tick(arm):
    first = len(arm.joints)
    d0 = arm.diag.wait(lambda m: True, "a diagnostics report", start=len(arm.diag))
    d1 = arm.diag.wait(lambda m: True, "the next diagnostics report", start=len(arm.diag))
    arm.joints.wait(lambda m: True, "a few more joint states", start=len(arm.joints) + 5)
    msgs = arm.joints.since(first)
    for m in msgs:
        assert list(m.name) == JOINTS
        assert len(m.position) == len(m.velocity) == len(JOINTS) and len(m.effort) == 0
        assert m.position[6] == -m.position[5], "gripper_mirror mimics gripper with multiplier -1"
    stamps = [stamp(m.header) for m in msgs]
    assert all(b > a for a, b in zip(stamps, stamps[1:])), "stamps not increasing"
    # Stamped with the current time (robot_state_publisher needs it): the
    # peer's clock is the same wall clock.
    assert abs(stamps[-1] - time.time()) < 5.0, (stamps[-1], time.time())
    # One per tick: as many stamped between two diagnostics reports as the
    # node counted ticks in between (it ticks and reports on one task).
    t0, t1 = (stamp(d.header) for d in (d0, d1))
    ticks = int(diag_values(d1)["ticks"]) - int(diag_values(d0)["ticks"])
    every = [stamp(m.header) for m in arm.joints.since(0)]
    assert ticks > 0 and sum(1 for t in every if t0 < t <= t1) == ticks, ticks


def test_diagnostics_say_what_the_node_does(arm):
    v = arm.wait_diag(lambda v: True, "a diagnostics report")
    assert (v["_level"], v["_message"], v["_hardware_id"]) == (0, "waiting for a target", "virtual"), v
    assert (v["solver"], v["link"], v["relaxed"], v["holding"]) == ("jacobian", "virtual", "false", "false"), v
    assert v["targets.received"] == "0" and v["last_rejection"] == "none", v
    arm.publish("/target_point", point_stamped((0.2, 0.0, 0.2)))
    v = arm.wait_diag(lambda v: v["targets.reached"] == "1", "the target counted as reached")
    assert (v["targets.received"], v["targets.accepted"], v["targets.rejected.stale"]) == ("1", "1", "0"), v
    assert re.fullmatch(r"tracking, \d+\.\d\d mm off", v["_message"]), v
    assert float(v["solve_time.max"]) > 0 and int(v["ticks"]) > 0, v


def test_markers_show_the_target_and_the_tip(arm):
    rec = arm.peer.record(MarkerArray, "/ik_node/markers")
    m = rec.next("~/markers")
    target, tip = m.markers
    assert (target.ns, target.id, target.type, target.action) == ("arm_ik", 0, Marker.SPHERE, Marker.DELETE)
    assert (tip.ns, tip.id, tip.type, tip.action) == ("arm_ik", 1, Marker.ARROW, Marker.ADD)
    goal = (0.2, -0.05, 0.18)
    arm.publish("/target_point", point_stamped(goal))
    arm.wait_tip(lambda t: position_error(t, goal) < 1e-4, "the tip at the target")
    t = arm.tip(arm.wait_still())
    m = rec.next("~/markers after the arm stopped")
    target, tip = m.markers
    assert target.header.frame_id == tip.header.frame_id == "base_link"
    assert target.action == Marker.ADD and target.color.g > target.color.r, "a green sphere while reaching"
    p = target.pose.position
    assert np.allclose([p.x, p.y, p.z], goal), p
    p, q = tip.pose.position, tip.pose.orientation
    # The arrow is the tip's pose (suite's FK) and points along its x axis.
    assert np.allclose([p.x, p.y, p.z], t[:3, 3], atol=1e-6), (p, t)
    assert fk.angle_between(fk.rotation([q.x, q.y, q.z, q.w]), t[:3, :3]) < 1e-6
