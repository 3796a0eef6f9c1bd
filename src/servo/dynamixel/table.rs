//! The X-series control table: register addresses, sizes and signedness,
//! the operating modes, the hardware error bits and the baud-rate codes.
//!
//! Facts from the ROBOTIS e-manual control tables of the XL330-M077,
//! XL330-M288, XL430-W250, XM430-W350 and XC430-W150/W240 (they share the
//! addresses below; the current registers exist only on the models that
//! sense current, see [`super::model`]). Values are little-endian; the
//! signed ones are two's complement. Addresses below [`EEPROM_END`] are
//! EEPROM: the servo refuses to write them (access error) while its torque
//! is on.

use thiserror::Error;

/// One register: where it is, how many bytes, whether it holds a signed
/// value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Register {
    pub addr: u16,
    pub size: u8,
    pub signed: bool,
}

const fn unsigned(addr: u16, size: u8) -> Register {
    Register {
        addr,
        size,
        signed: false,
    }
}

const fn signed(addr: u16, size: u8) -> Register {
    Register {
        addr,
        size,
        signed: true,
    }
}

/// Why a value cannot go into a register.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ValueError {
    #[error("value {value} does not fit the {size}-byte register at address {addr}")]
    OutOfRange { addr: u16, size: u8, value: i64 },
    #[error("{got} bytes read for the {size}-byte register at address {addr}")]
    WrongLength { addr: u16, size: u8, got: usize },
}

impl Register {
    /// The bytes of `value` in this register, little-endian; a value that
    /// does not fit (as signed or unsigned, per [`signed`](Self::signed))
    /// is refused rather than truncated.
    pub fn encode(self, value: i64) -> Result<Vec<u8>, ValueError> {
        let bits = 8 * u32::from(self.size);
        let (lo, hi) = if self.signed {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        } else {
            (0, (1i64 << bits) - 1)
        };
        if !(1..=4).contains(&self.size) || !(lo..=hi).contains(&value) {
            return Err(ValueError::OutOfRange {
                addr: self.addr,
                size: self.size,
                value,
            });
        }
        Ok(value.to_le_bytes()[..usize::from(self.size)].to_vec())
    }

    /// The value of exactly [`size`](Self::size) bytes read from this
    /// register.
    pub fn decode(self, bytes: &[u8]) -> Result<i64, ValueError> {
        if bytes.len() != usize::from(self.size) || !(1..=4).contains(&self.size) {
            return Err(ValueError::WrongLength {
                addr: self.addr,
                size: self.size,
                got: bytes.len(),
            });
        }
        let mut raw = [0u8; 8];
        raw[..bytes.len()].copy_from_slice(bytes);
        let v = i64::from_le_bytes(raw);
        let bits = 8 * bytes.len() as u32;
        Ok(if self.signed && v >= 1 << (bits - 1) {
            v - (1 << bits)
        } else {
            v
        })
    }
}

/// First address of the RAM area; everything below is EEPROM.
pub const EEPROM_END: u16 = 64;

/// Registers of the X series used by arm_ik and its tests.
pub mod reg {
    use super::{Register, signed, unsigned};

    /// Model number (see [`super::super::model::DynamixelModel`]).
    pub const MODEL_NUMBER: Register = unsigned(0, 2);
    pub const FIRMWARE_VERSION: Register = unsigned(6, 1);
    pub const ID: Register = unsigned(7, 1);
    /// Baud-rate code (see [`super::baud_rate`]); 1 (57600) from the factory.
    pub const BAUD_RATE: Register = unsigned(8, 1);
    /// Delay before a reply, in 2 µs units (factory 250 = 500 µs).
    pub const RETURN_DELAY_TIME: Register = unsigned(9, 1);
    /// Bit 0: reverse direction (positions count the other way).
    pub const DRIVE_MODE: Register = unsigned(10, 1);
    /// See [`super::OperatingMode`]; 3 (position) from the factory.
    pub const OPERATING_MODE: Register = unsigned(11, 1);
    /// Added to the encoder position: present = actual + offset.
    pub const HOMING_OFFSET: Register = signed(20, 4);
    pub const TEMPERATURE_LIMIT: Register = unsigned(31, 1);
    pub const MAX_VOLTAGE_LIMIT: Register = unsigned(32, 2);
    pub const MIN_VOLTAGE_LIMIT: Register = unsigned(34, 2);
    /// Current limit (models with current sensing only).
    pub const CURRENT_LIMIT: Register = unsigned(38, 2);
    pub const VELOCITY_LIMIT: Register = unsigned(44, 4);
    /// Position limits, used in position mode only.
    pub const MAX_POSITION_LIMIT: Register = unsigned(48, 4);
    pub const MIN_POSITION_LIMIT: Register = unsigned(52, 4);
    /// Which hardware errors switch the torque off (see [`super::HardwareError`]).
    pub const SHUTDOWN: Register = unsigned(63, 1);
    pub const TORQUE_ENABLE: Register = unsigned(64, 1);
    pub const LED: Register = unsigned(65, 1);
    /// 0: answer PING only, 1: also READ, 2: everything (factory).
    pub const STATUS_RETURN_LEVEL: Register = unsigned(68, 1);
    /// The latched hardware errors (see [`super::HardwareError`]).
    pub const HARDWARE_ERROR_STATUS: Register = unsigned(70, 1);
    pub const POSITION_D_GAIN: Register = unsigned(80, 2);
    pub const POSITION_I_GAIN: Register = unsigned(82, 2);
    pub const POSITION_P_GAIN: Register = unsigned(84, 2);
    pub const GOAL_PWM: Register = signed(100, 2);
    /// Goal current (models with current sensing only); in current-based
    /// position mode, the current the servo holds itself to.
    pub const GOAL_CURRENT: Register = signed(102, 2);
    pub const GOAL_VELOCITY: Register = signed(104, 4);
    pub const PROFILE_ACCELERATION: Register = unsigned(108, 4);
    /// Speed of the move to a new goal, 0.229 rev/min units; 0 = as fast
    /// as possible.
    pub const PROFILE_VELOCITY: Register = unsigned(112, 4);
    pub const GOAL_POSITION: Register = signed(116, 4);
    pub const REALTIME_TICK: Register = unsigned(120, 2);
    /// 1 while the servo is moving to its goal.
    pub const MOVING: Register = unsigned(122, 1);
    pub const MOVING_STATUS: Register = unsigned(123, 1);
    pub const PRESENT_PWM: Register = signed(124, 2);
    /// Present current (XL330, XM430), or present load in 0.1 % (XL430,
    /// XC430): same address and size.
    pub const PRESENT_CURRENT: Register = signed(126, 2);
    pub const PRESENT_VELOCITY: Register = signed(128, 4);
    pub const PRESENT_POSITION: Register = signed(132, 4);
    /// Input voltage in 0.1 V.
    pub const PRESENT_INPUT_VOLTAGE: Register = unsigned(144, 2);
    pub const PRESENT_TEMPERATURE: Register = unsigned(146, 1);
}

/// What the servo controls (register 11). Position and extended position
/// are what an arm joint needs; current-based position also caps the
/// current (a gripper that grips without crushing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperatingMode {
    Current,
    Velocity,
    Position,
    ExtendedPosition,
    CurrentBasedPosition,
    Pwm,
}

impl OperatingMode {
    pub const ALL: [OperatingMode; 6] = [
        OperatingMode::Current,
        OperatingMode::Velocity,
        OperatingMode::Position,
        OperatingMode::ExtendedPosition,
        OperatingMode::CurrentBasedPosition,
        OperatingMode::Pwm,
    ];

    /// The register value.
    pub fn code(self) -> u8 {
        match self {
            OperatingMode::Current => 0,
            OperatingMode::Velocity => 1,
            OperatingMode::Position => 3,
            OperatingMode::ExtendedPosition => 4,
            OperatingMode::CurrentBasedPosition => 5,
            OperatingMode::Pwm => 16,
        }
    }

    pub fn from_code(code: u8) -> Option<OperatingMode> {
        Self::ALL.into_iter().find(|m| m.code() == code)
    }

    pub fn name(self) -> &'static str {
        match self {
            OperatingMode::Current => "current",
            OperatingMode::Velocity => "velocity",
            OperatingMode::Position => "position",
            OperatingMode::ExtendedPosition => "extended position",
            OperatingMode::CurrentBasedPosition => "current-based position",
            OperatingMode::Pwm => "PWM",
        }
    }

    /// Whether goal positions are obeyed in this mode.
    pub fn follows_goal_position(self) -> bool {
        matches!(
            self,
            OperatingMode::Position
                | OperatingMode::ExtendedPosition
                | OperatingMode::CurrentBasedPosition
        )
    }

    /// Whether the mode needs current sensing (absent on XL430, XC430).
    pub fn needs_current_sensing(self) -> bool {
        matches!(
            self,
            OperatingMode::Current | OperatingMode::CurrentBasedPosition
        )
    }
}

/// The hardware error status (register 70; same bits as the shutdown
/// register 63). A servo with any of these latched has switched its
/// torque off and sets the alert bit of every status packet; only a
/// reboot clears it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HardwareError(pub u8);

impl HardwareError {
    pub const INPUT_VOLTAGE: u8 = 1 << 0;
    pub const OVERHEATING: u8 = 1 << 2;
    pub const MOTOR_ENCODER: u8 = 1 << 3;
    pub const ELECTRICAL_SHOCK: u8 = 1 << 4;
    pub const OVERLOAD: u8 = 1 << 5;

    const NAMES: [(u8, &'static str); 5] = [
        (Self::INPUT_VOLTAGE, "input voltage"),
        (Self::OVERHEATING, "overheating"),
        (Self::MOTOR_ENCODER, "motor encoder"),
        (Self::ELECTRICAL_SHOCK, "electrical shock"),
        (Self::OVERLOAD, "overload"),
    ];

    pub fn is_ok(self) -> bool {
        self.0 == 0
    }

    /// Names of the set bits, for logs and the link status; a bit the
    /// manual leaves unused is named by its number.
    pub fn names(self) -> Vec<String> {
        (0..8)
            .map(|b| 1u8 << b)
            .filter(|bit| self.0 & bit != 0)
            .map(|bit| match Self::NAMES.iter().find(|(b, _)| *b == bit) {
                Some((_, name)) => (*name).to_string(),
                None => format!("bit {}", bit.trailing_zeros()),
            })
            .collect()
    }
}

/// Baud rate of a baud-rate code (register 8), on a model whose highest
/// code is `max_code` (6 on the X330 series, 7 on the X430 series).
pub fn baud_rate(code: u8, max_code: u8) -> Option<u32> {
    const RATES: [u32; 8] = [
        9_600, 57_600, 115_200, 1_000_000, 2_000_000, 3_000_000, 4_000_000, 4_500_000,
    ];
    RATES
        .get(usize::from(code))
        .copied()
        .filter(|_| code <= max_code)
}

/// The code of a baud rate, if the model has it.
pub fn baud_code(rate: u32, max_code: u8) -> Option<u8> {
    (0..=max_code).find(|&c| baud_rate(c, max_code) == Some(rate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_refuse_what_does_not_fit() {
        let r = reg::GOAL_POSITION;
        for v in [0, 1, 2048, 4095, -1, -1_044_479, i64::from(i32::MAX)] {
            assert_eq!(r.decode(&r.encode(v).unwrap()), Ok(v));
        }
        assert_eq!(r.encode(-1).unwrap(), [0xFF; 4]);
        assert!(r.encode(1 << 31).is_err());
        assert_eq!(
            reg::TORQUE_ENABLE.encode(256),
            Err(ValueError::OutOfRange {
                addr: 64,
                size: 1,
                value: 256
            })
        );
        assert!(reg::TORQUE_ENABLE.encode(-1).is_err());
        assert_eq!(reg::MODEL_NUMBER.decode(&[0x24, 0x04]), Ok(1060));
        assert_eq!(reg::PRESENT_CURRENT.decode(&[0xFE, 0xFF]), Ok(-2));
        assert!(reg::PRESENT_POSITION.decode(&[1, 2]).is_err());
    }

    #[test]
    fn operating_modes() {
        for m in OperatingMode::ALL {
            assert_eq!(OperatingMode::from_code(m.code()), Some(m));
        }
        assert_eq!(OperatingMode::from_code(2), None);
        assert!(OperatingMode::ExtendedPosition.follows_goal_position());
        assert!(!OperatingMode::Velocity.follows_goal_position());
        assert!(OperatingMode::CurrentBasedPosition.needs_current_sensing());
    }

    #[test]
    fn hardware_error_names() {
        let e = HardwareError(HardwareError::OVERLOAD | HardwareError::INPUT_VOLTAGE | 0x40);
        assert_eq!(e.names(), ["input voltage", "overload", "bit 6"]);
        assert!(HardwareError(0).is_ok());
    }

    #[test]
    fn baud_codes() {
        assert_eq!(baud_rate(1, 7), Some(57_600));
        assert_eq!(baud_rate(3, 6), Some(1_000_000));
        assert_eq!(baud_rate(7, 6), None);
        assert_eq!(baud_rate(7, 7), Some(4_500_000));
        assert_eq!(baud_code(4_000_000, 6), Some(6));
        assert_eq!(baud_code(4_500_000, 6), None);
        assert_eq!(baud_code(12345, 7), None);
    }
}
