//! A servo file as written, before it is checked against a chain.

use crate::servo::joint::Fields;
use crate::servo::link::LinkFile;
use crate::servo::registry;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

/// The calibration file as written.
///
/// Besides the fields below, the file and each joint may give the
/// protocol's own settings ([`Fields`], e.g. `model:`); a joint's value
/// overrides the file's. A key that is neither is refused as a typo.
#[derive(Debug, Clone, Deserialize)]
pub struct CalibrationFile {
    /// The protocol, by name (`pwm_bridge`, `feetech`) or an old alias.
    pub kind: String,
    /// Port speed, frame rate, timeouts; the protocol's defaults when
    /// absent.
    #[serde(default)]
    pub link: LinkFile,
    pub joints: Vec<JointEntry>,
    /// The protocol's settings for every joint.
    #[serde(flatten, deserialize_with = "protocol_fields")]
    pub fields: Fields,
}

/// One joint as written in the file.
#[derive(Debug, Clone, Deserialize)]
pub struct JointEntry {
    /// Joint name in the URDF.
    pub joint: String,
    /// PWM channel or bus-servo ID.
    pub output: u16,
    /// +1 when the command grows with the joint angle, -1 otherwise.
    pub direction: f64,
    /// Command (µs or ticks) at joint angle 0.
    pub zero: f64,
    /// Command units per radian (or per metre for a prismatic joint).
    #[serde(default)]
    pub scale: Option<f64>,
    /// Commands the servo may be sent, `[min, max]`: the mechanical end
    /// stops of this joint, inside the device range.
    pub range: [i32; 2],
    /// Highest joint speed to command (rad/s or m/s).
    pub speed_limit: f64,
    /// Where the joint rests when the arm is switched on (rad or m), for
    /// servos that cannot report their position (PWM): on a board not yet
    /// pulsing, the first pulses go to this pose and the link moves from
    /// it to the first command at `link.startup_speed`, instead of jumping
    /// there. Given for every joint or for none.
    #[serde(default)]
    pub park: Option<f64>,
    /// The protocol's settings for this joint, over the file's.
    #[serde(flatten, deserialize_with = "protocol_fields")]
    pub fields: Fields,
}

/// The keys of the file (or of a joint) that are not its generic fields:
/// each must be a field of some protocol, or it is a typo, refused here
/// with its place in the file. Whether the file's own protocol takes it
/// is checked with the rest of the calibration.
fn protocol_fields<'de, D: Deserializer<'de>>(d: D) -> Result<Fields, D::Error> {
    let map = BTreeMap::<String, serde_norway::Value>::deserialize(d)?;
    if let Some(key) = map.keys().find(|k| !registry::is_field(k)) {
        return Err(serde::de::Error::custom(format!(
            "unknown field `{key}`: neither a setting of the file or joint nor of a protocol ({})",
            registry::all_fields().join(", ")
        )));
    }
    Ok(Fields::from(map))
}
