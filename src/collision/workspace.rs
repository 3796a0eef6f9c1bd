//! The workspace file (YAML): the floor or table plane and the obstacles
//! around the arm, in the base frame or moving with a link (a held part).
//!
//! ```yaml
//! floor_z: 0.0          # the table top in the base frame (m); `off`: none.
//!                       # Default: the lowest point of the base link.
//! obstacles:
//!   - name: box
//!     shape: box        # box (size), sphere (radius), cylinder (radius, length, along z)
//!     size: [0.1, 0.1, 0.08]
//!     position: [0.2, 0.0, 0.04]
//!     rpy: [0, 0, 0]    # optional
//!     frame: base_link  # optional; a link name: the obstacle moves with it
//!     touch: [hand]     # optional; links it may touch (a held part's gripper)
//! ```
//!
//! [`WorkspaceWatch`] notices when the file changes so the node takes the
//! new one at its next tick.

use super::CollisionError;
use crate::model::Geometry;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where the floor is.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Floor {
    /// The lowest point of the base link's geometry.
    #[default]
    BaseBottom,
    /// At this z (m, base frame).
    At(f64),
    /// No floor.
    Off,
}

/// One obstacle.
#[derive(Debug, Clone, PartialEq)]
pub struct ObstacleDef {
    pub name: String,
    pub geometry: Geometry,
    pub position: [f64; 3],
    pub rpy: [f64; 3],
    /// The link it moves with; `None`: the base frame.
    pub frame: Option<String>,
    /// Links it may touch without counting as a collision.
    pub touch: Vec<String>,
}

/// A workspace: the floor and the obstacles.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Workspace {
    pub floor: Floor,
    pub obstacles: Vec<ObstacleDef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileForm {
    #[serde(default)]
    floor_z: Option<serde_norway::Value>,
    #[serde(default)]
    obstacles: Vec<ObstacleForm>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ObstacleForm {
    name: String,
    shape: String,
    #[serde(default)]
    size: Option<[f64; 3]>,
    #[serde(default)]
    radius: Option<f64>,
    #[serde(default)]
    length: Option<f64>,
    #[serde(default)]
    position: [f64; 3],
    #[serde(default)]
    rpy: [f64; 3],
    #[serde(default)]
    frame: Option<String>,
    #[serde(default)]
    touch: Vec<String>,
}

impl Workspace {
    /// Reads and checks a workspace file.
    pub fn load(path: &Path) -> Result<Workspace, CollisionError> {
        let text = std::fs::read_to_string(path).map_err(|e| CollisionError::Workspace {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        Workspace::parse(&text).map_err(|why| CollisionError::Workspace {
            path: path.display().to_string(),
            why,
        })
    }

    /// Parses workspace YAML; the error says what is wrong and where.
    pub fn parse(text: &str) -> Result<Workspace, String> {
        if text.trim().is_empty() {
            return Ok(Workspace::default());
        }
        let form: FileForm = serde_norway::from_str(text).map_err(|e| e.to_string())?;
        let floor = match form.floor_z {
            None | Some(serde_norway::Value::Null) => Floor::BaseBottom,
            Some(serde_norway::Value::String(s)) if s == "off" || s == "none" => Floor::Off,
            Some(v) => match v.as_f64().filter(|z| z.is_finite()) {
                Some(z) => Floor::At(z),
                None => return Err(format!("floor_z: {v:?} is neither a height (m) nor off")),
            },
        };
        let mut obstacles: Vec<ObstacleDef> = Vec::new();
        for o in form.obstacles {
            let def = o.check()?;
            if obstacles.iter().any(|x| x.name == def.name) {
                return Err(format!("obstacle '{}' is named twice", def.name));
            }
            obstacles.push(def);
        }
        Ok(Workspace { floor, obstacles })
    }
}

impl ObstacleForm {
    fn check(self) -> Result<ObstacleDef, String> {
        let name = self.name.trim().to_owned();
        if name.is_empty() {
            return Err("an obstacle has an empty name".into());
        }
        let bad = |why: String| format!("obstacle '{name}': {why}");
        let positive = |what: &str, x: Option<f64>| match x {
            Some(x) if x.is_finite() && x > 0.0 => Ok(x),
            Some(x) => Err(bad(format!("{what} {x} must be a positive number (m)"))),
            None => Err(bad(format!("a {} needs {what}", self.shape))),
        };
        let geometry = match self.shape.as_str() {
            "box" => {
                let size = self
                    .size
                    .ok_or_else(|| bad("a box needs size: [x, y, z]".into()))?;
                for s in size {
                    positive("size", Some(s))?;
                }
                Geometry::Box { size }
            }
            "sphere" => Geometry::Sphere {
                radius: positive("radius", self.radius)?,
            },
            "cylinder" => Geometry::Cylinder {
                radius: positive("radius", self.radius)?,
                length: positive("length", self.length)?,
            },
            other => {
                return Err(bad(format!(
                    "shape '{other}' is not one of box, sphere, cylinder"
                )));
            }
        };
        if self
            .position
            .iter()
            .chain(&self.rpy)
            .any(|v| !v.is_finite())
        {
            return Err(bad("position and rpy must be finite".into()));
        }
        Ok(ObstacleDef {
            name,
            geometry,
            position: self.position,
            rpy: self.rpy,
            frame: self.frame.filter(|f| !f.trim().is_empty()),
            touch: self.touch,
        })
    }
}

/// Notices a changed workspace file: its modification time and size, seen
/// on each [`WorkspaceWatch::poll`].
#[derive(Debug, Clone)]
pub struct WorkspaceWatch {
    path: PathBuf,
    seen: Option<(SystemTime, u64)>,
}

impl WorkspaceWatch {
    /// Watches `path`, whose content `loaded` was read now.
    pub fn new(path: PathBuf) -> WorkspaceWatch {
        let seen = stamp(&path);
        WorkspaceWatch { path, seen }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file again when it changed since last seen (or since the
    /// watch began), parsed; `None` when it did not change.
    pub fn poll(&mut self) -> Option<Result<Workspace, CollisionError>> {
        let now = stamp(&self.path);
        if now == self.seen {
            return None;
        }
        self.seen = now;
        Some(Workspace::load(&self.path))
    }
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_reads_floor_and_obstacles() {
        let w = Workspace::parse(
            "floor_z: -0.01\nobstacles:\n  - name: box\n    shape: box\n    size: [0.1, 0.2, 0.3]\n    position: [0.2, 0, 0.15]\n  - name: can\n    shape: cylinder\n    radius: 0.03\n    length: 0.1\n    frame: hand\n",
        )
        .unwrap();
        assert_eq!(w.floor, Floor::At(-0.01));
        assert_eq!(w.obstacles.len(), 2);
        assert_eq!(w.obstacles[1].frame.as_deref(), Some("hand"));
        assert_eq!(Workspace::parse("floor_z: off").unwrap().floor, Floor::Off);
        assert_eq!(Workspace::parse("").unwrap(), Workspace::default());
    }

    #[test]
    fn bad_workspaces_say_what_is_wrong() {
        for (text, says) in [
            ("obstacles:\n  - {name: b, shape: box}\n", "needs size"),
            (
                "obstacles:\n  - {name: b, shape: cone, radius: 1}\n",
                "'cone'",
            ),
            (
                "obstacles:\n  - {name: s, shape: sphere, radius: -1}\n",
                "positive",
            ),
            (
                "obstacles:\n  - {name: s, shape: sphere, radius: 1}\n  - {name: s, shape: sphere, radius: 1}\n",
                "twice",
            ),
            ("floor_z: low\n", "floor_z"),
            ("flor_z: 0\n", "flor_z"),
        ] {
            let e = Workspace::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
