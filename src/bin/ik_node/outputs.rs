//! What the node publishes: the joint states every tick, the diagnostics
//! once a second, the RViz markers (the target and tip; the collision
//! world's obstacles and near links) ten times a second and the target
//! marker's interactive-marker updates when the core has one, each
//! converted from the core's state by `arm_ik::ros::convert`.

use super::spin::stamp;
use arm_ik::collision::markers::ShapeMarker;
use arm_ik::node::{HealthMonitor, JointState, MarkerUpdate, NodeCore, report};
use arm_ik::ros::convert;
use arm_ik::servo::ServoOutput;
use r2r::QosProfile;
use r2r::visualization_msgs::msg::{InteractiveMarkerUpdate, Marker};
use std::time::Duration;

/// The node's publishers and what they need between messages.
pub struct Outputs {
    joints: r2r::Publisher<r2r::sensor_msgs::msg::JointState>,
    diagnostics: r2r::Publisher<r2r::diagnostic_msgs::msg::DiagnosticArray>,
    markers: r2r::Publisher<r2r::visualization_msgs::msg::MarkerArray>,
    collision_markers: r2r::Publisher<r2r::visualization_msgs::msg::MarkerArray>,
    marker_template: Marker,
    target_marker: r2r::Publisher<InteractiveMarkerUpdate>,
    health: HealthMonitor,
    log: String,
}

impl Outputs {
    /// The publishers; the target marker's on `<marker_ns>/update`.
    pub fn create(node: &mut r2r::Node, log: &str, marker_ns: &str) -> anyhow::Result<Outputs> {
        let qos = QosProfile::default;
        Ok(Outputs {
            joints: node.create_publisher("joint_states", qos())?,
            diagnostics: node.create_publisher("/diagnostics", qos())?,
            markers: node.create_publisher("~/markers", qos())?,
            collision_markers: node.create_publisher("~/collision_markers", qos())?,
            // Real ROS builds make the template here; see convert::markers.
            marker_template: Marker::default(),
            // Depth 100, as ROS 2's interactive-marker servers and RViz's
            // client use: a dropped update is a gap in the sequence, which
            // makes the client reset (and end a drag).
            target_marker: node
                .create_publisher(&format!("{marker_ns}/update"), qos().keep_last(100))?,
            health: HealthMonitor::new(),
            log: log.to_string(),
        })
    }

    fn warn_on(&self, what: &str, r: Result<(), r2r::Error>) {
        if let Err(e) = r {
            r2r::log_warn!(&self.log, "{what} not published: {e}");
        }
    }

    pub fn joint_state(&self, js: &JointState, now: Duration) {
        let msg = convert::joint_state(js, stamp(now));
        self.warn_on("joint_states", self.joints.publish(&msg));
    }

    pub fn diagnostics<S: ServoOutput>(&mut self, core: &NodeCore<S>, rate_hz: f64, now: Duration) {
        let st = core.status();
        let h = self.health.check(st, rate_hz);
        let msg = convert::diagnostics(&h, report::key_values(st), &st.link, stamp(now));
        self.warn_on("diagnostics", self.diagnostics.publish(&msg));
    }

    pub fn markers<S: ServoOutput>(&self, core: &NodeCore<S>, now: Duration) {
        let msg = convert::markers(
            &self.marker_template,
            &core.chain().base,
            stamp(now),
            core.last_target(),
            core.status().holding,
            &core.tip_pose(),
        );
        self.warn_on("markers", self.markers.publish(&msg));
    }

    /// The collision world where the arm is now (`~/collision_markers`):
    /// the obstacles and the floor, and the links of the closest pair
    /// coloured when near or in contact; only a `DELETEALL` when the check
    /// is off.
    pub fn collision_markers(&self, base_link: &str, shapes: &[ShapeMarker], now: Duration) {
        let msg = convert::collision_markers(&self.marker_template, base_link, stamp(now), shapes);
        self.warn_on("collision_markers", self.collision_markers.publish(&msg));
    }

    /// One target-marker update (`<ns>/update`).
    pub fn target_marker(&self, u: &MarkerUpdate) {
        let msg = convert::marker_update(u);
        self.warn_on("target_marker/update", self.target_marker.publish(&msg));
    }
}
