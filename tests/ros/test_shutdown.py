"""SIGINT (Ctrl-C, ros2 launch) and SIGTERM (a service manager) end ik_node
within a second, with its summary logged and its servo link closed: on a
simulated Feetech bus (tests/python/feetech_bus.py, on a pty) whose servo
file says `link.on_exit: relax`, every servo's torque is switched off."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from harness import ROOT

FEETECH_SIM = os.path.join(ROOT, "tests", "python", "feetech_bus.py")
SERVOS = os.path.join(ROOT, "config", "servos_feetech.yaml")
IDS = [1, 2, 3, 4, 5, 6]


@pytest.fixture
def feetech_bus(tmp_path):
    """The simulated bus: its pty's path and its event log's path."""
    log = tmp_path / "bus.jsonl"
    sim = subprocess.Popen([sys.executable, FEETECH_SIM, "--ids", ",".join(map(str, IDS)), "--log", str(log)],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = sim.stdout.readline()
    assert line.startswith("PTY "), line
    yield line.split()[1], log
    sim.kill()
    sim.wait()


def relaxing_servo_file(tmp_path):
    with open(SERVOS) as f:
        cfg = yaml.safe_load(f)
    cfg["link"]["on_exit"] = "relax"
    # As the bus tests in Rust do: a Python simulator on a busy machine may
    # answer later than the stock 100 ms, which is a reply the node would
    # count lost (and a servo it would say it could not relax).
    cfg["link"]["reply_timeout_ms"] = 300
    path = tmp_path / "servos.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def events(log):
    with open(log) as f:
        return [json.loads(line) for line in f]


def exit_time(arm, sig):
    """Sends `sig`; the seconds until the process was gone, and its code."""
    t0 = time.monotonic()
    arm.node.signal(sig)
    rc = arm.node.wait_exit()
    return time.monotonic() - t0, rc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_the_node_within_a_second_relaxing_the_servos(start_arm, feetech_bus, tmp_path, sig):
    port, bus_log = feetech_bus
    arm = start_arm({"sim": False, "port": port, "protocol": "feetech",
                     "servo_config": relaxing_servo_file(tmp_path)})
    arm.wait_diag(lambda v: v["link_ok"] == "true" and v["_hardware_id"] != "virtual", "the servo link up")
    assert not [e for e in events(bus_log) if e.get("torque") == 0], "relaxed before the signal"
    signalled = time.time()
    took, rc = exit_time(arm, sig)
    log = arm.node.log()
    assert rc == 0, log
    assert took < 1.0, "ik_node took %.2f s to exit on %s" % (took, sig.name)
    assert "%s: shutting down after " % sig.name in log and "targets 0 received" in log, log
    assert "servo link closed" in log, log
    relaxed = {e["id"] for e in events(bus_log) if e.get("torque") == 0 and e["t"] >= signalled}
    assert relaxed == set(IDS), "torque off on %s of %s: %s" % (sorted(relaxed), IDS, events(bus_log)[-10:])


def test_a_signal_while_waiting_for_the_robot_ends_the_node(start_arm):
    arm = start_arm({"urdf_path": None}, wait=False)
    arm.node.wait_log("waiting for the robot_description topic")
    took, rc = exit_time(arm, signal.SIGINT)
    assert rc == 0 and took < 1.0, (rc, took)
    assert "SIGINT while waiting for robot_description: exiting" in arm.node.log()
