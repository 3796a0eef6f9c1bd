//! The collision check's settings ([`CollisionOptions`], defined beside
//! the checker): checked once here for every front-end, and the ROS
//! parameters' spelling of the mesh search path.

use super::{SettingError, non_negative, positive};
use crate::collision::CollisionOptions;
use std::path::PathBuf;

/// Checks the values of `o`; errors name the ROS parameter.
pub fn validate_collision(o: &CollisionOptions) -> Result<(), SettingError> {
    non_negative("collision_margin", o.margin)?;
    positive("collision_capsule_radius", o.capsule_radius)?;
    Ok(())
}

/// The `mesh_path` parameter: folders separated by `:` (as a search path
/// is written in a shell) or `,`; empty: none.
pub fn parse_mesh_path(s: &str) -> Vec<PathBuf> {
    s.split([':', ','])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// `""` as no file.
pub fn optional_path(s: &str) -> Option<PathBuf> {
    let s = s.trim();
    (!s.is_empty()).then(|| PathBuf::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_paths_split_on_colons_and_commas() {
        assert_eq!(
            parse_mesh_path("/a/share: /b,"),
            [PathBuf::from("/a/share"), PathBuf::from("/b")]
        );
        assert!(parse_mesh_path(" ").is_empty());
        let bad = CollisionOptions {
            margin: -0.1,
            ..CollisionOptions::default()
        };
        assert_eq!(
            validate_collision(&bad).unwrap_err().name,
            "collision_margin"
        );
    }
}
