//! The start-up checks of a servo file against a chain, one rule a
//! function, in the order a user fixing a file meets them.

use super::{
    Calibration, CalibrationError, CalibrationFile, CalibrationWarning, JointEntry, JointMap, Slot,
};
use crate::model::{Chain, ExtraJoint, Limits};
use crate::servo::joint::{Device, Fields};
use crate::servo::protocol::Protocol;
use crate::servo::registry;

/// See [`Calibration::check`]; `source` names the file in warnings.
pub(super) fn check(
    file: &CalibrationFile,
    chain: &Chain,
    source: &str,
) -> Result<Calibration, CalibrationError> {
    let (protocol, mut warnings) = protocol(&file.kind, source)?;
    fields_taken(protocol, None, &file.fields)?;
    let link = file.link.resolve(&protocol.link)?;
    if file.link.torque_off_on_close.is_some() {
        warnings.push(CalibrationWarning::DeprecatedTorqueOffOnClose {
            file: source.to_string(),
            on_exit: link.on_exit.name(),
        });
    }
    let parked = file.joints.iter().any(|e| e.park.is_some());
    let mut maps = Vec::with_capacity(file.joints.len());
    let mut strangers = Vec::new();
    for (k, e) in file.joints.iter().enumerate() {
        unique(&file.joints[..k], e)?;
        match limits_of(chain, e)? {
            Some(limits) => maps.push(joint_map(protocol, &file.fields, e, limits, parked)?),
            None => strangers.push(e),
        }
    }
    if let Some(j) = chain
        .joints
        .iter()
        .find(|j| !maps.iter().any(|m| m.joint == j.name))
    {
        // An entry for no joint of the robot is most likely the missing
        // joint misspelt: name it.
        return Err(match strangers.first() {
            Some(e) => CalibrationError::UnknownJoint {
                joint: e.joint.clone(),
            },
            None => CalibrationError::MissingJoint {
                joint: j.name.clone(),
            },
        });
    }
    warnings.extend(strangers.iter().map(|e| CalibrationWarning::NotInRobot {
        file: source.to_string(),
        joint: e.joint.clone(),
        output: e.output,
        what: protocol.output_name,
    }));
    let (joints, slots) = arrange(chain, maps);
    let cal = Calibration {
        protocol,
        link,
        joints,
        slots,
        warnings,
    };
    (protocol.check_bus)(&cal.joints, &cal.link)?;
    Ok(cal)
}

/// The driven joints in the output's order and the output's position
/// slots: the chain's joints, then its actuated extra joints (a gripper),
/// each extra driven when the file gives it a servo.
fn arrange(chain: &Chain, mut maps: Vec<JointMap>) -> (Vec<JointMap>, Vec<Slot>) {
    let names = chain.joints.iter().map(|j| (j.name.as_str(), 0.0, false));
    let extras = chain
        .extras
        .iter()
        .filter(|x| x.actuated())
        .map(|x| (x.name.as_str(), x.rest(), true));
    let mut joints = Vec::with_capacity(maps.len());
    let slots = names
        .chain(extras)
        .map(|(name, rest, extra)| {
            let servo = maps.iter().position(|m| m.joint == name).map(|k| {
                joints.push(maps.swap_remove(k));
                joints.len() - 1
            });
            Slot {
                joint: name.to_string(),
                servo,
                rest,
                extra,
            }
        })
        .collect();
    (joints, slots)
}

/// The limits of the joint an entry is for: a moving joint of the chain
/// or an extra joint that follows no other (a gripper); `None` when the
/// robot has no such joint. A joint that mimics another cannot have a
/// servo of its own.
fn limits_of(chain: &Chain, e: &JointEntry) -> Result<Option<Limits>, CalibrationError> {
    if let Some(j) = chain.joints.iter().find(|j| j.name == e.joint) {
        return Ok(Some(j.limits));
    }
    match chain.extras.iter().find(|x| x.name == e.joint) {
        Some(ExtraJoint { mimic: Some(m), .. }) => Err(CalibrationError::MimicJoint {
            joint: e.joint.clone(),
            leader: m.leader.clone(),
        }),
        Some(x) => Ok(Some(x.limits)),
        None => Ok(None),
    }
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
    limits: Limits,
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
    park(protocol, e, limits, parked)?;
    Ok(JointMap {
        joint: name(),
        output: e.output,
        direction: e.direction,
        zero: e.zero,
        scale,
        min: e.range[0],
        max: e.range[1],
        speed_limit: e.speed_limit,
        lower: limits.lower,
        upper: limits.upper,
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
    limits: Limits,
    parked: bool,
) -> Result<(), CalibrationError> {
    let (lower, upper) = (limits.lower, limits.upper);
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
