"""An interactive-marker client that behaves as RViz's InteractiveMarkers
display does with ROS 2's `interactive_markers` client library, as far as
a server can tell (read from their public sources, not copied):

- on connecting it calls `<ns>/get_interactive_markers` and takes the
  markers and `sequence_number` of the answer; updates on `<ns>/update`
  with a `seq_num` at or below that number are dropped;
- KEEP_ALIVE updates are ignored (ROS 2 servers send none);
- after its first update, an update whose `seq_num` is not one higher than
  the last makes the client reset (it asks for the markers again): counted
  here in `resets`, which a conforming server keeps at zero;
- a dragged marker (between MOUSE_DOWN and MOUSE_UP) does not move for the
  server's pose updates: the latest is kept and applied on release;
- a drag sends POSE_UPDATE then MOUSE_DOWN at the press, a POSE_UPDATE per
  frame while the pose changes, POSE_UPDATE then MOUSE_UP at the release,
  each stamped zero (the marker is frame-locked: stamped zero) in the
  marker's frame, with the client's id and the control's name.
"""
import time

import numpy as np
from visualization_msgs.msg import InteractiveMarkerFeedback, InteractiveMarkerUpdate
from visualization_msgs.srv import GetInteractiveMarkers

from harness import wait_until

NS = "/ik_node/target_marker"
# RViz's frame rate while dragging (the rate of its POSE_UPDATEs).
FRAME_RATE = 30.0


def pose_arrays(pose):
    p, q = pose.position, pose.orientation
    return np.array([p.x, p.y, p.z]), np.array([q.x, q.y, q.z, q.w])


class MarkerClient:
    def __init__(self, arm, ns=NS, client_id="/rviz"):
        self.arm, self.ns, self.client_id = arm, ns, client_id
        self.updates = arm.peer.record(InteractiveMarkerUpdate, ns + "/update", 100)
        wait_until(lambda: arm.peer.node.count_publishers(ns + "/update") >= 1,
                   "ik_node's %s/update publisher" % ns)
        self.feedback_pub = arm.publisher(InteractiveMarkerFeedback, ns + "/feedback")
        self.resets = 0
        self.keep_alives = 0
        self.applied = []  # (monotonic time, position, orientation) of every pose shown
        self.connect()

    def connect(self):
        """Asks for the markers, as the client does when it (re)starts."""
        self.response = self.arm.peer.call(GetInteractiveMarkers, self.ns + "/get_interactive_markers")
        markers = {m.name: m for m in self.response.markers}
        self.marker = markers.get("tip_target")
        self.last_seq = None
        self.read = len(self.updates)
        self.dragging = False
        self.requested = None
        if self.marker is not None:
            self._show(*pose_arrays(self.marker.pose))

    def _show(self, position, orientation):
        self.position, self.orientation = position, orientation
        self.applied.append((time.monotonic(), position, orientation))

    def pump(self):
        """Takes in the updates that arrived since the last call."""
        for u in self.updates.since(self.read):
            self.read += 1
            if u.type == InteractiveMarkerUpdate.KEEP_ALIVE:
                self.keep_alives += 1
                continue
            if self.last_seq is not None and u.seq_num != self.last_seq + 1:
                self.resets += 1
                self.connect()
                return
            self.last_seq = u.seq_num
            if u.seq_num <= self.response.sequence_number:
                continue
            for m in u.markers:
                if m.name == "tip_target":
                    self.marker = m
                    self._show(*pose_arrays(m.pose))
            for p in u.poses:
                if p.name == "tip_target":
                    if self.dragging:
                        self.requested = pose_arrays(p.pose)
                    else:
                        self._show(*pose_arrays(p.pose))

    def send(self, event, control, position, orientation):
        fb = InteractiveMarkerFeedback()
        fb.header.frame_id = self.marker.header.frame_id
        fb.header.stamp = self.marker.header.stamp
        fb.client_id = self.client_id
        fb.marker_name = self.marker.name
        fb.control_name = control
        fb.event_type = event
        p, q = fb.pose.position, fb.pose.orientation
        p.x, p.y, p.z = (float(v) for v in position)
        q.x, q.y, q.z, q.w = (float(v) for v in orientation)
        self.arm.publish(self.ns + "/feedback", fb)

    def drag(self, control, poses, during=None):
        """Presses `control` on the marker where it is, moves it through
        `poses` ((position, orientation) pairs) at RViz's frame rate and
        lets go at the last; calls `during()` before the release. Returns
        the release pose (where the mouse let go, not what the marker shows
        then)."""
        F = InteractiveMarkerFeedback
        self.pump()
        self.send(F.POSE_UPDATE, control, self.position, self.orientation)
        self.send(F.MOUSE_DOWN, control, self.position, self.orientation)
        self.dragging = True
        for position, orientation in poses:
            time.sleep(1.0 / FRAME_RATE)
            self.position, self.orientation = position, orientation
            self.send(F.POSE_UPDATE, control, position, orientation)
            self.pump()
        if during is not None:
            during()
        released = self.position, self.orientation
        self.send(F.POSE_UPDATE, control, *released)
        self.send(F.MOUSE_UP, control, *released)
        self.dragging = False
        self._show(*released)
        # The server's latest pose update during the drag, now shown (one
        # that echoed an earlier frame moves the marker back until the
        # echoes still on their way arrive).
        if self.requested is not None:
            self._show(*self.requested)
            self.requested = None
        return released


def line(start, offset, steps):
    """`steps` positions from `start` (excluded) to `start + offset`."""
    return [np.asarray(start) + np.asarray(offset) * (k / steps) for k in range(1, steps + 1)]
