"""Leader–follower teleoperation: a leader arm moved by hand (leader_node,
torque off) drives the follower (ik_node with follow_leader, through
arm.launch.py, included), each arm shown by its own robot_state_publisher:
the follower's on /joint_states, the leader's in the `leader` namespace on
/leader/joint_states (RViz: a second RobotModel on /leader/robot_description).

    ros2 launch arm_ik teleop.launch.py leader_port:=/dev/ttyACM0 \\
        port:=/dev/ttyACM1 protocol:=feetech
    ros2 launch arm_ik teleop.launch.py leader_port:=/dev/ttyACM0 sim:=true

Launch arguments:
  leader_port    serial port of the leader arm (default /dev/ttyACM0)
  leader_config  the leader's servo file; its servos must report their
                 position (default: the package's servos_feetech.yaml; a
                 bare name is looked up in share/arm_ik/config/)
  leader_urdf    the leader's URDF (default: the follower's, urdf)
  and every argument of arm.launch.py for the follower (urdf, params_file,
  sim, port, protocol, servo_config, ...).

Only launch, launch_ros and os are imported, and the
file parses as Python 3.8 (scripts/check-packaging checks both).
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'arm_ik'
NAMESPACE = 'leader'


def _share(*parts):
    """A file in the package's share folder, as a launch substitution."""
    return [FindPackageShare(PACKAGE), os.sep + os.path.join(*parts)]


def _config_file(value, context):
    """A bare file name is in the package's config folder."""
    if os.sep not in value:
        value = FindPackageShare(PACKAGE).perform(context) + os.sep + os.path.join('config', value)
    if not os.path.isfile(value):
        raise RuntimeError('arm_ik: no such file: {}'.format(value))
    return os.path.abspath(value)


def _leader(context):
    follower_urdf = os.path.abspath(LaunchConfiguration('urdf').perform(context))
    urdf = LaunchConfiguration('leader_urdf').perform(context)
    urdf = os.path.abspath(urdf) if urdf else follower_urdf
    if not os.path.isfile(urdf):
        raise RuntimeError('arm_ik: URDF not found: {}'.format(urdf))
    with open(urdf, 'r') as f:
        description = f.read()
    params = {
        'leader_config': _config_file(LaunchConfiguration('leader_config').perform(context), context),
        'leader_port': LaunchConfiguration('leader_port').perform(context),
        'urdf_path': urdf,
        'follower_urdf_path': follower_urdf if follower_urdf != urdf else '',
    }
    return [
        Node(
            package='robot_state_publisher',
            executable='robot_state_publisher',
            name='leader_state_publisher',
            namespace=NAMESPACE,
            output='screen',
            parameters=[{'robot_description': description}],
        ),
        Node(
            package=PACKAGE,
            executable='leader_node',
            name='leader_node',
            namespace=NAMESPACE,
            output='screen',
            parameters=[params],
        ),
    ]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument(
            'leader_port', default_value='/dev/ttyACM0',
            description='Serial port of the leader arm'),
        DeclareLaunchArgument(
            'leader_config', default_value='servos_feetech.yaml',
            description='The leader\'s servo file (bus servos that report '
                        'their position); a bare name is looked up in '
                        'share/arm_ik/config/'),
        DeclareLaunchArgument(
            'leader_urdf', default_value='',
            description='The leader\'s URDF (empty: the follower\'s)'),
        DeclareLaunchArgument(
            'urdf', default_value=_share('urdf', 'arm.urdf'),
            description='URDF of the follower (the package arm by default)'),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(_share('launch', 'arm.launch.py')),
            launch_arguments=[('follow_leader', 'true')],
        ),
        OpaqueFunction(function=_leader),
    ])
