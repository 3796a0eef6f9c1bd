//! The servo protocols arm_ik speaks, and what each one tells the generic
//! parts (calibration, link, output) about itself.
//!
//! A protocol is one module folder (`pwm_bridge/`, `feetech/`) that owns
//! its wire format and its link session and describes itself with one
//! [`Protocol`] value. [`PROTOCOLS`] lists them: the calibration finds a
//! file's `kind:` there, the node's `protocol` parameter is checked
//! against it, and nothing outside a protocol's module matches on which
//! protocol it is. A new protocol is its folder, one entry in
//! [`PROTOCOLS`] and its `mod` line in `servo/mod.rs`.

use super::calibration::{Calibration, CalibrationError};
use super::link::Session;
use super::{feetech, pwm_bridge};
use std::collections::BTreeMap;
use std::fmt;
use thiserror::Error;

/// Every protocol, in the order they are listed to users.
pub static PROTOCOLS: &[&Protocol] = &[&pwm_bridge::PROTOCOL, &feetech::PROTOCOL];

/// A protocol's own settings in a servo file (`model: sts3215`), as
/// written: given once for the file, and per joint to override it.
///
/// Read from the keys of the file (or of a joint) that are not generic:
/// a key that no protocol takes is refused right there as a typo, with
/// the place in the file; whether this file's protocol takes it is
/// checked with the rest of the calibration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields(BTreeMap<String, serde_norway::Value>);

impl Fields {
    pub fn get(&self, field: &str) -> Option<&serde_norway::Value> {
        self.0.get(field)
    }

    /// Sets `field`, e.g. in a file built in code.
    pub fn set(&mut self, field: &str, value: impl Into<serde_norway::Value>) {
        self.0.insert(field.to_string(), value.into());
    }

    pub fn remove(&mut self, field: &str) -> Option<serde_norway::Value> {
        self.0.remove(field)
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

impl<'de> serde::Deserialize<'de> for Fields {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Fields, D::Error> {
        let map = BTreeMap::<String, serde_norway::Value>::deserialize(d)?;
        if let Some(key) = map
            .keys()
            .find(|k| !Protocol::all_fields().any(|f| f == *k))
        {
            let mut known: Vec<&str> = Protocol::all_fields().collect();
            known.sort_unstable();
            known.dedup();
            return Err(serde::de::Error::custom(format!(
                "unknown field `{key}`: neither a setting of the file or joint nor of a protocol ({})",
                known.join(", ")
            )));
        }
        Ok(Fields(map))
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

impl FieldError {
    /// The field's value read as `T` (e.g. a model enum), `None` when the
    /// field is absent; a value that is not a `T` names the field.
    pub fn parse<T: serde::de::DeserializeOwned>(
        fields: &Fields,
        field: &'static str,
    ) -> Result<Option<T>, FieldError> {
        fields
            .get(field)
            .map(|v| serde_norway::from_value(v.clone()))
            .transpose()
            .map_err(|e| FieldError {
                field,
                why: e.to_string(),
            })
    }
}

/// Link settings that differ by protocol, used when the file's `link:`
/// section leaves them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkDefaults {
    /// Port speed (baud).
    pub baud: u32,
    /// No reply for this long: the hardware is silent (ms).
    pub reply_timeout_ms: u64,
}

/// What one protocol is, for the generic code: its names, what a servo
/// file for it may say, its link defaults, and how to talk to it.
pub struct Protocol {
    /// Its one name: the servo file's `kind:` and the node's `protocol`
    /// parameter.
    pub name: &'static str,
    /// Older spellings of `kind:`, still read with a deprecation warning.
    pub aliases: &'static [&'static str],
    /// What it drives, for help texts ("hobby PWM servos through the
    /// Arduino firmware bridge").
    pub summary: &'static str,
    /// What a joint's `output` number is ("channel", "servo id").
    pub output_name: &'static str,
    /// Highest `output` number.
    pub max_output: u16,
    /// Its own fields, allowed at file level and per joint (e.g. `model`).
    pub fields: &'static [&'static str],
    pub link: LinkDefaults,
    /// Whether the servos report their positions: then they are read at
    /// start-up (no park pose) and the node publishes them as the joint
    /// state.
    pub measures_positions: bool,
    /// The servo of one joint from its fields (the file's, overridden by
    /// the joint's).
    pub device: fn(&Fields) -> Result<Device, FieldError>,
    /// Checks that need every joint at once (servos that cannot share a
    /// bus), after each joint passed on its own.
    pub check_bus: fn(&Calibration) -> Result<(), CalibrationError>,
    /// The link session for a checked calibration.
    pub session: fn(&Calibration) -> Result<Box<dyn Session>, FieldError>,
}

impl Protocol {
    /// The protocol called `written`, by its name or an old alias.
    pub fn find(written: &str) -> Option<&'static Protocol> {
        let written = written.trim();
        PROTOCOLS
            .iter()
            .copied()
            .find(|p| p.name == written || p.aliases.contains(&written))
    }

    /// The names of every protocol, for messages ("pwm_bridge, feetech").
    pub fn names() -> Vec<&'static str> {
        PROTOCOLS.iter().map(|p| p.name).collect()
    }

    /// The protocol (other than this one) that takes `field`, for an
    /// error that says where a misplaced field belongs.
    pub fn owner_of(&self, field: &str) -> Option<&'static Protocol> {
        PROTOCOLS
            .iter()
            .copied()
            .find(|p| p.name != self.name && p.fields.contains(&field))
    }

    /// Every field any protocol takes: what the file reader sets aside for
    /// the protocol before reading the generic part strictly.
    pub fn all_fields() -> impl Iterator<Item = &'static str> {
        PROTOCOLS.iter().flat_map(|p| p.fields.iter().copied())
    }

    /// For checks that need no cross-joint test.
    pub fn no_bus_check(_: &Calibration) -> Result<(), CalibrationError> {
        Ok(())
    }
}

impl fmt::Debug for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Two protocols are the same when their names are: each is one static
/// value.
impl PartialEq for Protocol {
    fn eq(&self, other: &Protocol) -> bool {
        self.name == other.name
    }
}

impl Eq for Protocol {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique_and_found() {
        let mut seen = Vec::new();
        for p in PROTOCOLS {
            for name in std::iter::once(&p.name).chain(p.aliases) {
                assert!(!seen.contains(name), "{name} twice");
                seen.push(*name);
                assert_eq!(Protocol::find(name), Some(*p));
            }
        }
        assert_eq!(Protocol::find("pwm"), Some(&pwm_bridge::PROTOCOL));
        assert_eq!(Protocol::find("dynamixel"), None);
        assert_eq!(Protocol::names(), ["pwm_bridge", "feetech"]);
    }
}
