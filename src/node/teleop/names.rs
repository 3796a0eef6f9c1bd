//! Which follower joint each leader joint drives: the same name on both
//! sides (an SO-101 leader and follower), else the joint with the same
//! role in a small table of the arms this project knows (an SO-101 leader
//! driving the project arm or a Koch follower), else what the user maps
//! by hand (`leader=follower`). Angles are URDF angles on both sides and
//! are passed through as they are: arms of different makes differ in
//! their zeros and ranges, and the follower's limits clamp.

use std::collections::BTreeMap;

/// Joint names by role, for the arms the table knows: base yaw, shoulder,
/// elbow, wrist pitch, wrist roll, gripper.
pub const ARMS: &[(&str, [&str; 6])] = &[
    (
        "arm_ik's arm (urdf/arm.urdf)",
        [
            "base_yaw",
            "shoulder",
            "elbow",
            "wrist_pitch",
            "wrist_roll",
            "gripper",
        ],
    ),
    (
        "SO-100/SO-101",
        [
            "shoulder_pan",
            "shoulder_lift",
            "elbow_flex",
            "wrist_flex",
            "wrist_roll",
            "gripper",
        ],
    ),
    (
        "Koch v1.1",
        [
            "joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6",
        ],
    ),
];

/// How a leader joint was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matched {
    SameName,
    /// The same role in [`ARMS`].
    Role,
    /// Given by hand.
    Mapped,
}

/// The leader joints and the follower joints they drive.
#[derive(Debug, Clone, PartialEq)]
pub struct NameMap {
    /// (leader index, follower name, how) for every leader joint that
    /// drives one.
    pub pairs: Vec<(usize, String, Matched)>,
    /// Leader joints that drive nothing.
    pub unused: Vec<String>,
    /// Follower joints no leader joint drives (they hold).
    pub undriven: Vec<String>,
}

/// A mapping that cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NameMapError {
    #[error("joint map '{0}': expected LEADER=FOLLOWER")]
    Syntax(String),
    #[error("joint map '{pair}': the leader has no joint '{joint}' (it has {known})")]
    NoLeaderJoint {
        pair: String,
        joint: String,
        known: String,
    },
    #[error("joint map '{pair}': the follower has no joint '{joint}' (it moves {known})")]
    NoFollowerJoint {
        pair: String,
        joint: String,
        known: String,
    },
    #[error("follower joint '{0}' is driven by two leader joints ({1} and {2})")]
    Twice(String, String, String),
    #[error(
        "no leader joint drives a follower joint (leader: {leader}; follower: {follower}); map them with LEADER=FOLLOWER"
    )]
    Nothing { leader: String, follower: String },
}

/// Parses `a=b,c=d` (also repeated) into pairs.
pub fn parse_map(text: &str) -> Result<Vec<(String, String)>, NameMapError> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => {
                Ok((a.trim().to_string(), b.trim().to_string()))
            }
            _ => Err(NameMapError::Syntax(pair.to_string())),
        })
        .collect()
}

/// The role of `name` in the table: its index in every arm's list.
fn role(name: &str) -> Option<usize> {
    ARMS.iter()
        .find_map(|(_, names)| names.iter().position(|n| *n == name))
}

/// Matches `leader` joints to `follower` joints: explicit pairs first,
/// then the same name, then the same role.
pub fn match_names(
    leader: &[String],
    follower: &[String],
    explicit: &[(String, String)],
) -> Result<NameMap, NameMapError> {
    let mut by_follower: BTreeMap<String, (usize, Matched)> = BTreeMap::new();
    let mut taken = vec![false; leader.len()];
    let add = |i: usize, f: &str, how: Matched, by: &mut BTreeMap<String, (usize, Matched)>| {
        if let Some(&(j, _)) = by.get(f) {
            return Err(NameMapError::Twice(
                f.to_string(),
                leader[j].clone(),
                leader[i].clone(),
            ));
        }
        by.insert(f.to_string(), (i, how));
        Ok(())
    };
    for (a, b) in explicit {
        let pair = format!("{a}={b}");
        let i = leader
            .iter()
            .position(|n| n == a)
            .ok_or_else(|| NameMapError::NoLeaderJoint {
                pair: pair.clone(),
                joint: a.clone(),
                known: leader.join(", "),
            })?;
        if !follower.contains(b) {
            return Err(NameMapError::NoFollowerJoint {
                pair,
                joint: b.clone(),
                known: follower.join(", "),
            });
        }
        add(i, b, Matched::Mapped, &mut by_follower)?;
        taken[i] = true;
    }
    for (i, name) in leader.iter().enumerate() {
        if taken[i] {
            continue;
        }
        let found = if follower.contains(name) {
            Some((name.clone(), Matched::SameName))
        } else {
            role(name).and_then(|r| {
                follower
                    .iter()
                    .find(|f| role(f) == Some(r))
                    .map(|f| (f.clone(), Matched::Role))
            })
        };
        if let Some((f, how)) = found
            && !by_follower.contains_key(&f)
        {
            add(i, &f, how, &mut by_follower)?;
            taken[i] = true;
        }
    }
    if by_follower.is_empty() {
        return Err(NameMapError::Nothing {
            leader: leader.join(", "),
            follower: follower.join(", "),
        });
    }
    let mut pairs: Vec<(usize, String, Matched)> = by_follower
        .into_iter()
        .map(|(f, (i, how))| (i, f, how))
        .collect();
    pairs.sort_by_key(|p| p.0);
    Ok(NameMap {
        unused: leader
            .iter()
            .zip(&taken)
            .filter(|(_, t)| !**t)
            .map(|(n, _)| n.clone())
            .collect(),
        undriven: follower
            .iter()
            .filter(|f| !pairs.iter().any(|(_, g, _)| g == *f))
            .cloned()
            .collect(),
        pairs,
    })
}

impl NameMap {
    /// One line for the start-up message: which joint drives which.
    pub fn describe(&self, leader: &[String]) -> String {
        let mut parts: Vec<String> = self
            .pairs
            .iter()
            .map(|(i, f, how)| match how {
                Matched::SameName => f.clone(),
                Matched::Role => format!("{} -> {f} (same role)", leader[*i]),
                Matched::Mapped => format!("{} -> {f}", leader[*i]),
            })
            .collect();
        if !self.undriven.is_empty() {
            parts.push(format!("holding {}", self.undriven.join(", ")));
        }
        if !self.unused.is_empty() {
            parts.push(format!("leader's {} unused", self.unused.join(", ")));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn same_names_then_roles_then_explicit_pairs() {
        let so101 = names(&ARMS[1].1);
        let m = match_names(&so101, &so101, &[]).unwrap();
        assert_eq!(m.pairs.len(), 6);
        assert!(m.pairs.iter().all(|p| p.2 == Matched::SameName));
        // An SO-101 leader drives the project arm by role.
        let arm = names(&ARMS[0].1);
        let m = match_names(&so101, &arm, &[]).unwrap();
        assert_eq!(m.pairs[0], (0, "base_yaw".into(), Matched::Role));
        assert_eq!(m.pairs[5], (5, "gripper".into(), Matched::SameName));
        assert!(
            m.describe(&so101)
                .contains("shoulder_pan -> base_yaw (same role)")
        );
        // By hand: the leader's wrist roll drives nothing else's base.
        let explicit = parse_map("wrist_roll=base_yaw").unwrap();
        let m = match_names(&so101, &arm, &explicit).unwrap();
        assert!(m.pairs.contains(&(4, "base_yaw".into(), Matched::Mapped)));
        assert_eq!(m.unused, ["shoulder_pan"]);
        assert_eq!(m.undriven, ["wrist_roll"]);
    }

    #[test]
    fn bad_maps_are_refused_naming_the_joint() {
        let arm = names(&ARMS[0].1);
        let e = parse_map("elbow").unwrap_err();
        assert_eq!(e, NameMapError::Syntax("elbow".into()));
        let e = match_names(&arm, &arm, &parse_map("elbw=elbow").unwrap()).unwrap_err();
        assert!(e.to_string().contains("no joint 'elbw'"), "{e}");
        let e = match_names(&arm, &arm, &parse_map("elbow=elbw").unwrap()).unwrap_err();
        assert!(
            e.to_string().contains("follower has no joint 'elbw'"),
            "{e}"
        );
        let e = match_names(
            &arm,
            &arm,
            &parse_map("elbow=shoulder,shoulder=shoulder").unwrap(),
        )
        .unwrap_err();
        assert!(matches!(e, NameMapError::Twice(..)), "{e}");
        let e = match_names(&names(&["x"]), &arm, &[]).unwrap_err();
        assert!(matches!(e, NameMapError::Nothing { .. }), "{e}");
    }
}
