//! The one list of servo protocols, and finding one by name.
//!
//! The calibration finds a servo file's `kind:` here and the node's
//! `protocol` parameter is checked against it. A new protocol is its
//! module folder, its `mod` line in `servo/mod.rs` and its entry in
//! [`PROTOCOLS`].

use super::protocol::Protocol;

/// Every protocol, in the order they are listed to users.
pub static PROTOCOLS: &[&Protocol] = &[
    &super::pwm_bridge::PROTOCOL, // Arduino firmware bridge, hobby PWM servos
    &super::feetech::PROTOCOL,    // Feetech STS/SCS bus servos
    &super::dynamixel::PROTOCOL,  // ROBOTIS Dynamixel Protocol 2.0 bus servos
];

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

/// The protocol other than `protocol` that takes `field`, for an error
/// that says where a misplaced field belongs.
pub fn owner_of(protocol: &Protocol, field: &str) -> Option<&'static Protocol> {
    PROTOCOLS
        .iter()
        .copied()
        .find(|p| p.name != protocol.name && p.fields.contains(&field))
}

/// Whether any protocol takes `field`: the file reader refuses a key that
/// is neither generic nor this, as a typo.
pub fn is_field(field: &str) -> bool {
    PROTOCOLS.iter().any(|p| p.fields.contains(&field))
}

/// Every protocol field, once each, sorted: for the typo message.
pub fn all_fields() -> Vec<&'static str> {
    let mut all: Vec<&str> = PROTOCOLS
        .iter()
        .flat_map(|p| p.fields.iter().copied())
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

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
                assert_eq!(find(name), Some(*p));
            }
        }
        assert_eq!(find(" pwm "), Some(&super::super::pwm_bridge::PROTOCOL));
        assert_eq!(find("feetch"), None);
        let names = names();
        assert!(names.starts_with(&["pwm_bridge", "feetech"]), "{names:?}");
    }

    #[test]
    fn protocol_fields_are_not_generic_keys() {
        // A protocol field named like a generic key would never reach the
        // protocol: the file reader gives the key to the generic field.
        let generic = [
            "kind",
            "link",
            "joints",
            "joint",
            "output",
            "direction",
            "zero",
            "scale",
            "range",
            "speed_limit",
            "park",
        ];
        for p in PROTOCOLS {
            for f in p.fields {
                assert!(!generic.contains(f), "{p}: {f}");
                assert!(is_field(f) && all_fields().contains(f));
            }
        }
        assert!(!is_field("speed_limt"));
    }
}
