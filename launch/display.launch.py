"""Simulation: the arm in RViz, driven by ik_node on virtual servos.

    ros2 launch arm_ik display.launch.py
    ros2 launch arm_ik display.launch.py rviz:=false
    ros2 launch arm_ik display.launch.py urdf:=/path/to/so101.urdf params_file:=so101.yaml

Starts robot_state_publisher with the URDF (read here and passed as the
robot_description parameter in a dict: given with -p on the command line,
rcl parses it as YAML and real URDFs break it), rviz2 with config/arm.rviz unless rviz:=false, and ik_node with
sim:=true and the parameters file. ik_node publishes joint_states, which
robot_state_publisher turns into /tf.

Launch arguments:
  urdf         URDF file (default: share/arm_ik/urdf/arm.urdf)
  params_file  ik_node parameters; a bare file name is looked up in
               share/arm_ik/config/ (default: arm.yaml)
  base_link    chain base link (default: the parameters file's)
  tip_link     chain tip link (default: the parameters file's)
  rviz         start rviz2 (default: true)
  rviz_config  RViz2 configuration (default: share/arm_ik/config/arm.rviz)
  poses_file   named poses for ~/home and ~/go_to/<name>; a bare file name
               is looked up in share/arm_ik/config/ (default: poses_arm.yaml
               with arm.yaml, none with other parameter files)
  use_sim_time ik_node and robot_state_publisher on /clock (default: false;
               true for a recorded bag played with `ros2 bag play --clock`,
               whose stamps are of when it was recorded)

Only launch, launch_ros and os are imported, and the
file parses as Python 3.8 (scripts/check-packaging checks both).
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'arm_ik'
# The named poses that fit each parameter file's robot (poses_file).
DEFAULT_POSES = {'arm.yaml': 'poses_arm.yaml'}


def _share(*parts):
    """A file in the package's share folder, as a launch substitution."""
    return [FindPackageShare(PACKAGE), os.sep + os.path.join(*parts)]


def _config_file(value, context):
    """A bare file name is in the package's config folder; a path is as given
    (./name for the current directory)."""
    if os.sep not in value:
        value = FindPackageShare(PACKAGE).perform(context) + os.sep + os.path.join('config', value)
    if not os.path.isfile(value):
        raise RuntimeError('arm_ik: no such file: {}'.format(value))
    return value


def _read_urdf(path):
    if not os.path.isfile(path):
        raise RuntimeError('arm_ik: URDF not found: {}'.format(path))
    with open(path, 'r') as f:
        return f.read()


def _use_sim_time(context):
    """The use_sim_time argument as the bool both nodes' parameter is."""
    value = LaunchConfiguration('use_sim_time').perform(context).lower()
    if value not in ('true', 'false'):
        raise RuntimeError('arm_ik: use_sim_time:={} is not true or false'.format(value))
    return value == 'true'


def _nodes(context):
    urdf = os.path.abspath(LaunchConfiguration('urdf').perform(context))
    use_sim_time = _use_sim_time(context)
    params_file = _config_file(LaunchConfiguration('params_file').perform(context), context)
    description = _read_urdf(urdf)

    # Later entries override earlier ones: the file first, then what the
    # launch arguments set. Empty base_link / tip_link keep the file's.
    overrides = {'urdf_path': urdf, 'sim': True, 'use_sim_time': use_sim_time}
    for name in ('base_link', 'tip_link'):
        value = LaunchConfiguration(name).perform(context)
        if value:
            overrides[name] = value
    poses = LaunchConfiguration('poses_file').perform(context) \
        or DEFAULT_POSES.get(os.path.basename(params_file), '')
    if poses:
        overrides['poses_file'] = os.path.abspath(_config_file(poses, context))

    return [
        Node(
            package='robot_state_publisher',
            executable='robot_state_publisher',
            name='robot_state_publisher',
            output='screen',
            parameters=[{'robot_description': description, 'use_sim_time': use_sim_time}],
        ),
        Node(
            package=PACKAGE,
            executable='ik_node',
            name='ik_node',
            output='screen',
            parameters=[params_file, overrides],
        ),
    ]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument(
            'urdf', default_value=_share('urdf', 'arm.urdf'),
            description='URDF of the robot (the package arm by default)'),
        DeclareLaunchArgument(
            'params_file', default_value='arm.yaml',
            description='ik_node parameters file; a bare name is looked up '
                        'in share/arm_ik/config/'),
        DeclareLaunchArgument(
            'base_link', default_value='',
            description='Chain base link (empty: the parameters file\'s)'),
        DeclareLaunchArgument(
            'poses_file', default_value='',
            description='Named poses file; a bare name is looked up in '
                        'share/arm_ik/config/ (empty: poses_arm.yaml with '
                        'arm.yaml, none otherwise)'),
        DeclareLaunchArgument(
            'tip_link', default_value='',
            description='Chain tip link (empty: the parameters file\'s)'),
        DeclareLaunchArgument(
            'rviz', default_value='true',
            description='Start rviz2 (false: headless)'),
        DeclareLaunchArgument(
            'rviz_config', default_value=_share('config', 'arm.rviz'),
            description='RViz2 configuration file'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false', choices=['true', 'false'],
            description='Run ik_node and robot_state_publisher on /clock (true: '
                        'for a bag played with ros2 bag play --clock)'),
        OpaqueFunction(function=_nodes),
        Node(
            package='rviz2',
            executable='rviz2',
            name='rviz2',
            arguments=['-d', LaunchConfiguration('rviz_config')],
            condition=IfCondition(LaunchConfiguration('rviz')),
        ),
    ])
