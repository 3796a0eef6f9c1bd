"""Simulation: the arm in RViz, driven by ik_node on virtual servos.

    ros2 launch arm_ik display.launch.py
    ros2 launch arm_ik display.launch.py rviz:=false
    ros2 launch arm_ik display.launch.py urdf:=/path/to/so101.urdf params_file:=so101.yaml
    ros2 launch arm_ik display.launch.py sim:=false port:=/dev/ttyUSB0

arm.launch.py (included) starts robot_state_publisher and ik_node; this
file runs it on virtual servos unless sim:=false, and adds rviz2 with
config/arm.rviz unless rviz:=false.

Launch arguments:
  sim          virtual servos (default: true); false drives the servos that
               port, protocol and servo_config name, as arm.launch.py does
  rviz         start rviz2 (default: true)
  rviz_config  RViz2 configuration (default: share/arm_ik/config/arm.rviz)
  and every argument of arm.launch.py (urdf, params_file, base_link,
  tip_link, poses_file, use_sim_time, port, protocol, servo_config).

Only launch, launch_ros and os are imported, and the
file parses as Python 3.8 (scripts/check-packaging checks both).
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'arm_ik'


def _share(*parts):
    """A file in the package's share folder, as a launch substitution."""
    return [FindPackageShare(PACKAGE), os.sep + os.path.join(*parts)]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument(
            'sim', default_value='true', choices=['true', 'false'],
            description='true: virtual servos; false: the servos on port '
                        '(as arm.launch.py)'),
        DeclareLaunchArgument(
            'rviz', default_value='true',
            description='Start rviz2 (false: headless)'),
        DeclareLaunchArgument(
            'rviz_config', default_value=_share('config', 'arm.rviz'),
            description='RViz2 configuration file'),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(_share('launch', 'arm.launch.py')),
            launch_arguments=[('sim', LaunchConfiguration('sim'))],
        ),
        Node(
            package='rviz2',
            executable='rviz2',
            name='rviz2',
            arguments=['-d', LaunchConfiguration('rviz_config')],
            condition=IfCondition(LaunchConfiguration('rviz')),
        ),
    ])
