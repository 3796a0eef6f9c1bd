//! The start-up checks of a servo file against a chain, one rule a
//! function, in the order a user fixing a file meets them.

use super::{
    Calibration, CalibrationError, CalibrationFile, CalibrationWarning, JointEntry, JointMap,
};
use crate::model::{Chain, Joint};
use crate::servo::joint::{Device, Fields};
use crate::servo::protocol::Protocol;
use crate::servo::registry;

/// See [`Calibration::check`]; `source` names the file in warnings.
pub(super) fn check(
    file: &CalibrationFile,
    chain: &Chain,
    source: &str,
) -> Result<Calibration, CalibrationError> {
    let (protocol, warnings) = protocol(&file.kind, source)?;
    fields_taken(protocol, None, &file.fields)?;
    let link = file.link.resolve(&protocol.link)?;
    let parked = file.joints.iter().any(|e| e.park.is_some());
    let mut maps = Vec::with_capacity(file.joints.len());
    for (k, e) in file.joints.iter().enumerate() {
        let joint = chain_joint(chain, e)?;
        unique(&file.joints[..k], e)?;
        maps.push(joint_map(protocol, &file.fields, e, joint, parked)?);
    }
    let joints = chain
        .joints
        .iter()
        .map(|j| {
            let k = maps.iter().position(|m| m.joint == j.name).ok_or_else(|| {
                CalibrationError::MissingJoint {
                    joint: j.name.clone(),
                }
            })?;
            Ok(maps.swap_remove(k))
        })
        .collect::<Result<Vec<_>, CalibrationError>>()?;
    let cal = Calibration {
        protocol,
        link,
        joints,
        warnings,
    };
    (protocol.check_bus)(&cal.joints)?;
    Ok(cal)
}

/// The protocol `kind` names, with a warning when by an old name.
fn protocol(
    kind: &str,
    source: &str,
) -> Result<(&'static Protocol, Vec<CalibrationWarning>), CalibrationError> {
    let protocol = registry::find(kind).ok_or_else(|| CalibrationError::UnknownProtocol {
        written: kind.to_string(),
        known: registry::names(),
    })?;
    let mut warnings = Vec::new();
    if protocol.name != kind.trim() {
        warnings.push(CalibrationWarning::DeprecatedKind {
            file: source.to_string(),
            written: kind.trim().to_string(),
            name: protocol.name,
        });
    }
    Ok((protocol, warnings))
}

/// Every protocol setting given is one this protocol takes.
fn fields_taken(
    protocol: &'static Protocol,
    joint: Option<&str>,
    fields: &Fields,
) -> Result<(), CalibrationError> {
    match fields.names().find(|f| !protocol.fields.contains(f)) {
        None => Ok(()),
        Some(field) => Err(CalibrationError::FieldNotTaken {
            joint: joint.map(str::to_string),
            field: field.to_string(),
            protocol: protocol.name,
            owner: registry::owner_of(protocol, field).map(|p| p.name),
        }),
    }
}

/// The moving joint of the chain an entry is for.
fn chain_joint<'c>(chain: &'c Chain, e: &JointEntry) -> Result<&'c Joint, CalibrationError> {
    chain
        .joints
        .iter()
        .find(|j| j.name == e.joint)
        .ok_or_else(|| CalibrationError::UnknownJoint {
            joint: e.joint.clone(),
        })
}

/// No joint twice, no output twice (`before`: the entries above `e`).
fn unique(before: &[JointEntry], e: &JointEntry) -> Result<(), CalibrationError> {
    if before.iter().any(|o| o.joint == e.joint) {
        return Err(CalibrationError::DuplicateJoint {
            joint: e.joint.clone(),
        });
    }
    match before.iter().find(|o| o.output == e.output) {
        Some(o) => Err(CalibrationError::SharedOutput {
            output: e.output,
            first: o.joint.clone(),
            second: e.joint.clone(),
        }),
        None => Ok(()),
    }
}

/// One entry checked and mapped: its output, numbers, servo, scale,
/// range and park angle.
fn joint_map(
    protocol: &'static Protocol,
    file_fields: &Fields,
    e: &JointEntry,
    joint: &Joint,
    parked: bool,
) -> Result<JointMap, CalibrationError> {
    let name = || e.joint.clone();
    if e.output > protocol.max_output {
        return Err(CalibrationError::OutputRange {
            joint: name(),
            output: e.output,
            what: protocol.output_name,
            max: protocol.max_output,
        });
    }
    fields_taken(protocol, Some(&e.joint), &e.fields)?;
    numbers(e)?;
    let fields = file_fields.merged(&e.fields);
    let device = (protocol.device)(&fields).map_err(|error| CalibrationError::Field {
        joint: name(),
        error,
    })?;
    let scale = scale(e, &device)?;
    range(e, &device)?;
    park(protocol, e, joint, parked)?;
    Ok(JointMap {
        joint: name(),
        output: e.output,
        direction: e.direction,
        zero: e.zero,
        scale,
        min: e.range[0],
        max: e.range[1],
        speed_limit: e.speed_limit,
        lower: joint.limits.lower,
        upper: joint.limits.upper,
        park: e.park,
        fields,
    })
}

/// Every number finite, the direction a sign, the speed limit positive.
fn numbers(e: &JointEntry) -> Result<(), CalibrationError> {
    let numbers = [
        ("direction", Some(e.direction)),
        ("zero", Some(e.zero)),
        ("scale", e.scale),
        ("speed_limit", Some(e.speed_limit)),
        ("park", e.park),
    ];
    for (field, value) in numbers {
        if let Some(value) = value.filter(|v| !v.is_finite()) {
            return Err(CalibrationError::NotFinite {
                joint: e.joint.clone(),
                field,
                value,
            });
        }
    }
    if e.direction != 1.0 && e.direction != -1.0 {
        return Err(CalibrationError::Direction {
            joint: e.joint.clone(),
            value: e.direction,
        });
    }
    positive(e, "speed_limit", e.speed_limit)
}

fn positive(e: &JointEntry, field: &'static str, value: f64) -> Result<(), CalibrationError> {
    if value > 0.0 {
        Ok(())
    } else {
        Err(CalibrationError::NotPositive {
            joint: e.joint.clone(),
            field,
            value,
        })
    }
}

/// The file's scale, else the servo's default; positive.
fn scale(e: &JointEntry, device: &Device) -> Result<f64, CalibrationError> {
    let scale = e
        .scale
        .or(device.default_scale)
        .ok_or_else(|| CalibrationError::MissingScale {
            joint: e.joint.clone(),
            hardware: device.name.clone(),
        })?;
    positive(e, "scale", scale)?;
    Ok(scale)
}

/// The command range is not empty and inside what the servo can do.
fn range(e: &JointEntry, device: &Device) -> Result<(), CalibrationError> {
    let [min, max] = e.range;
    let [device_min, device_max] = device.range;
    if min >= max || min < device_min || max > device_max {
        return Err(CalibrationError::Range {
            joint: e.joint.clone(),
            min,
            max,
            device_min,
            device_max,
        });
    }
    Ok(())
}

/// A park pose is all or nothing, inside the joint limits, and only for
/// servos that cannot be asked where they are.
fn park(
    protocol: &'static Protocol,
    e: &JointEntry,
    joint: &Joint,
    parked: bool,
) -> Result<(), CalibrationError> {
    let (lower, upper) = (joint.limits.lower, joint.limits.upper);
    match e.park {
        None if parked => Err(CalibrationError::MissingPark {
            joint: e.joint.clone(),
        }),
        None => Ok(()),
        Some(_) if protocol.measures_positions => Err(CalibrationError::ParkNotNeeded {
            joint: e.joint.clone(),
            protocol: protocol.name,
        }),
        Some(value) if !(lower..=upper).contains(&value) => {
            Err(CalibrationError::ParkOutsideLimits {
                joint: e.joint.clone(),
                value,
                lower,
                upper,
            })
        }
        Some(_) => Ok(()),
    }
}
