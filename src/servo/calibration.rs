//! Per-joint servo calibration: which servo drives which joint, and how a
//! joint angle becomes a servo command (PWM pulse in µs, or bus-servo
//! position ticks).
//!
//! The file is YAML (`config/servos_pwm.yaml`, `config/servos_feetech.yaml`;
//! JSON, being YAML, is read too). Besides the joints it carries the link
//! settings of the hardware ([`LinkSettings`]), so one file describes one
//! physical arm.
//!
//! Mapping, in this order: angle → clamp to the joint limits → `zero +
//! direction · scale · angle` → clamp to the command range → round to an
//! integer. A NaN angle is rejected with [`MapError::NotANumber`] (the
//! driver then keeps the joint's last command, see
//! [`Calibration::commands`]); ±∞ and huge angles clamp like any other
//! out-of-range angle. Whatever the input, a command outside the range the
//! file declares can never be produced.

use super::feetech::ServoModel;
use super::link::{LinkFile, LinkSettings};
use crate::model::Chain;
use serde::Deserialize;
use std::path::Path;
use thiserror::Error;

/// What kind of servo output the file describes: it decides what `output`
/// means and which command range the hardware can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputKind {
    /// Hobby PWM servos: `output` is the controller channel, commands are
    /// pulse widths in µs.
    Pwm,
    /// Feetech STS/SCS bus servos: `output` is the servo ID, commands are
    /// position ticks.
    Feetech,
}

impl OutputKind {
    /// Commands the hardware can do at all. PWM: 400..=2600 µs, beyond the
    /// 500-2500 µs many servos accept, so no real servo is excluded but a
    /// typo in ms or ns is. Feetech: the position range of the model
    /// (0..=4095 on STS servos, 0..=1023 on SCS).
    pub fn device_range(self, model: Option<ServoModel>) -> (i32, i32) {
        match self {
            OutputKind::Pwm => (400, 2600),
            OutputKind::Feetech => (0, i32::from(model.unwrap_or_default().max_position())),
        }
    }

    /// Largest output number: the firmware bridge's six channels
    /// (0..=5), or the highest Feetech servo ID.
    pub fn max_output(self) -> u16 {
        match self {
            OutputKind::Pwm => 5,
            OutputKind::Feetech => u16::from(super::feetech::MAX_ID),
        }
    }

    /// Default `scale` when the file gives none: 4096 ticks per turn for
    /// STS servos; none for SCS servos and PWM, where it must be measured.
    pub fn default_scale(self, model: Option<ServoModel>) -> Option<f64> {
        match self {
            OutputKind::Pwm => None,
            OutputKind::Feetech => model.unwrap_or_default().ticks_per_radian(),
        }
    }

    /// The hardware for error messages: "pwm", or the bus-servo model.
    fn describe(self, model: Option<ServoModel>) -> String {
        match self {
            OutputKind::Pwm => "pwm".to_string(),
            OutputKind::Feetech => model.unwrap_or_default().name().to_string(),
        }
    }
}

/// The calibration file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationFile {
    pub kind: OutputKind,
    /// Bus servos: the model every servo on the bus must report
    /// (default `sts3215`); not for PWM.
    #[serde(default)]
    pub model: Option<ServoModel>,
    /// Port speed, frame rate, timeouts; defaults per kind when absent.
    #[serde(default)]
    pub link: LinkFile,
    pub joints: Vec<JointEntry>,
}

/// One joint as written in the file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
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
}

/// Why a calibration cannot be used with a chain. Found at start-up, so
/// the arm never moves on a wrong file.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CalibrationError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("joint '{joint}' of the chain has no servo output in the calibration")]
    MissingJoint { joint: String },
    #[error("calibration names joint '{joint}', which is not a moving joint of the chain")]
    UnknownJoint { joint: String },
    #[error("joint '{joint}' appears twice in the calibration")]
    DuplicateJoint { joint: String },
    #[error("joints '{first}' and '{second}' are both on output {output}")]
    SharedOutput {
        output: u16,
        first: String,
        second: String,
    },
    #[error("joint '{joint}': output {output} is above the highest, {max}")]
    OutputRange {
        joint: String,
        output: u16,
        max: u16,
    },
    #[error("joint '{joint}': {field} is {value}, not a finite number")]
    NotFinite {
        joint: String,
        field: &'static str,
        value: f64,
    },
    #[error("joint '{joint}': direction must be 1 or -1, not {value}")]
    Direction { joint: String, value: f64 },
    #[error("joint '{joint}': {field} must be positive, not {value}")]
    NotPositive {
        joint: String,
        field: &'static str,
        value: f64,
    },
    #[error("link.{field}: {message}")]
    Link {
        field: &'static str,
        message: String,
    },
    #[error("joint '{joint}': scale is required for {hardware} servos (command units per radian)")]
    MissingScale { joint: String, hardware: String },
    #[error("model: {model} is a bus-servo model; kind {kind:?} has none")]
    ModelNotApplicable { model: String, kind: OutputKind },
    #[error("joint '{joint}': park {value} is outside the joint's limits [{lower}, {upper}]")]
    ParkOutsideLimits {
        joint: String,
        value: f64,
        lower: f64,
        upper: f64,
    },
    #[error(
        "joint '{joint}' has no park pose while others have one: give park for every joint or for none"
    )]
    MissingPark { joint: String },
    #[error(
        "joint '{joint}': park is for servos that cannot report their position; {kind:?} servos are read at start-up instead"
    )]
    ParkNotNeeded { joint: String, kind: OutputKind },
    #[error(
        "joint '{joint}': range [{min}, {max}] is not inside what the servo can do, [{device_min}, {device_max}], or is empty"
    )]
    Range {
        joint: String,
        min: i32,
        max: i32,
        device_min: i32,
        device_max: i32,
    },
}

/// Why one angle gave no command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum MapError {
    #[error("joint {index}: angle is NaN; no command")]
    NotANumber { index: usize },
}

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
    /// The assumed pose at switch-on (see [`JointEntry::park`]).
    pub park: Option<f64>,
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

/// A calibration checked against a chain: one [`JointMap`] per moving
/// joint, in chain order.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub kind: OutputKind,
    /// The bus-servo model (Feetech only; `sts3215` unless the file says).
    pub model: Option<ServoModel>,
    pub link: LinkSettings,
    pub joints: Vec<JointMap>,
}

impl Calibration {
    /// Reads and checks a calibration file.
    pub fn load(path: impl AsRef<Path>, chain: &Chain) -> Result<Calibration, CalibrationError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| CalibrationError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_yaml(&text, &path.display().to_string(), chain)
    }

    /// Parses and checks a calibration (YAML or JSON); `source` names it
    /// in errors.
    pub fn from_yaml(
        text: &str,
        source: &str,
        chain: &Chain,
    ) -> Result<Calibration, CalibrationError> {
        let file: CalibrationFile =
            serde_norway::from_str(text).map_err(|e| CalibrationError::Parse {
                path: source.to_string(),
                message: e.to_string(),
            })?;
        Self::check(&file, chain)
    }

    /// Checks a parsed file against `chain`: every joint has exactly one
    /// entry, no entry for anything else, no output used twice, every
    /// number finite and sensible, every range inside the device range.
    pub fn check(file: &CalibrationFile, chain: &Chain) -> Result<Calibration, CalibrationError> {
        let kind = file.kind;
        let model = match (kind, file.model) {
            (OutputKind::Feetech, m) => Some(m.unwrap_or_default()),
            (OutputKind::Pwm, None) => None,
            (OutputKind::Pwm, Some(m)) => {
                return Err(CalibrationError::ModelNotApplicable {
                    model: m.name().to_string(),
                    kind,
                });
            }
        };
        let default_scale = kind.default_scale(model);
        let link = file
            .link
            .resolve(kind)
            .map_err(|(field, message)| CalibrationError::Link { field, message })?;
        let (device_min, device_max) = kind.device_range(model);
        for (k, e) in file.joints.iter().enumerate() {
            let joint = || e.joint.clone();
            if !chain.joints.iter().any(|j| j.name == e.joint) {
                return Err(CalibrationError::UnknownJoint { joint: joint() });
            }
            if file.joints[..k].iter().any(|o| o.joint == e.joint) {
                return Err(CalibrationError::DuplicateJoint { joint: joint() });
            }
            if let Some(o) = file.joints[..k].iter().find(|o| o.output == e.output) {
                return Err(CalibrationError::SharedOutput {
                    output: e.output,
                    first: o.joint.clone(),
                    second: joint(),
                });
            }
            if e.output > kind.max_output() {
                return Err(CalibrationError::OutputRange {
                    joint: joint(),
                    output: e.output,
                    max: kind.max_output(),
                });
            }
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
                        joint: joint(),
                        field,
                        value,
                    });
                }
            }
            if e.direction != 1.0 && e.direction != -1.0 {
                return Err(CalibrationError::Direction {
                    joint: joint(),
                    value: e.direction,
                });
            }
            let scale =
                e.scale
                    .or(default_scale)
                    .ok_or_else(|| CalibrationError::MissingScale {
                        joint: joint(),
                        hardware: kind.describe(model),
                    })?;
            for (field, value) in [("scale", scale), ("speed_limit", e.speed_limit)] {
                if value <= 0.0 {
                    return Err(CalibrationError::NotPositive {
                        joint: joint(),
                        field,
                        value,
                    });
                }
            }
            let [min, max] = e.range;
            if min >= max || min < device_min || max > device_max {
                return Err(CalibrationError::Range {
                    joint: joint(),
                    min,
                    max,
                    device_min,
                    device_max,
                });
            }
        }
        let parked = file.joints.iter().any(|e| e.park.is_some());
        let joints = chain
            .joints
            .iter()
            .map(|j| {
                let e = file
                    .joints
                    .iter()
                    .find(|e| e.joint == j.name)
                    .ok_or_else(|| CalibrationError::MissingJoint {
                        joint: j.name.clone(),
                    })?;
                Self::check_park(kind, e, j.limits.lower, j.limits.upper, parked)?;
                Ok(JointMap {
                    joint: j.name.clone(),
                    output: e.output,
                    direction: e.direction,
                    zero: e.zero,
                    scale: e.scale.or(default_scale).unwrap_or(1.0),
                    min: e.range[0],
                    max: e.range[1],
                    speed_limit: e.speed_limit,
                    lower: j.limits.lower,
                    upper: j.limits.upper,
                    park: e.park,
                })
            })
            .collect::<Result<Vec<_>, CalibrationError>>()?;
        Ok(Calibration {
            kind,
            model,
            link,
            joints,
        })
    }

    /// A park pose is all or nothing, inside the joint limits, and only
    /// for servos that cannot be asked where they are.
    fn check_park(
        kind: OutputKind,
        e: &JointEntry,
        lower: f64,
        upper: f64,
        parked: bool,
    ) -> Result<(), CalibrationError> {
        let joint = || e.joint.clone();
        match e.park {
            None if parked => Err(CalibrationError::MissingPark { joint: joint() }),
            None => Ok(()),
            Some(_) if kind == OutputKind::Feetech => Err(CalibrationError::ParkNotNeeded {
                joint: joint(),
                kind,
            }),
            Some(value) if !(lower..=upper).contains(&value) => {
                Err(CalibrationError::ParkOutsideLimits {
                    joint: joint(),
                    value,
                    lower,
                    upper,
                })
            }
            Some(_) => Ok(()),
        }
    }

    /// The park pose (joint angles, chain order), when the file gives one.
    pub fn park_pose(&self) -> Option<Vec<f64>> {
        self.joints.iter().map(|j| j.park).collect()
    }

    /// The commands of the park pose (chain order), when the file gives one.
    pub fn park_commands(&self) -> Option<Vec<i32>> {
        self.joints
            .iter()
            .map(|j| j.park.and_then(|q| j.command(q)))
            .collect()
    }

    /// Commands for `angles` (chain order) written into `last`, which holds
    /// the previous commands: a NaN angle leaves its joint's command as it
    /// was, so one bad value never moves a servo, and is reported. Extra
    /// angles or commands beyond the chain are ignored.
    pub fn commands(&self, angles: &[f64], last: &mut [i32]) -> Result<(), MapError> {
        let mut first_nan = None;
        for (index, ((map, &a), c)) in self.joints.iter().zip(angles).zip(last).enumerate() {
            match map.command(a) {
                Some(v) => *c = v,
                None => {
                    first_nan.get_or_insert(index);
                }
            }
        }
        match first_nan {
            Some(index) => Err(MapError::NotANumber { index }),
            None => Ok(()),
        }
    }

    /// Joint angles for commands (chain order), e.g. present positions.
    pub fn angles(&self, commands: &[i32]) -> Vec<f64> {
        self.joints
            .iter()
            .zip(commands)
            .map(|(m, &c)| m.angle(c))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn chain() -> Chain {
        let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/urdf/arm.urdf");
        Chain::from_urdf_file(urdf, None, None).unwrap()
    }

    fn example() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/servos_feetech.yaml"
        ))
        .unwrap()
    }

    fn file() -> CalibrationFile {
        serde_norway::from_str(&example()).unwrap()
    }

    fn checked() -> Calibration {
        Calibration::check(&file(), &chain()).unwrap()
    }

    #[test]
    fn example_file_matches_the_project_arm() {
        let c = Calibration::load(
            concat!(env!("CARGO_MANIFEST_DIR"), "/config/servos_feetech.yaml"),
            &chain(),
        )
        .unwrap();
        assert_eq!(c.kind, OutputKind::Feetech);
        assert_eq!(c.joints.len(), 5);
        // STS3215 default scale: 4096 ticks per turn.
        assert!((c.joints[0].scale - 4096.0 / std::f64::consts::TAU).abs() < 1e-9);
        assert_eq!(c.joints[0].command(0.0), Some(2048));
    }

    #[test]
    fn pwm_example_maps_the_arm_inside_the_firmware_range() {
        let c = Calibration::load(
            concat!(env!("CARGO_MANIFEST_DIR"), "/config/servos_pwm.yaml"),
            &chain(),
        )
        .unwrap();
        assert_eq!(c.kind, OutputKind::Pwm);
        let outputs: Vec<u16> = c.joints.iter().map(|j| j.output).collect();
        assert_eq!(outputs, [0, 1, 2, 3, 4]);
        for j in &c.joints {
            // The firmware's own absolute range is 500..2500 µs: a file
            // beyond it would be clamped there, silently off the mapping.
            assert!(
                j.min >= 500 && j.max <= 2500,
                "{}: {}..{}",
                j.joint,
                j.min,
                j.max
            );
            assert_eq!(j.command(0.0), Some(j.zero.round() as i32));
        }
        assert_eq!(c.link.watchdog_ms, 500);
    }

    /// The example turned into PWM servos on channels `first..`.
    fn to_pwm(f: &mut CalibrationFile, first: u16) {
        f.kind = OutputKind::Pwm;
        f.model = None;
        for (k, j) in f.joints.iter_mut().enumerate() {
            (j.output, j.zero, j.scale, j.range) =
                (k as u16 + first, 1500.0, Some(600.0), [500, 2500]);
        }
    }

    fn check_err(edit: impl FnOnce(&mut CalibrationFile)) -> CalibrationError {
        let mut f = file();
        edit(&mut f);
        Calibration::check(&f, &chain()).unwrap_err()
    }

    #[test]
    fn start_up_checks_name_the_problem() {
        assert_eq!(
            check_err(|f| {
                f.joints.pop();
            }),
            CalibrationError::MissingJoint {
                joint: "wrist_roll".into()
            }
        );
        assert!(matches!(
            check_err(|f| f.joints[1].output = f.joints[0].output),
            CalibrationError::SharedOutput { ref first, ref second, .. }
                if first == "base_yaw" && second == "shoulder"
        ));
        assert!(matches!(
            check_err(|f| f.joints[2].range = [0, 4096]),
            CalibrationError::Range { max: 4096, .. }
        ));
        assert!(matches!(
            check_err(|f| f.joints[2].range = [3000, 3000]),
            CalibrationError::Range { .. }
        ));
        assert!(matches!(
            check_err(|f| f.joints[3].zero = f64::NAN),
            CalibrationError::NotFinite { field: "zero", .. }
        ));
        assert!(matches!(
            check_err(|f| f.joints[3].scale = Some(f64::INFINITY)),
            CalibrationError::NotFinite { field: "scale", .. }
        ));
        assert!(matches!(
            check_err(|f| f.joints[0].direction = 0.5),
            CalibrationError::Direction { .. }
        ));
        assert!(matches!(
            check_err(|f| f.joints[0].speed_limit = 0.0),
            CalibrationError::NotPositive {
                field: "speed_limit",
                ..
            }
        ));
        assert!(matches!(
            check_err(|f| f.joints[0].joint = "elbw".into()),
            CalibrationError::UnknownJoint { .. }
        ));
        assert!(matches!(
            check_err(|f| f.joints.push(f.joints[0].clone())),
            CalibrationError::DuplicateJoint { .. }
        ));
        assert!(matches!(
            check_err(|f| f.joints[0].output = 253),
            CalibrationError::OutputRange { .. }
        ));
        // PWM: µs outside 400..=2600, and no default scale.
        assert!(matches!(
            check_err(|f| {
                to_pwm(f, 0);
                f.joints[4].range = [300, 2500];
            }),
            CalibrationError::Range {
                min: 300,
                device_min: 400,
                ..
            }
        ));
        assert!(matches!(
            check_err(|f| {
                f.kind = OutputKind::Pwm;
                f.model = None;
            }),
            CalibrationError::MissingScale { .. }
        ));
        // Unknown fields are typos, not ignored.
        let typo = example().replacen("speed_limit:", "speed_limt:", 1);
        assert!(matches!(
            Calibration::from_yaml(&typo, "typo.yaml", &chain()),
            Err(CalibrationError::Parse { .. })
        ));
        // The bridge has six channels.
        assert!(matches!(
            check_err(|f| to_pwm(f, 2)),
            CalibrationError::OutputRange {
                output: 6,
                max: 5,
                ..
            }
        ));
        assert!(matches!(
            check_err(|f| f.link.rate_hz = Some(0.0)),
            CalibrationError::Link {
                field: "rate_hz",
                ..
            }
        ));
    }

    #[test]
    fn the_bus_servo_model_sets_the_range_and_the_default_scale() {
        let default = example().replacen("model: sts3215", "", 1);
        let c = Calibration::from_yaml(&default, "no model", &chain()).unwrap();
        assert_eq!(c.model, Some(ServoModel::Sts3215), "the default");
        assert!(example().contains("model: sts3215"));
        let sts3250 = example().replacen("model: sts3215", "model: sts3250", 1);
        let c = Calibration::from_yaml(&sts3250, "sts3250.yaml", &chain()).unwrap();
        assert_eq!(c.model, Some(ServoModel::Sts3250));
        assert_eq!(c.joints[0].command(0.0), Some(2048));
        // SCS0009: 0..=1023 and no default scale (its 1024 units cover
        // less than a turn): the file must measure it.
        let scs = |f: &mut CalibrationFile| {
            f.model = Some(ServoModel::Scs0009);
            for j in &mut f.joints {
                j.zero = 512.0;
                j.scale = Some(195.6);
                j.range = [100, 900];
            }
        };
        assert_eq!(
            check_err(|f| {
                scs(f);
                f.joints[1].scale = None;
            }),
            CalibrationError::MissingScale {
                joint: "shoulder".into(),
                hardware: "scs0009".into()
            }
        );
        let mut f = file();
        scs(&mut f);
        let c = Calibration::check(&f, &chain()).unwrap();
        assert_eq!(c.model, Some(ServoModel::Scs0009));
        assert_eq!(c.joints[0].command(1.0), Some(708));
        assert!(matches!(
            check_err(|f| {
                scs(f);
                f.joints[1].range = [100, 4000];
            }),
            CalibrationError::Range {
                device_max: 1023,
                ..
            }
        ));
        // A model on hobby servos is a mistake; an unknown one a typo.
        assert!(matches!(
            check_err(|f| {
                to_pwm(f, 0);
                f.model = Some(ServoModel::Sts3215);
            }),
            CalibrationError::ModelNotApplicable { .. }
        ));
        let typo = example().replacen("model: sts3215", "model: sts3251", 1);
        let e = Calibration::from_yaml(&typo, "typo.yaml", &chain()).unwrap_err();
        assert!(
            matches!(&e, CalibrationError::Parse { message, .. } if message.contains("sts3251")),
            "{e}"
        );
    }

    #[test]
    fn a_park_pose_is_checked_and_mapped() {
        let park = |f: &mut CalibrationFile| {
            to_pwm(f, 0);
            for (k, j) in f.joints.iter_mut().enumerate() {
                j.park = Some(0.1 * k as f64);
            }
        };
        let mut f = file();
        park(&mut f);
        let c = Calibration::check(&f, &chain()).unwrap();
        let want: Vec<i32> = c
            .joints
            .iter()
            .map(|j| j.command(j.park.unwrap()).unwrap())
            .collect();
        assert_eq!(c.park_commands(), Some(want));
        assert_eq!(checked().park_commands(), None, "no park pose given");
        assert_eq!(
            check_err(|f| {
                park(f);
                f.joints[2].park = None;
            }),
            CalibrationError::MissingPark {
                joint: "elbow".into()
            }
        );
        assert!(matches!(
            check_err(|f| {
                park(f);
                f.joints[0].park = Some(2.0);
            }),
            CalibrationError::ParkOutsideLimits { ref joint, value: 2.0, .. } if joint == "base_yaw"
        ));
        assert!(matches!(
            check_err(|f| {
                park(f);
                f.joints[1].park = Some(f64::NAN);
            }),
            CalibrationError::NotFinite { field: "park", .. }
        ));
        // Bus servos are read at start-up; a park pose there is a mistake.
        assert!(matches!(
            check_err(|f| f.joints[0].park = Some(0.0)),
            CalibrationError::ParkNotNeeded {
                kind: OutputKind::Feetech,
                ..
            }
        ));
    }

    #[test]
    fn mapping_clamps_and_follows_direction() {
        let c = checked();
        let m = &c.joints[0];
        let step = m.direction * m.scale;
        // Beyond the joint limit (±π/2): same command as at the limit.
        assert_eq!(m.command(3.0), m.command(m.upper));
        assert_eq!(m.command(f64::NEG_INFINITY), m.command(m.lower));
        assert_eq!(m.command(0.1), Some((m.zero + step * 0.1).round() as i32));
        assert_eq!(m.command(f64::NAN), None);
        let mut last = vec![7; 5];
        let err = c.commands(&[0.0, f64::NAN, 0.0, 0.0, 0.0], &mut last);
        assert_eq!(err, Err(MapError::NotANumber { index: 1 }));
        assert_eq!(last[1], 7, "NaN keeps the last command");
        assert_eq!(last[0], m.command(0.0).unwrap());
    }

    #[test]
    fn range_clamps_inside_joint_limits() {
        let mut c = checked();
        let m = &mut c.joints[2];
        m.min = 2000;
        m.max = 2100;
        assert_eq!(
            m.command(1.0),
            Some(if m.direction > 0.0 { 2100 } else { 2000 })
        );
    }

    proptest! {
        #[test]
        fn any_angle_gives_a_command_in_range_or_none_for_nan(
            a in prop_oneof![any::<f64>(), Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), -10.0..10.0f64],
            joint in 0usize..5,
            unbounded in any::<bool>(),
        ) {
            let mut c = checked();
            let m = &mut c.joints[joint];
            if unbounded {
                // A continuous joint: no limits before the range clamp.
                (m.lower, m.upper) = (f64::NEG_INFINITY, f64::INFINITY);
            }
            match m.command(a) {
                Some(v) => prop_assert!((m.min..=m.max).contains(&v), "{v}"),
                None => prop_assert!(a.is_nan()),
            }
        }

        #[test]
        fn round_trip_within_one_tick(t in 0.0..1.0f64, joint in 0usize..5) {
            let c = checked();
            let m = &c.joints[joint];
            let a = m.lower + t * (m.upper - m.lower);
            let ticks = m.command(a).unwrap();
            let raw = m.zero + m.direction * m.scale * a;
            prop_assume!(raw >= f64::from(m.min) && raw <= f64::from(m.max));
            let back = m.angle(ticks);
            prop_assert!((back - a).abs() * m.scale <= 1.0, "{a} -> {ticks} -> {back}");
        }
    }
}
