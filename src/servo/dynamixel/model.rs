//! The Dynamixel models arm_ik knows, told apart by their model number
//! (register 0, and the first two bytes of a PING reply).
//!
//! Facts from the ROBOTIS e-manual pages of each model: all of them count
//! 4096 positions per turn (0.088°) and leave the factory at 57600 baud,
//! ID 1, position mode. The XL330s and the XM430 sense current (1 mA
//! units on the XL330, about 2.69 mA on the XM430) and so have the
//! current and current-based position modes; the XL430 and XC430 report a
//! load in 0.1 % instead and have neither. The X330 series tops out at
//! 4 Mbaud (code 6), the X430 series at 4.5 Mbaud (code 7). FAST SYNC
//! READ needs firmware 45 on the X430 series and 46 on the X330 series.

use std::f64::consts::TAU;

/// Position units per turn of the output shaft.
pub const TICKS_PER_REV: u32 = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
pub enum DynamixelModel {
    /// Koch v1.1 leader arm.
    #[serde(rename = "xl330-m077")]
    Xl330M077,
    /// Koch v1.1 follower (elbow, wrist, gripper).
    #[serde(rename = "xl330-m288")]
    Xl330M288,
    /// Koch v1.1 follower (shoulder), WidowX.
    #[serde(rename = "xl430-w250")]
    Xl430W250,
    /// OpenManipulator-X.
    #[serde(rename = "xm430-w350")]
    Xm430W350,
    #[serde(rename = "xc430-w150")]
    Xc430W150,
    #[serde(rename = "xc430-w240")]
    Xc430W240,
}

/// The two families, which differ in firmware features and top speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Series {
    X330,
    X430,
}

impl DynamixelModel {
    pub const ALL: [DynamixelModel; 6] = [
        DynamixelModel::Xl330M077,
        DynamixelModel::Xl330M288,
        DynamixelModel::Xl430W250,
        DynamixelModel::Xm430W350,
        DynamixelModel::Xc430W150,
        DynamixelModel::Xc430W240,
    ];

    /// What the model register holds.
    pub fn number(self) -> u16 {
        match self {
            DynamixelModel::Xl330M077 => 1190,
            DynamixelModel::Xl330M288 => 1200,
            DynamixelModel::Xl430W250 => 1060,
            DynamixelModel::Xm430W350 => 1020,
            DynamixelModel::Xc430W150 => 1070,
            DynamixelModel::Xc430W240 => 1080,
        }
    }

    /// The model whose register holds `number`, if it is one of ours.
    pub fn from_number(number: u16) -> Option<DynamixelModel> {
        Self::ALL.into_iter().find(|m| m.number() == number)
    }

    /// The name in calibration files (as LeRobot spells it too).
    pub fn name(self) -> &'static str {
        match self {
            DynamixelModel::Xl330M077 => "xl330-m077",
            DynamixelModel::Xl330M288 => "xl330-m288",
            DynamixelModel::Xl430W250 => "xl430-w250",
            DynamixelModel::Xm430W350 => "xm430-w350",
            DynamixelModel::Xc430W150 => "xc430-w150",
            DynamixelModel::Xc430W240 => "xc430-w240",
        }
    }

    /// The model called `name` ([`name`](Self::name), any case).
    pub fn from_name(name: &str) -> Option<DynamixelModel> {
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name))
    }

    pub fn series(self) -> Series {
        match self {
            DynamixelModel::Xl330M077 | DynamixelModel::Xl330M288 => Series::X330,
            _ => Series::X430,
        }
    }

    /// Highest position in (single-turn) position mode.
    pub fn max_position(self) -> u32 {
        TICKS_PER_REV - 1
    }

    /// Position units per radian of the output.
    pub fn ticks_per_radian(self) -> f64 {
        f64::from(TICKS_PER_REV) / TAU
    }

    /// Whether it senses current: the current limit, goal and present
    /// current registers, and the current and current-based position modes.
    pub fn senses_current(self) -> bool {
        matches!(
            self,
            DynamixelModel::Xl330M077 | DynamixelModel::Xl330M288 | DynamixelModel::Xm430W350
        )
    }

    /// Whether current-based position mode exists (a gripper that holds
    /// an object at a set current instead of crushing it).
    pub fn has_current_based_position(self) -> bool {
        self.senses_current()
    }

    /// Milliamperes per unit of the current registers, if it has them.
    pub fn current_unit_ma(self) -> Option<f64> {
        match self {
            DynamixelModel::Xl330M077 | DynamixelModel::Xl330M288 => Some(1.0),
            DynamixelModel::Xm430W350 => Some(2.69),
            _ => None,
        }
    }

    /// Highest baud-rate code (see [`super::table::baud_rate`]).
    pub fn max_baud_code(self) -> u8 {
        match self.series() {
            Series::X330 => 6,
            Series::X430 => 7,
        }
    }

    /// Whether a servo of this model with `firmware` answers FAST SYNC
    /// READ.
    pub fn has_fast_sync_read(self, firmware: u8) -> bool {
        let first = match self.series() {
            Series::X330 => 46,
            Series::X430 => 45,
        };
        firmware >= first
    }
}

impl std::fmt::Display for DynamixelModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (model {})", self.name(), self.number())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names_are_unique_and_round_trip() {
        for m in DynamixelModel::ALL {
            assert_eq!(DynamixelModel::from_number(m.number()), Some(m));
            assert_eq!(DynamixelModel::from_name(m.name()), Some(m));
            assert_eq!(DynamixelModel::from_name(&m.name().to_uppercase()), Some(m));
        }
        assert_eq!(DynamixelModel::from_number(777), None);
        assert_eq!(
            DynamixelModel::Xl430W250.to_string(),
            "xl430-w250 (model 1060)"
        );
    }

    #[test]
    fn features() {
        assert!(DynamixelModel::Xl330M288.has_current_based_position());
        assert!(!DynamixelModel::Xl430W250.has_current_based_position());
        assert_eq!(DynamixelModel::Xc430W150.current_unit_ma(), None);
        assert!(DynamixelModel::Xl330M077.has_fast_sync_read(46));
        assert!(!DynamixelModel::Xl330M077.has_fast_sync_read(45));
        assert!(DynamixelModel::Xm430W350.has_fast_sync_read(45));
        assert_eq!(DynamixelModel::Xl330M288.max_baud_code(), 6);
        assert!((DynamixelModel::Xm430W350.ticks_per_radian() - 651.8986).abs() < 1e-3);
    }
}
