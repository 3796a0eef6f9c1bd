"""A soak of the real ik_node on real rcl (scripts/ros-soak runs this; not
in CI): for --duration seconds, an rclpy peer process publishes
target_point at 1 kHz along a figure-eight while this one drags the target
marker as RViz does (a drag every 10 s), jogs with ~/target_twist (a
burst every 10 s, between the drags) and changes live parameters through
set_parameters (every 5 s).

Reported, once a second to stderr and at the end:
- the node's resident memory (VmRSS from /proc): its baseline after
  --baseline seconds and its growth since, which must stay under
  --max-growth MB (exit 1 otherwise);
- ticks late by more than a control period: consecutive /joint_states
  stamps more than two periods apart (the tick after one period of lateness
  would have come), and the longest gap;
- drops: every twist and feedback sent must be counted by the node
  (/diagnostics: steering.twists + .marker_feedback + .refused), every
  joint state the node published must reach the peer (its `ticks` against
  the /joint_states received), every parameter change must be taken, and
  the last target sent must be the one the node ends on (its ~/markers
  sphere); exit 1 otherwise. Targets the node never saw are counted, not
  failed: at 1 kHz against a 50 Hz loop all but the latest before each
  tick are superseded anyway, and a loaded machine loses some (see
  docs/benchmarks.md's soak notes).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import POSES, URDF, Arm, Domain, Peer, diag_values, wait_until  # noqa: E402
from msgs import point_stamped, twist_stamped  # noqa: E402
from rviz import MarkerClient, line  # noqa: E402

PARAMS = [("max_velocity", 1.2), ("solver", "ccd"), ("jog_linear_speed", 0.05), ("budget_ms", 3.0),
          ("max_velocity", 1.5), ("solver", "jacobian"), ("jog_linear_speed", 0.1), ("budget_ms", 5.0)]


def figure_eight(t):
    """A point of a figure-eight in front of the arm, 10 s a loop."""
    w = 2 * math.pi * t / 10.0
    return (0.2, 0.06 * math.sin(w), 0.2 + 0.04 * math.sin(2 * w))


def publish_targets(domain, duration, rate):
    """The 1 kHz target publisher (a process of its own): prints how many
    it sent and how far behind its schedule it fell."""
    peer = Peer(domain, "soak_targets")
    pub = peer.publisher(type(point_stamped((0, 0, 0))), "/target_point")
    wait_until(lambda: pub.get_subscription_count() >= 1, "ik_node subscribed to /target_point")
    print("ready", flush=True)
    sent, late, start, last = 0, 0.0, time.monotonic(), None
    period = 1.0 / rate
    while True:
        now = time.monotonic() - start
        if now >= duration:
            break
        last = figure_eight(now)
        pub.publish(point_stamped(last, stamp=peer.now()))
        sent += 1
        due = start + sent * period
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        else:
            late = max(late, -wait)
    print(json.dumps({"sent": sent, "seconds": time.monotonic() - start, "most_behind_s": late, "last": last}),
          flush=True)
    peer.close()


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line_ in f:
            if line_.startswith("VmRSS:"):
                return int(line_.split()[1])
    return 0


class Steering:
    """Drags and jogs from this process, counting what it sent."""

    def __init__(self, arm):
        self.arm = arm
        self.client = MarkerClient(arm)
        self.twist_pub = arm.publisher(type(twist_stamped()), "/ik_node/target_twist")
        self.twists = 0
        self.feedback = 0
        self.params = {"set": 0, "refused": []}

    def drag(self):
        c = self.client
        c.pump()
        p0, q0 = c.position, c.orientation
        poses = [(p, q0) for p in line(p0, (0, 0, -0.03), 45)]
        c.drag("move_z", poses)
        # POSE_UPDATE + MOUSE_DOWN, one per pose, POSE_UPDATE + MOUSE_UP.
        self.feedback += len(poses) + 4

    def jog(self, seconds=2.0):
        for k in range(int(seconds * 20)):
            self.twist_pub.publish(twist_stamped((0.0, 0.03 * (1 if k < 20 else -1), 0.0), frame="base_link"))
            self.twists += 1
            time.sleep(0.05)

    def set_param(self, name, value):
        ok, why = self.arm.set_parameter(name, value)
        self.params["set"] += 1
        if not ok:
            self.params["refused"].append("%s=%r: %s" % (name, value, why))


def stamp_secs(m):
    return m.header.stamp.sec + m.header.stamp.nanosec * 1e-9


def late_ticks(arm, period):
    """Consecutive joint states more than two periods apart, and the
    longest gap (s)."""
    gaps = np.diff([stamp_secs(m) for m in arm.joints.since(0)])
    return int(np.sum(gaps > 2 * period)), float(gaps.max()) if len(gaps) else 0.0


def joint_states_missed(arm):
    """Ticks the node made between its first and last diagnostics report
    (its `ticks` counter) against the joint states the peer received
    stamped in between: the node reports and ticks on one task, so a
    report's stamp comes after every tick it counts."""
    first, last = arm.diag.messages[0], arm.diag.messages[-1]
    t0, t1 = stamp_secs(first), stamp_secs(last)
    ticks = int(diag_values(last)["ticks"]) - int(diag_values(first)["ticks"])
    got = sum(1 for m in arm.joints.since(0) if t0 < stamp_secs(m) <= t1)
    return ticks, got


def run(args, dir):
    domain = Domain()
    arm = Arm(domain.id, dir, {"urdf_path": URDF, "poses_file": POSES})
    pid = arm.node.proc.pid
    targets = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--publisher", str(domain.id),
                                "--duration", str(args.duration), "--rate", str(args.rate)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert targets.stdout.readline().strip() == "ready"
        steering = Steering(arm)
        rss, start = [], time.monotonic()
        stop = threading.Event()

        def sample():
            while not stop.wait(1.0):
                t = time.monotonic() - start
                rss.append((t, rss_kb(pid)))
                if int(t) % 30 == 0:
                    print("%4.0f s  VmRSS %6d kB  joint states %d" % (t, rss[-1][1], len(arm.joints)),
                          file=sys.stderr, flush=True)
        from visualization_msgs.msg import MarkerArray
        shown = arm.peer.record(MarkerArray, "/ik_node/markers")
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        k = 0
        while time.monotonic() - start < args.duration - 3:
            steering.set_param(*PARAMS[k % len(PARAMS)])
            if k % 2 == 0:
                steering.drag()
            else:
                steering.jog()
            k += 1
            wait = start + k * 5.0 - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        sent = json.loads(targets.stdout.readline())
        targets.wait()
        stop.set()
        sampler.join()
        # The node takes in the last messages and reports them.
        arm.wait_diag(lambda v: True, "a diagnostics report")
        v = arm.wait_diag(lambda v: True, "the final diagnostics")
        arm.joints.wait(lambda m: True, "the joint states up to the report", start=len(arm.joints) + 5)
        ticks, received = joint_states_missed(arm)
        p = shown.next("~/markers after the end").markers[0].pose.position
        final_target = [p.x, p.y, p.z]
        n_late, worst = late_ticks(arm, 1.0 / 50.0)
        base = [kb for t, kb in rss if t >= args.baseline]
        result = {
            "duration_s": args.duration,
            "targets": {"sent": sent["sent"], "rate_hz": sent["sent"] / sent["seconds"],
                        "publisher_most_behind_ms": sent["most_behind_s"] * 1e3,
                        "received_by_node": int(v["targets.received"]), "reached": int(v["targets.reached"]),
                        "superseded": int(v["targets.superseded"]), "last_sent": sent["last"],
                        "node_ends_on": final_target},
            "steering": {"twists_sent": steering.twists, "feedback_sent": steering.feedback,
                         "taken_or_refused": int(v["steering.twists"]) + int(v["steering.marker_feedback"])
                         + int(v["steering.refused"])},
            "parameters": steering.params,
            "joint_states": {"node_ticks": ticks, "received_by_peer": received,
                             "late_by_more_than_a_period": n_late, "longest_gap_ms": worst * 1e3},
            "node": {"loop_rate_hz": float(v["loop_rate_hz"]), "tick_time_max_ms": float(v["tick_time.max"]) * 1e3,
                     "solve_time_p99_ms": float(v["solve_time.p99"]) * 1e3},
            "rss_kb": {"first": rss[0][1], "baseline": base[0] if base else None, "max": max(kb for _, kb in rss),
                       "last": rss[-1][1], "growth_after_baseline": (max(base) - base[0]) if base else None,
                       "every_30_s": [kb for t, kb in rss][::30]},
        }
        return result
    finally:
        if targets.poll() is None:
            targets.kill()
        arm.close()
        domain.release()


def verdict(r, max_growth_mb):
    bad = []
    g = r["rss_kb"]["growth_after_baseline"]
    if g is None or g > max_growth_mb * 1024:
        bad.append("resident memory grew %s kB after the baseline (limit %.1f MB)" % (g, max_growth_mb))
    t = r["targets"]
    if not np.allclose(t["last_sent"], t["node_ends_on"], atol=1e-9):
        bad.append("the last target sent was %s, the node ends on %s" % (t["last_sent"], t["node_ends_on"]))
    s = r["steering"]
    if s["taken_or_refused"] != s["twists_sent"] + s["feedback_sent"]:
        bad.append("%d twists and feedback sent, %d counted by the node"
                   % (s["twists_sent"] + s["feedback_sent"], s["taken_or_refused"]))
    j = r["joint_states"]
    if j["received_by_peer"] != j["node_ticks"]:
        bad.append("%d joint states published, %d received" % (j["node_ticks"], j["received_by_peer"]))
    if r["parameters"]["refused"]:
        bad.append("parameter changes refused: %s" % r["parameters"]["refused"])
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=600.0, help="seconds (default 600)")
    ap.add_argument("--rate", type=float, default=1000.0, help="targets per second (default 1000)")
    ap.add_argument("--baseline", type=float, default=60.0, help="memory baseline after this many seconds")
    ap.add_argument("--max-growth", type=float, default=1.0, help="MB of RSS growth allowed after the baseline")
    ap.add_argument("--json", action="store_true", help="the report as one JSON object")
    ap.add_argument("--publisher", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.publisher is not None:
        publish_targets(args.publisher, args.duration, args.rate)
        return
    with tempfile.TemporaryDirectory(prefix="ros-soak") as dir:
        r = run(args, dir)
    bad = verdict(r, args.max_growth)
    r["failures"] = bad
    print(json.dumps(r) if args.json else json.dumps(r, indent=1))
    for b in bad:
        print("ros-soak: %s" % b, file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
