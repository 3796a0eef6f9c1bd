//! One joint's servo as the generic parts see it: the checked mapping from
//! joint angle to servo command, and the protocol's own settings of that
//! joint. The lowest module of the servo layer: calibration, link and the
//! protocols all build on it.

use std::collections::BTreeMap;
use thiserror::Error;

/// One joint's checked mapping.
#[derive(Debug, Clone, PartialEq)]
pub struct JointMap {
    pub joint: String,
    pub output: u16,
    pub direction: f64,
    pub zero: f64,
    pub scale: f64,
    pub min: i32,
    pub max: i32,
    pub speed_limit: f64,
    /// The chain's joint limits, applied before mapping.
    pub lower: f64,
    pub upper: f64,
    /// The assumed pose at switch-on (see
    /// [`JointEntry::park`](crate::servo::calibration::JointEntry::park)).
    pub park: Option<f64>,
    /// The protocol's settings of this joint: the file's, overridden by
    /// the joint's own. Read by the protocol's session (e.g. the model
    /// each servo must report).
    pub fields: Fields,
}

impl JointMap {
    /// The command for `angle`; `None` only for NaN. ±∞ and angles beyond
    /// the limits clamp.
    pub fn command(&self, angle: f64) -> Option<i32> {
        if angle.is_nan() {
            return None;
        }
        let q = angle.clamp(self.lower, self.upper);
        let raw = self.zero + self.direction * self.scale * q;
        // raw is NaN only for ∞ · 0 (scale is positive, so never); f64::clamp
        // would pass NaN through, so map it to the lower end explicitly.
        let c = if raw.is_nan() {
            f64::from(self.min)
        } else {
            raw.clamp(f64::from(self.min), f64::from(self.max))
        };
        // Inside [min, max] (integers), so rounding stays inside and the
        // cast is exact.
        Some(c.round() as i32)
    }

    /// The joint angle for a command, e.g. a bus servo's present position.
    /// Not clamped: feedback shows where the joint really is.
    pub fn angle(&self, command: i32) -> f64 {
        (f64::from(command) - self.zero) / (self.direction * self.scale)
    }

    /// [`speed_limit`](Self::speed_limit) in command units per second.
    pub fn speed_command(&self) -> f64 {
        self.speed_limit * self.scale
    }
}

/// The commands of the park pose (chain order), when every joint has one.
pub fn park_commands(joints: &[JointMap]) -> Option<Vec<i32>> {
    joints
        .iter()
        .map(|j| j.park.and_then(|q| j.command(q)))
        .collect()
}

/// A protocol's own settings in a servo file (`model: sts3215`), as
/// written: given once for the file, and per joint to override it.
///
/// The calibration file reader takes them from the keys of the file (or of
/// a joint) that are not generic; the protocol reads them
/// ([`Protocol::device`](super::protocol::Protocol::device), its session).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields(BTreeMap<String, serde_norway::Value>);

impl From<BTreeMap<String, serde_norway::Value>> for Fields {
    fn from(map: BTreeMap<String, serde_norway::Value>) -> Fields {
        Fields(map)
    }
}

impl Fields {
    pub fn get(&self, field: &str) -> Option<&serde_norway::Value> {
        self.0.get(field)
    }

    /// Sets `field`, e.g. in a file built in code.
    pub fn set(&mut self, field: &str, value: impl Into<serde_norway::Value>) {
        self.0.insert(field.to_string(), value.into());
    }

    /// The value of `field` read as `T` (e.g. a model enum), `None` when
    /// it is absent; a value that is not a `T` is an error naming the
    /// field.
    pub fn parse<T: serde::de::DeserializeOwned>(
        &self,
        field: &'static str,
    ) -> Result<Option<T>, FieldError> {
        self.get(field)
            .map(|v| serde_norway::from_value(v.clone()))
            .transpose()
            .map_err(|e| FieldError {
                field,
                why: e.to_string(),
            })
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// These fields with `over`'s replacing them: a joint's own settings
    /// over the file's.
    pub fn merged(&self, over: &Fields) -> Fields {
        let mut out = self.clone();
        out.0
            .extend(over.0.iter().map(|(k, v)| (k.clone(), v.clone())));
        out
    }
}

/// The servo behind one joint, as its protocol makes it out from the
/// joint's [`Fields`].
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// The hardware for messages: the model (`sts3215`), or the protocol
    /// where there is only one kind of servo.
    pub name: String,
    /// Commands the hardware can do at all, `[min, max]`.
    pub range: [i32; 2],
    /// Command units per radian when the file gives no `scale`; `None`
    /// when it varies from servo to servo and must be measured.
    pub default_scale: Option<f64>,
}

/// Why the value of a protocol's field was refused.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{field}: {why}")]
pub struct FieldError {
    pub field: &'static str,
    pub why: String,
}

/// One servo's effort as its hardware reports it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Effort {
    /// Present load or current as a signed fraction of the servo's maximum
    /// (-1..=1, positive pushing toward increasing joint angle; in the
    /// link, which knows no joints, toward increasing servo command);
    /// `None` where this servo does not report it.
    pub load: Option<f64>,
    /// The servo says it is overloaded (or overheating): it must stop
    /// pushing.
    pub overload: bool,
}
