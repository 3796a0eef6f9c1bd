"""Fixtures of the end-to-end suite: the real ik_node (built with
`--features ros2` against the rcl of scripts/ros-env) on a ROS domain of
its own, with an rclpy peer. Run by scripts/test as

    eval "$(scripts/ros-env)"
    cargo build --release --features ros2 --bin ik_node --bin leader_node
    python3 -m pytest tests/ros

Every test gets a fresh domain and node (`arm`, `start_arm`); a module
may share one node between tests that leave it as they found it
(`shared_arm` in that module).
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import POSES, URDF, Arm, Domain, node_binary  # noqa: E402

# What every node of the suite gets unless a test says otherwise: the
# project arm, its chain, its named poses.
DEFAULTS = {"urdf_path": URDF, "base_link": "base_link", "tip_link": "tool", "poses_file": POSES}


def pytest_sessionstart(session):
    path = node_binary()
    if not os.access(path, os.X_OK):
        raise pytest.UsageError(
            "%s is missing: build it with `cargo build --release --features ros2 --bin ik_node --bin leader_node` "
            "after `eval \"$(scripts/ros-env)\"` (or set ARM_IK_NODE)" % path)


@pytest.fixture
def domain():
    d = Domain()
    yield d.id
    d.release()


class Starter:
    """Starts ik_nodes with given parameters on one domain and stops them
    (SIGINT) at the end of the test, printing their logs, which pytest
    shows when the test failed."""

    def __init__(self, domain, tmp_path):
        self.domain, self.tmp_path, self.arms = domain, tmp_path, []

    def __call__(self, params=None, args=(), defaults=True, wait=True):
        p = dict(DEFAULTS) if defaults else {}
        p.update(params or {})
        d = self.tmp_path / ("node%d" % len(self.arms))
        d.mkdir()
        arm = Arm(self.domain, str(d), {k: v for k, v in p.items() if v is not None}, args, wait=False)
        self.arms.append(arm)
        if wait:
            arm.wait_started()
        return arm

    def close(self):
        for arm in self.arms:
            arm.close()
            print("---- ik_node log (%s) ----\n%s" % (arm.node.log_path, arm.node.log()))


@pytest.fixture
def start_arm(domain, tmp_path):
    """`start_arm(params={...}, args=[...])`: an Arm (harness.Arm) running
    ik_node with DEFAULTS updated by `params` (None removes one)."""
    s = Starter(domain, tmp_path)
    yield s
    s.close()


@pytest.fixture
def arm(start_arm):
    """ik_node with the defaults: the project arm on virtual servos, at rest
    in its zero pose (straight up)."""
    return start_arm()


@pytest.fixture(scope="module")
def shared_arm(tmp_path_factory):
    """One ik_node for a module whose tests leave it at rest where it was."""
    d = Domain()
    s = Starter(d.id, tmp_path_factory.mktemp("shared"))
    yield s()
    s.close()
    d.release()
