"""The target marker as RViz uses it (rviz.MarkerClient speaks the protocol
as RViz's InteractiveMarkers display and ROS 2's interactive_markers client
do): the marker it gets on connecting, the update stream it accepts, and a
drag that moves the tip, checked by the suite's FK from /joint_states."""
import numpy as np
from visualization_msgs.msg import InteractiveMarkerControl as Control

import fk
from msgs import point_stamped, position_error
from rviz import MarkerClient, line

CONTROLS = [
    ("move_x", Control.MOVE_AXIS, Control.FIXED),
    ("rotate_x", Control.ROTATE_AXIS, Control.INHERIT),
    ("move_y", Control.MOVE_AXIS, Control.FIXED),
    ("rotate_y", Control.ROTATE_AXIS, Control.INHERIT),
    ("move_z", Control.MOVE_AXIS, Control.FIXED),
    ("rotate_z", Control.ROTATE_AXIS, Control.INHERIT),
]


def shows_the_tip(client, arm, tol=1e-3):
    t = arm.tip()
    return (np.linalg.norm(client.position - t[:3, 3]) < tol
            and fk.angle_between(fk.rotation(client.orientation), t[:3, :3]) < 10 * tol)


def test_get_interactive_markers_gives_the_marker_at_the_tip_with_six_controls(arm):
    client = MarkerClient(arm)
    r = client.response
    # The server's first update (the marker's creation) is number 1; at rest
    # nothing has changed since.
    assert r.sequence_number == 1, r
    assert [m.name for m in r.markers] == ["tip_target"], r
    m = r.markers[0]
    assert m.header.frame_id == "base_link"
    assert (m.header.stamp.sec, m.header.stamp.nanosec) == (0, 0), "frame-locked: stamped zero"
    assert m.scale > 0
    assert [(c.name, c.interaction_mode, c.orientation_mode) for c in m.controls] == CONTROLS
    # At the tip of the arm as it stands (straight up, every joint zero).
    assert shows_the_tip(client, arm, 1e-4), (client.position, arm.tip())
    assert abs(client.position[2] - 0.415) < 1e-4, client.position
    # A still arm sends no update: no keep-alives (ROS 2 servers send
    # none), nothing for two diagnostics periods.
    arm.diag.wait(lambda m: True, "two more diagnostics reports", start=len(arm.diag) + 2)
    assert not client.updates.since(0), client.updates.since(0)


def drag_and_check(arm, client, control, poses, turned=False):
    """Drags `control` through `poses`; checks that the tip follows during
    the drag and ends at the release position (and orientation, when the
    drag `turned` the marker: moved but not turned, the 5-joint arm takes
    the orientation of least joint motion, docs/operate.md "Drag the tip in RViz"),
    that the client never had to reset, and that what it shows ends at the
    tip without jumping back to where the tip was during the drag."""
    start = arm.tip()
    seen = {}

    def during():
        seen["tip"] = arm.tip()
    release_p, release_q = client.drag(control, poses, during=during)
    released = len(client.applied)
    release = fk.rotation(release_q)
    arm.wait_tip(lambda t: position_error(t, release_p) < 1e-3, "the tip at the release point")
    t = arm.tip(arm.wait_still())
    assert position_error(t, release_p) < 1e-3, (t, release_p)
    if turned:
        assert fk.angle_between(t[:3, :3], release) < 0.01, (t, release_q)
    # The tip followed while the marker was held, before the release.
    moved = position_error(seen["tip"], start[:3, 3]) + fk.angle_between(seen["tip"][:3, :3], start[:3, :3])
    assert moved > 0.01, "the tip had not moved when the marker was let go: %s" % seen["tip"]
    wait_for_updates(arm, client)
    assert client.resets == 0, "the client had to ask for the markers again (seq_num gap)"
    assert client.keep_alives == 0, "KEEP_ALIVE updates (a ROS 2 server sends none)"
    assert shows_the_tip(client, arm), (client.position, client.orientation, arm.tip())
    for _, p, _ in client.applied[released:]:
        assert np.linalg.norm(p - release_p) < 2e-3, "the marker jumped to %s after the release at %s" % (p, release_p)
    return t


def wait_for_updates(arm, client):
    """Lets the updates of the last ticks arrive and takes them in."""
    arm.joints.wait(lambda m: True, "a few more ticks", start=len(arm.joints) + 10)
    client.pump()


def test_a_drag_from_the_start_pose_moves_the_tip(arm):
    """Issue 25 item 7: the arm starts straight up (every joint zero);
    pulling the z arrow 60 mm down must bring the tip 60 mm down (the elbow
    bends), as from any other pose."""
    client = MarkerClient(arm)
    p0, q0 = client.position, client.orientation
    t = drag_and_check(arm, client, "move_z", [(p, q0) for p in line(p0, (0, 0, -0.06), 90)])
    assert abs(t[2, 3] - (p0[2] - 0.06)) < 1e-3, t


def test_a_drag_from_a_bent_arm_moves_the_tip_along_the_arrow(arm):
    arm.publish("/target_point", point_stamped((0.2, 0.0, 0.2)))
    arm.wait_tip(lambda t: position_error(t, (0.2, 0.0, 0.2)) < 1e-3, "the tip at (0.2, 0, 0.2)")
    arm.wait_still()
    client = MarkerClient(arm)
    wait_for_updates(arm, client)
    assert shows_the_tip(client, arm), (client.position, arm.tip())
    p0, q0 = client.position, client.orientation
    t = drag_and_check(arm, client, "move_z", [(p, q0) for p in line(p0, (0, 0, -0.06), 90)])
    assert np.allclose(t[:3, 3], p0 + (0, 0, -0.06), atol=1e-3), t
    # Then sideways along y, from where it was let go.
    p1 = client.position
    t = drag_and_check(arm, client, "move_y", [(p, q0) for p in line(p1, (0, 0.04, 0), 40)])
    assert np.allclose(t[:3, 3], p1 + (0, 0.04, 0), atol=1e-3), t


def test_turning_the_ring_about_the_tool_axis_turns_the_tip(arm):
    assert arm.trigger("/ik_node/home")[0]
    arm.wait_joints(lambda q: abs(q["elbow"] - 1.0) < 1e-6, "the arm at home")
    arm.wait_still()
    client = MarkerClient(arm)
    wait_for_updates(arm, client)
    p0, q0 = client.position, client.orientation
    r0 = fk.rotation(q0)
    # rotate_z turns about the tool's z axis (INHERIT): 0.6 rad in 30 frames.
    poses = [(p0, fk.quaternion(r0 @ fk.rot_z(0.6 * k / 30))) for k in range(1, 31)]
    t = drag_and_check(arm, client, "rotate_z", poses, turned=True)
    assert position_error(t, p0) < 1e-3, t
    assert abs(fk.angle_between(t[:3, :3], r0) - 0.6) < 0.01, t
