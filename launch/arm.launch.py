"""The arm: ik_node driving the real servos (or virtual ones with
sim:=true), robot_state_publisher for /tf. display.launch.py includes this
file and adds RViz.

    ros2 launch arm_ik arm.launch.py port:=/dev/ttyUSB0 protocol:=pwm_bridge
    ros2 launch arm_ik arm.launch.py port:=/dev/ttyACM0 protocol:=feetech \\
        urdf:=/path/to/so101.urdf params_file:=so101.yaml servo_config:=servos_so101.yaml
    ros2 launch arm_ik arm.launch.py port:=/dev/ttyUSB0 protocol:=dynamixel \\
        urdf:=/path/to/follower.urdf base_link:=base_link tip_link:=link_5

robot_state_publisher gets the URDF as its robot_description parameter, the
text read here and passed in a dict (given with -p on the command line, rcl
parses it as YAML and real URDFs break it); ik_node publishes joint_states,
which robot_state_publisher turns into /tf. With sim:=false (the default
here) ik_node talks to the servos on `port` with `protocol`:
  pwm_bridge  the project's Arduino firmware driving hobby PWM servos
  feetech     Feetech SCS/STS bus servos (SO-100/SO-101)
  dynamixel   ROBOTIS Dynamixel X-series bus servos (Koch v1.1,
              OpenManipulator-X)
To watch the real arm in RViz: display.launch.py sim:=false port:=...

Launch arguments:
  sim           true: virtual servos (port, protocol and servo_config are
                not used); false: the servos on port (default false)
  port          serial port of the servo bus or bridge (default /dev/ttyUSB0)
  protocol      pwm_bridge, feetech or dynamixel (default pwm_bridge)
  servo_config  servo calibration and link file: channels or ids, zero,
                direction, scale, ranges (default: the package's
                servos_pwm.yaml, servos_feetech.yaml or servos_koch.yaml,
                per protocol; a bare
                name is looked up in share/arm_ik/config/)
  urdf         URDF file (default: share/arm_ik/urdf/arm.urdf)
  params_file  ik_node parameters; a bare file name is looked up in
               share/arm_ik/config/ (default: arm.yaml)
  base_link    chain base link (default: the parameters file's)
  tip_link     chain tip link (default: the parameters file's)
  poses_file   named poses for ~/home and ~/go_to/<name>; a bare file name
               is looked up in share/arm_ik/config/ (default: poses_arm.yaml
               with arm.yaml, none with other parameter files)
  follow_leader true: ik_node follows a leader arm's frames on
               ~/joint_command (default: false; teleop.launch.py sets it)
  use_sim_time ik_node and robot_state_publisher on /clock (default: false;
               true for a recorded bag played with `ros2 bag play --clock`,
               whose stamps are of when it was recorded)

Only launch, launch_ros and os are imported, and the
file parses as Python 3.8 (scripts/check-packaging checks both).
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'arm_ik'
# The named poses that fit each parameter file's robot (poses_file).
DEFAULT_POSES = {'arm.yaml': 'poses_arm.yaml'}
PROTOCOLS = ('pwm_bridge', 'feetech', 'dynamixel')
DEFAULT_SERVO_CONFIG = {
    'pwm_bridge': 'servos_pwm.yaml',
    'feetech': 'servos_feetech.yaml',
    'dynamixel': 'servos_koch.yaml',
}


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


def _flag(name, context):
    """A true/false launch argument as the bool a parameter is."""
    value = LaunchConfiguration(name).perform(context).lower()
    if value not in ('true', 'false'):
        raise RuntimeError('arm_ik: {}:={} is not true or false'.format(name, value))
    return value == 'true'


def _servos(context):
    """ik_node's servo parameters: virtual ones, or port, protocol and
    servo_config for the real ones."""
    if _flag('sim', context):
        return {'sim': True}
    protocol = LaunchConfiguration('protocol').perform(context)
    if protocol not in PROTOCOLS:
        raise RuntimeError('arm_ik: protocol:={} is not one of {}'.format(
            protocol, ', '.join(PROTOCOLS)))
    servo_config = LaunchConfiguration('servo_config').perform(context)
    servo_config = os.path.abspath(
        _config_file(servo_config or DEFAULT_SERVO_CONFIG[protocol], context))
    return {
        'sim': False,
        'port': LaunchConfiguration('port').perform(context),
        'protocol': protocol,
        'servo_config': servo_config,
    }


def _nodes(context):
    urdf = os.path.abspath(LaunchConfiguration('urdf').perform(context))
    use_sim_time = _flag('use_sim_time', context)
    params_file = _config_file(LaunchConfiguration('params_file').perform(context), context)
    description = _read_urdf(urdf)

    # Later entries override earlier ones: the file first, then what the
    # launch arguments set. Empty base_link / tip_link keep the file's.
    overrides = {'urdf_path': urdf, 'use_sim_time': use_sim_time}
    overrides.update(_servos(context))
    if _flag('follow_leader', context):
        overrides['follow_leader'] = True
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
            'sim', default_value='false', choices=['true', 'false'],
            description='true: virtual servos; false: the servos on port'),
        DeclareLaunchArgument(
            'port', default_value='/dev/ttyUSB0',
            description='Serial port of the servo bus or PWM bridge'),
        DeclareLaunchArgument(
            'protocol', default_value='pwm_bridge', choices=list(PROTOCOLS),
            description='Servo protocol: pwm_bridge (Arduino firmware, hobby '
                        'PWM servos), feetech (SCS/STS bus servos) or '
                        'dynamixel (X-series bus servos)'),
        DeclareLaunchArgument(
            'servo_config', default_value='',
            description='Servo calibration and link file (empty: the package\'s '
                        'servos_pwm.yaml, servos_feetech.yaml or '
                        'servos_koch.yaml, per protocol)'),
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
            'follow_leader', default_value='false', choices=['true', 'false'],
            description='true: ~/joint_command carries a leader arm\'s frames '
                        '(leader_node; teleop.launch.py sets it)'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false', choices=['true', 'false'],
            description='Run ik_node and robot_state_publisher on /clock (true: '
                        'for a bag played with ros2 bag play --clock)'),
        OpaqueFunction(function=_nodes),
    ])
