"""What the end-to-end suite, scripts/ros-latency and scripts/ros-soak share:
a ROS domain of their own, the real ik_node as a process, and an rclpy peer
that publishes, records and calls services on that domain.

Everything here waits on conditions (a message that says so, a process that
exited), never for a fixed time, with generous timeouts: the machines have
two cores and other builds run beside the tests.
"""
import fcntl
import os
import signal
import subprocess
import threading
import time

import rclpy
import yaml
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
URDF = os.path.join(ROOT, "urdf", "arm.urdf")
POSES = os.path.join(ROOT, "config", "poses_arm.yaml")
# Long enough for a loaded 2-core machine; a condition that holds returns
# at once, so only a failing test waits this long.
TIMEOUT = float(os.environ.get("ARM_IK_ROS_TIMEOUT", "30"))
# Fast DDS accepts domain ids 0..232; these are left to the suite, away
# from 0 (what a developer's own nodes use).
DOMAINS = range(100, 233)
LOCK_DIR = os.path.join("/tmp", "arm_ik_ros_domains")


def node_binary(name="ik_node"):
    """ik_node (or the package's other executable `name`) where cargo built
    it: ARM_IK_NODE (ARM_IK_LEADER_NODE) when set, else the release folder
    of `cargo metadata`'s target directory (CARGO_TARGET_DIR or a
    .cargo/config setting moves it away from the checkout's target/)."""
    env = {"ik_node": "ARM_IK_NODE", "leader_node": "ARM_IK_LEADER_NODE"}[name]
    if env in os.environ:
        return os.environ[env]
    return os.path.join(_target_dir(), "release", name)


_TARGET_DIR = []


def _target_dir():
    if not _TARGET_DIR:
        out = subprocess.run([os.path.join(ROOT, "scripts", "target-dir")],
                             check=True, capture_output=True, text=True).stdout
        _TARGET_DIR.append(out.strip())
    return _TARGET_DIR[0]


def wait_until(check, what, timeout=TIMEOUT, interval=0.01):
    """Polls `check` until it returns something true and returns that;
    fails naming `what` after `timeout` s."""
    end = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(interval)


class Domain:
    """A ROS_DOMAIN_ID no other test or run on this machine is using: each
    id is held by an exclusive lock on a file in /tmp for as long as the
    Domain lives, so concurrent suites (other checkouts) never share one.
    With ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST nothing leaves the machine."""

    def __init__(self):
        os.makedirs(LOCK_DIR, exist_ok=True)
        for d in DOMAINS:
            f = open(os.path.join(LOCK_DIR, "%d.lock" % d), "w")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.close()
                continue
            self.id, self._lock = d, f
            return
        raise RuntimeError("every ROS domain id in %s is taken (%s)" % (DOMAINS, LOCK_DIR))

    def release(self):
        self._lock.close()


class Recorder:
    """Every message received on one topic, with the peer's monotonic
    arrival time; `wait` blocks until a predicate over them holds."""

    def __init__(self):
        self.messages = []
        self.times = []
        self._cv = threading.Condition()

    def __call__(self, msg):
        with self._cv:
            self.messages.append(msg)
            self.times.append(time.monotonic())
            self._cv.notify_all()

    def __len__(self):
        with self._cv:
            return len(self.messages)

    def last(self):
        with self._cv:
            return self.messages[-1] if self.messages else None

    def since(self, n):
        """The messages after the first `n`."""
        with self._cv:
            return list(self.messages[n:])

    def wait(self, predicate, what, timeout=TIMEOUT, start=0):
        """The first message from index `start` on that satisfies
        `predicate`, waiting for it."""
        end = time.monotonic() + timeout
        with self._cv:
            i = start
            while True:
                while i < len(self.messages):
                    if predicate(self.messages[i]):
                        return self.messages[i]
                    i += 1
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError("timed out after %.0f s waiting for %s (%d messages, last %r)"
                                         % (timeout, what, len(self.messages),
                                            self.messages[-1] if self.messages else None))
                self._cv.wait(left)

    def next(self, what, timeout=TIMEOUT):
        """The next message to arrive."""
        return self.wait(lambda m: True, what, timeout, start=len(self))


class Peer:
    """An rclpy node on `domain`, spun on its own thread (its own context,
    so several peers can live in one process). Subscriptions record into a
    Recorder; service calls block until answered."""

    def __init__(self, domain, name="e2e_peer"):
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context, domain_id=domain,
                   signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._clients = {}
        self._stop = False
        self._thread = threading.Thread(target=self._spin, name="peer_spin", daemon=True)
        self._thread.start()

    def _spin(self):
        while not self._stop and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def close(self):
        self._stop = True
        self._thread.join(timeout=5)
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)

    def publisher(self, msg_type, topic, qos=10):
        return self.node.create_publisher(msg_type, topic, qos)

    def latched_publisher(self, msg_type, topic):
        """Reliable, transient local: what robot_state_publisher gives
        /robot_description."""
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        return self.node.create_publisher(msg_type, topic, qos)

    def record(self, msg_type, topic, qos=10):
        rec = Recorder()
        rec.subscription = self.node.create_subscription(msg_type, topic, rec, qos)
        return rec

    def wait_subscribed(self, pub, what, count=1):
        """Waits until `pub` has matched `count` subscribers (a message
        published before that would be lost)."""
        wait_until(lambda: pub.get_subscription_count() >= count, "%s to be subscribed" % what)

    def client(self, srv_type, name):
        """A client of service `name`, made once and kept: a new client per
        call would leave the server's DDS participant a new pair of remote
        endpoints to remember each time (which a soak sees as the node's
        memory growing)."""
        key = (srv_type, name)
        if key not in self._clients:
            self._clients[key] = self.node.create_client(srv_type, name)
        c = self._clients[key]
        wait_until(c.service_is_ready, "service %s" % name)
        return c

    def call(self, srv_type, name, request=None, timeout=TIMEOUT):
        """Calls service `name` (waiting for it to exist) and returns the
        response."""
        c = self.client(srv_type, name)
        return self.call_client(c, request if request is not None else srv_type.Request(), timeout)

    def call_client(self, client, request, timeout=TIMEOUT):
        done = threading.Event()
        future = client.call_async(request)
        future.add_done_callback(lambda _: done.set())
        if not done.wait(timeout):
            raise AssertionError("no answer from %s within %.0f s" % (client.srv_name, timeout))
        return future.result()

    def now(self):
        """The peer's ROS clock (wall time), as a builtin_interfaces Time."""
        return self.node.get_clock().now().to_msg()

    def service_names(self):
        return {name for name, _ in self.node.get_service_names_and_types()}


def params_yaml(params, path, node="ik_node"):
    """Writes `params` as a ROS 2 parameters file for the node `node`
    (a fully qualified name, or `/**` for any). A file, not `-p
    name:=value`: rcl parses `-p` values as YAML, which mangles a URDF
    given as text."""
    with open(path, "w") as f:
        yaml.safe_dump({node: {"ros__parameters": params}}, f)
    return path


class IkNode:
    """The real ik_node binary (or `binary`, e.g. leader_node) as a process
    on `domain`, with `params` (a dict, given as a parameters file for
    node `node`), its output (stdout and stderr, rcutils' console log) in
    `dir`/<binary>.log."""

    def __init__(self, domain, dir, params, args=(), binary="ik_node", node="ik_node"):
        self.dir = dir
        self.log_path = os.path.join(dir, binary + ".log")
        cmd = [node_binary(binary), "--ros-args"]
        if params:
            path = os.path.join(dir, binary + "_params.yaml")
            cmd += ["--params-file", params_yaml(params, path, node)]
        cmd += list(args)
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_LOG_DIR=os.path.join(dir, "roslog"),
                   RCUTILS_COLORIZED_OUTPUT="0", RCUTILS_LOGGING_BUFFERED_STREAM="0")
        self._out = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._out,
                                     stderr=subprocess.STDOUT, env=env, cwd=ROOT)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def running(self):
        return self.proc.poll() is None

    def wait_log(self, text, timeout=TIMEOUT):
        """Waits until the log contains `text` (the node still running or
        not); returns the log."""
        return wait_until(lambda: text in self.log() and self.log(),
                          "ik_node to log %r; it logged:\n%s" % (text, self.log()), timeout)

    def wait_exit(self, timeout=TIMEOUT):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError("ik_node still running after %.0f s; it logged:\n%s" % (timeout, self.log()))

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self):
        """SIGINT, as ros2 launch does on Ctrl-C; SIGKILL if it hangs."""
        if self.running():
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
        return self.proc.returncode


def parameter(name, v):
    """An rcl_interfaces Parameter typed as the Python value is (a list of
    floats: a double array; of other numbers: an integer array)."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    pv = ParameterValue()
    if isinstance(v, bool):
        pv.type, pv.bool_value = ParameterType.PARAMETER_BOOL, v
    elif isinstance(v, int):
        pv.type, pv.integer_value = ParameterType.PARAMETER_INTEGER, v
    elif isinstance(v, float):
        pv.type, pv.double_value = ParameterType.PARAMETER_DOUBLE, v
    elif isinstance(v, list) and all(isinstance(x, float) for x in v):
        pv.type, pv.double_array_value = ParameterType.PARAMETER_DOUBLE_ARRAY, v
    elif isinstance(v, list):
        pv.type, pv.integer_array_value = ParameterType.PARAMETER_INTEGER_ARRAY, v
    else:
        pv.type, pv.string_value = ParameterType.PARAMETER_STRING, v
    return Parameter(name=name, value=pv)


def parameter_value(v):
    """An rcl_interfaces ParameterValue as a Python value."""
    from rcl_interfaces.msg import ParameterType as T
    return {T.PARAMETER_STRING: v.string_value, T.PARAMETER_DOUBLE: v.double_value,
            T.PARAMETER_INTEGER: v.integer_value, T.PARAMETER_BOOL: v.bool_value,
            T.PARAMETER_DOUBLE_ARRAY: list(v.double_array_value),
            T.PARAMETER_NOT_SET: None}[v.type]


def diag_values(msg):
    """The key/values of ik_node's status in a DiagnosticArray, with its
    level, message and hardware_id under '_level', '_message', '_hardware_id'."""
    for s in msg.status:
        if s.name == "arm_ik: ik_node":
            v = {kv.key: kv.value for kv in s.values}
            v.update(_level=int.from_bytes(s.level, "little") if isinstance(s.level, bytes) else s.level,
                     _message=s.message, _hardware_id=s.hardware_id)
            return v
    return None


class Arm:
    """An ik_node started on its own domain with an rclpy peer beside it
    that records /joint_states and /diagnostics from before the node
    starts; the tip is computed by the suite's own FK (fk.py) from the
    joint states."""

    def __init__(self, domain, dir, params, args=(), chain=None, wait=True):
        from diagnostic_msgs.msg import DiagnosticArray
        from sensor_msgs.msg import JointState

        import fk
        self.peer = Peer(domain)
        self.chain = chain or fk.Chain.from_file(URDF, "base_link", "tool")
        self.joints = self.peer.record(JointState, "/joint_states", 100)
        self.diag = self.peer.record(DiagnosticArray, "/diagnostics", 10)
        self._pubs = {}
        self.node = IkNode(domain, dir, params, args)
        if wait:
            self.wait_started()

    def wait_started(self):
        def up():
            if not self.node.running():
                raise AssertionError("ik_node exited with %s; it logged:\n%s"
                                     % (self.node.proc.returncode, self.node.log()))
            return len(self.joints) > 0
        wait_until(up, "the first /joint_states from ik_node")

    def close(self):
        rc = self.node.stop()
        self.peer.close()
        return rc

    # -- joint states and the tip

    def state(self):
        """The latest joint state as {name: position}."""
        m = self.joints.last()
        return dict(zip(m.name, m.position))

    def tip(self, msg=None):
        """The tip's 4x4 pose (suite's FK) for a joint state, the latest by default."""
        return self.chain.tip_of(msg or self.joints.last())

    def wait_joints(self, predicate, what, timeout=TIMEOUT, start=None):
        """The first joint state from now (or index `start`) on whose
        {name: position} satisfies `predicate`."""
        start = len(self.joints) if start is None else start
        return self.joints.wait(lambda m: predicate(dict(zip(m.name, m.position))), what, timeout, start)

    def wait_tip(self, predicate, what, timeout=TIMEOUT, start=None):
        """The first joint state from now on whose FK tip satisfies `predicate`."""
        start = len(self.joints) if start is None else start
        return self.joints.wait(lambda m: predicate(self.chain.tip_of(m)), what, timeout, start)

    def wait_still(self, ticks=10, timeout=TIMEOUT):
        """Waits for `ticks` consecutive joint states with the same
        positions and zero velocities (the arm at rest); returns the last."""
        run = {"n": 0, "last": None}

        def still(m):
            same = run["last"] is not None and list(m.position) == run["last"] \
                and all(v == 0.0 for v in m.velocity)
            run["n"] = run["n"] + 1 if same else 0
            run["last"] = list(m.position)
            return run["n"] >= ticks
        return self.joints.wait(still, "the arm to come to rest", timeout, start=len(self.joints))

    # -- diagnostics

    def wait_diag(self, predicate, what, timeout=TIMEOUT):
        """The first /diagnostics status from now on whose values (see
        diag_values) satisfy `predicate`; returns those values."""
        m = self.diag.wait(lambda m: diag_values(m) is not None and predicate(diag_values(m)),
                           what, timeout, start=len(self.diag))
        return diag_values(m)

    # -- input

    def publisher(self, msg_type, topic):
        """A publisher on `topic`, once ik_node has subscribed to it."""
        if topic not in self._pubs:
            pub = self.peer.publisher(msg_type, topic)
            self.peer.wait_subscribed(pub, topic)
            self._pubs[topic] = pub
        return self._pubs[topic]

    def publish(self, topic, msg):
        self.publisher(type(msg), topic).publish(msg)

    # -- parameters, as `ros2 param` sets and gets them

    def set_parameter(self, name, value):
        """`ros2 param set`: (successful, reason)."""
        from rcl_interfaces.srv import SetParameters
        req = SetParameters.Request(parameters=[parameter(name, value)])
        r = self.peer.call(SetParameters, "/ik_node/set_parameters", req).results[0]
        return r.successful, r.reason

    def get_parameters(self, *names):
        """`ros2 param get`: the values as Python values (None: not set)."""
        from rcl_interfaces.srv import GetParameters
        r = self.peer.call(GetParameters, "/ik_node/get_parameters", GetParameters.Request(names=list(names)))
        return [parameter_value(v) for v in r.values]

    def trigger(self, name):
        """Calls the std_srvs/Trigger service `name`; returns (success, message)."""
        from std_srvs.srv import Trigger
        r = self.peer.call(Trigger, name)
        return r.success, r.message
