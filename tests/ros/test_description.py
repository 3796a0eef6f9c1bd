"""Where ik_node gets the robot: `robot_description` as a parameter, and as
the transient-local topic robot_state_publisher latches, published before
or after the node started; a bad description stops the node with a message
that says what is wrong (exit code 1)."""
from std_msgs.msg import String

from harness import URDF

CHAIN = ["base_yaw", "shoulder", "elbow", "wrist_pitch", "wrist_roll"]
# Every moving joint, as joint_states carries them: the chain, the gripper
# (actuated, off the chain), then its mimic.
JOINTS = CHAIN + ["gripper", "gripper_mirror"]


def urdf_text():
    with open(URDF) as f:
        return f.read()


def test_robot_description_as_a_parameter(start_arm):
    arm = start_arm({"urdf_path": None, "robot_description": urdf_text()})
    assert list(arm.joints.last().name) == JOINTS
    arm.node.wait_log("5 joints base_link -> tool (%s)" % ", ".join(CHAIN))


def test_robot_description_topic_published_after_the_node_started(start_arm):
    arm = start_arm({"urdf_path": None}, wait=False)
    arm.node.wait_log("waiting for the robot_description topic")
    assert len(arm.joints) == 0 and arm.node.running()
    pub = arm.peer.latched_publisher(String, "/robot_description")
    pub.publish(String(data=urdf_text()))
    arm.wait_started()
    assert list(arm.joints.last().name) == JOINTS


def test_robot_description_topic_latched_before_the_node_started(domain, tmp_path, start_arm):
    from harness import Peer
    publisher = Peer(domain, "robot_state_publisher")
    try:
        publisher.latched_publisher(String, "/robot_description").publish(String(data=urdf_text()))
        arm = start_arm({"urdf_path": None})
        assert list(arm.joints.last().name) == JOINTS
    finally:
        publisher.close()


def refused(start_arm, params, latched=None):
    """Starts a node that must stop on its robot description: its exit code
    and log."""
    arm = start_arm(params, wait=False)
    if latched is not None:
        arm.node.wait_log("waiting for the robot_description topic")
        arm.peer.latched_publisher(String, "/robot_description").publish(String(data=latched))
    rc = arm.node.wait_exit()
    return rc, arm.node.log()


def test_a_robot_description_that_is_not_urdf_stops_the_node_saying_why(start_arm):
    rc, log = refused(start_arm, {"urdf_path": None, "robot_description": "<robot name='x'><link"})
    assert rc == 1, log
    # Said once, naming the input and what is wrong with it.
    assert "[ik_node]: robot_description: not a URDF document:" in log, log


def test_a_robot_description_topic_without_the_tip_link_stops_the_node_naming_it(start_arm):
    other = "<robot name='other'><link name='base_link'/><link name='a'/>" \
        "<joint name='j' type='revolute'><parent link='base_link'/><child link='a'/>" \
        "<axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint></robot>"
    rc, log = refused(start_arm, {"urdf_path": None}, latched=other)
    assert rc == 1, log
    assert "[ik_node]: robot_description: no link named 'tool' (asked for as the tip link)" in log, log


def test_a_missing_urdf_file_stops_the_node_naming_it(start_arm, tmp_path):
    missing = str(tmp_path / "no_such.urdf")
    rc, log = refused(start_arm, {"urdf_path": missing})
    assert rc == 1, log
    assert "[ik_node]: %s: cannot read the URDF file" % missing in log, log
