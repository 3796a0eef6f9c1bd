"""Collisions and the workspace (docs/collisions.md) as a ROS user meets
them: `~/collision_markers` for RViz, a target under the floor or inside a
box of `workspace_file` (also one added while the node runs) refused with
the reason `collision` naming the pair while nothing moves, `collision_margin` set as `ros2 param set` does,
and the clearance and closest pair in /diagnostics."""
import os

import pytest
import yaml
from visualization_msgs.msg import Marker, MarkerArray

from msgs import point_stamped, position_error

# A box to the arm's right (docs/collisions.md's), clear of it at rest
# (upright) and of the targets in front.
BOX = {"name": "box", "shape": "box", "size": [0.08, 0.08, 0.1], "position": [0.0, -0.22, 0.05]}
AMBER = (1.0, 0.7, 0.0)


def workspace(tmp_path, obstacles=(BOX,)):
    """Writes the workspace file (as an editor saves it: a new file moved
    into place, so the node never reads half of it); returns its path."""
    path, new = tmp_path / "workspace.yaml", tmp_path / "workspace.yaml.new"
    new.write_text(yaml.safe_dump({"floor_z": 0.0, "obstacles": list(obstacles)}))
    os.replace(new, path)
    return str(path)


def markers(arm):
    return arm.peer.record(MarkerArray, "/ik_node/collision_markers")


def refused_for_collision(arm, goal, pair):
    """Publishes the target point `goal` and checks it is refused with the
    reason `collision` naming `pair`, and that no joint moved."""
    rest = arm.wait_still().position
    before = arm.wait_diag(lambda v: True, "a diagnostics report")
    n = len(arm.joints)
    arm.publish("/target_point", point_stamped(goal))
    v = arm.wait_diag(lambda v: int(v["targets.rejected.collision"])
                      == int(before["targets.rejected.collision"]) + 1, "the target refused for a collision")
    assert v["last_rejection"].startswith("collision: ") and pair in v["last_rejection"], v
    assert v["targets.reached"] == before["targets.reached"], v
    arm.joints.wait(lambda m: True, "more joint states", start=len(arm.joints) + 5)
    moved = [m.position for m in arm.joints.since(n) if list(m.position) != list(rest)]
    assert not moved, moved[:3]
    return v


def test_collision_markers_show_the_floor_the_obstacles_and_the_closest_links(start_arm, tmp_path):
    arm = start_arm({"workspace_file": workspace(tmp_path)})
    rec = markers(arm)
    msg = rec.wait(lambda m: len(m.markers) > 0, "a collision MarkerArray")
    assert msg.markers[0].action == Marker.DELETEALL, msg.markers[0]
    shown = msg.markers[1:]
    assert all(m.action == Marker.ADD and m.header.frame_id == "base_link" for m in shown), shown
    obstacles = [m for m in shown if m.ns == "arm_ik/obstacles"]
    assert len(obstacles) == 2, obstacles  # the floor and the box
    floor = [m for m in obstacles if m.type == Marker.CUBE and m.scale.x > 1.0]
    assert len(floor) == 1 and abs(floor[0].pose.position.z) < 0.002, obstacles
    box = [m for m in obstacles if m not in floor][0]
    assert box.type == Marker.CUBE and (box.scale.x, box.scale.y, box.scale.z) == (0.08, 0.08, 0.1), box
    p = box.pose.position
    assert (p.x, p.y, p.z) == (0.0, -0.22, 0.05), p
    # Upright, no link is near anything: no link markers.
    assert not [m for m in shown if m.ns == "arm_ik/links"], shown

    # The tip 2 cm above the floor, the hand within three margins of it:
    # the closest pair's link shown amber, in a message that starts afresh.
    low = (0.2, 0.0, 0.02)
    arm.publish("/target_point", point_stamped(low))
    arm.wait_tip(lambda t: position_error(t, low) < 1e-3, "the tip 2 cm above the floor")
    msg = rec.wait(lambda m: any(k.ns == "arm_ik/links" for k in m.markers), "link markers", start=len(rec))
    assert msg.markers[0].action == Marker.DELETEALL, msg.markers[0]
    links = [m for m in msg.markers if m.ns == "arm_ik/links"]
    assert len(links) == 1, links  # the floor is the other of the pair
    c = links[0].color
    assert (c.r, c.g, c.b) == pytest.approx(AMBER), c


def test_a_target_under_the_floor_is_refused_naming_the_pair_and_nothing_moves(arm):
    refused_for_collision(arm, (0.2, 0.0, -0.05), " vs floor")


def test_a_target_inside_a_box_of_the_workspace_file_is_refused_and_one_beside_it_reached(start_arm, tmp_path):
    arm = start_arm({"workspace_file": workspace(tmp_path)})
    refused_for_collision(arm, (0.0, -0.22, 0.05), " vs box")
    goal = (0.0, -0.22, 0.2)
    arm.publish("/target_point", point_stamped(goal))
    arm.wait_tip(lambda t: position_error(t, goal) < 1e-3, "the tip at a target above the box")


def test_a_box_added_to_the_workspace_file_while_the_node_runs_is_shown_and_respected(start_arm, tmp_path):
    path = workspace(tmp_path, obstacles=())
    arm = start_arm({"workspace_file": path})
    rec = markers(arm)
    rec.wait(lambda m: len(m.markers) == 2, "the floor alone")
    assert workspace(tmp_path) == path
    rec.wait(lambda m: len([k for k in m.markers if k.ns == "arm_ik/obstacles"]) == 2, "the box shown",
             start=len(rec))
    refused_for_collision(arm, (0.0, -0.22, 0.05), " vs box")


def test_collision_margin_set_as_ros2_param_set_does_keeps_the_arm_farther_from_the_floor(arm):
    low = (0.2, 0.0, 0.06)
    ok, reason = arm.set_parameter("collision_margin", 0.1)
    assert ok, reason
    assert arm.get_parameters("collision_margin") == [0.1]
    refused_for_collision(arm, low, " vs floor")
    ok, reason = arm.set_parameter("collision_margin", 0.01)
    assert ok, reason
    arm.publish("/target_point", point_stamped(low))
    arm.wait_tip(lambda t: position_error(t, low) < 1e-3, "the tip at the low target once the margin is 1 cm")


def test_diagnostics_carry_the_clearance_and_the_closest_pair(arm):
    v = arm.wait_diag(lambda v: True, "a diagnostics report")
    high = float(v["collision.clearance"])
    assert high > 0.02, v
    low = (0.2, 0.0, 0.02)
    arm.publish("/target_point", point_stamped(low))
    arm.wait_tip(lambda t: position_error(t, low) < 1e-3, "the tip 2 cm above the floor")
    arm.wait_still()
    v = arm.wait_diag(lambda v: float(v["collision.clearance"]) < high, "a smaller clearance")
    # The hand is the closest to the floor: beyond the 1 cm margin, within
    # three (where the markers show it amber).
    assert v["collision.closest"] == "hand vs floor", v
    assert 0.01 <= float(v["collision.clearance"]) < 0.03, v
    assert v["collision.min_clearance"] == v["collision.clearance"], v
