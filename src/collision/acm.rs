//! Which pairs of links are never checked: the allowed-collision matrix.
//!
//! Links next to each other in the tree never are (they touch at their
//! joint by design). Beyond that, an SRDF's `<disable_collisions>` when one
//! is given (MoveIt's convention); otherwise the matrix is generated the
//! way the MoveIt Setup Assistant does it ([`super::sampling`]). Either is
//! written back as an SRDF a MoveIt user can reuse ([`Matrix::to_srdf`]).

use super::CollisionError;
use super::body::Body;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Random configurations the generated matrix is sampled on (MoveIt's
/// default sampling density).
pub const SAMPLES: usize = 10_000;

/// Why a pair is not checked (MoveIt's SRDF reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Adjacent,
    Default,
    Always,
    Never,
    /// Any other reason an SRDF gives.
    User,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::Adjacent => "Adjacent",
            Reason::Default => "Default",
            Reason::Always => "Always",
            Reason::Never => "Never",
            Reason::User => "User",
        }
    }

    /// Why a pair with this reason is not checked, in words.
    pub fn meaning(self) -> &'static str {
        match self {
            Reason::Adjacent => "joined by a joint: they touch there by design",
            Reason::Default => "closer than the margin in the default pose",
            Reason::Always => "closer than the margin in nearly every sampled pose",
            Reason::Never => "never closer than the margin in any sampled pose",
            Reason::User => "the SRDF disables it",
        }
    }

    fn parse(s: &str) -> Reason {
        match s {
            "Adjacent" => Reason::Adjacent,
            "Default" => Reason::Default,
            "Always" => Reason::Always,
            "Never" => Reason::Never,
            _ => Reason::User,
        }
    }
}

/// One pair that is not checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Disabled {
    pub link1: String,
    pub link2: String,
    pub reason: Reason,
}

/// Where the matrix came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    Srdf(PathBuf),
    /// Sampled now, and written to the cache file when there is one.
    Generated {
        cache: Option<PathBuf>,
    },
    /// Read from the cache file of an earlier generation.
    Cached(PathBuf),
    /// Adjacent pairs only (no sampling asked for).
    AdjacentOnly,
}

/// The allowed-collision matrix of one robot.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub disabled: Vec<Disabled>,
    pub origin: Origin,
    links: usize,
    /// `links x links`, true where a pair is not checked.
    off: Vec<bool>,
}

impl Matrix {
    /// Only adjacent links disabled.
    pub fn adjacent_only(body: &Body) -> Matrix {
        let mut m = Matrix::empty(body, Origin::AdjacentOnly);
        for (a, b) in link_pairs(body) {
            if body.adjacent(a, b) {
                m.disable(body, a, b, Reason::Adjacent);
            }
        }
        m
    }

    fn empty(body: &Body, origin: Origin) -> Matrix {
        let n = body.links.len();
        Matrix {
            disabled: Vec::new(),
            origin,
            links: n,
            off: vec![false; n * n],
        }
    }

    pub(super) fn disable(&mut self, body: &Body, a: usize, b: usize, reason: Reason) {
        if self.off[a * self.links + b] {
            return;
        }
        self.off[a * self.links + b] = true;
        self.off[b * self.links + a] = true;
        self.disabled.push(Disabled {
            link1: body.links[a].name.clone(),
            link2: body.links[b].name.clone(),
            reason,
        });
    }

    /// True when links `a` and `b` are not checked.
    pub fn disabled(&self, a: usize, b: usize) -> bool {
        self.off[a * self.links + b]
    }

    /// The SRDF's `<disable_collisions>` (adjacent pairs added); pairs
    /// naming links the robot does not have are refused.
    pub fn from_srdf(body: &Body, path: &Path) -> Result<Matrix, CollisionError> {
        let bad = |why: String| CollisionError::Srdf {
            path: path.display().to_string(),
            why,
        };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let pairs = read_srdf(&text).map_err(bad)?;
        let mut m = Matrix::adjacent_only(body);
        m.origin = Origin::Srdf(path.to_path_buf());
        for (l1, l2, reason) in pairs {
            let find = |l: &str| {
                body.link(l).ok_or_else(|| {
                    bad(format!(
                        "<disable_collisions> names link '{l}', which the robot does not have"
                    ))
                })
            };
            let (a, b) = (find(&l1)?, find(&l2)?);
            m.disable(body, a, b, reason);
        }
        Ok(m)
    }

    /// The matrix as an SRDF a MoveIt user can reuse.
    pub fn to_srdf(&self, robot: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
        let _ = writeln!(
            s,
            "<!-- Written by arm_ik ({}): the pairs of links its collision check leaves out. -->",
            match &self.origin {
                Origin::Srdf(p) => format!("read from {}", p.display()),
                _ => format!("sampled on {SAMPLES} random configurations"),
            }
        );
        let _ = writeln!(s, "<robot name=\"{}\">", xml_escape(robot));
        for d in &self.disabled {
            let _ = writeln!(
                s,
                "  <disable_collisions link1=\"{}\" link2=\"{}\" reason=\"{}\"/>",
                xml_escape(&d.link1),
                xml_escape(&d.link2),
                d.reason.name()
            );
        }
        s.push_str("</robot>\n");
        s
    }
}

/// Every unordered pair of distinct links.
pub(super) fn link_pairs(body: &Body) -> impl Iterator<Item = (usize, usize)> + '_ {
    let n = body.links.len();
    (0..n).flat_map(move |a| (a + 1..n).map(move |b| (a, b)))
}

/// `(link1, link2, reason)` of every `<disable_collisions>`.
pub(super) fn read_srdf(text: &str) -> Result<Vec<(String, String, Reason)>, String> {
    let doc = roxmltree::Document::parse(text).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for n in doc
        .descendants()
        .filter(|n| n.has_tag_name("disable_collisions"))
    {
        let attr = |a: &str| {
            n.attribute(a).map(str::to_owned).ok_or_else(|| {
                format!(
                    "a <disable_collisions> (line {}) has no {a}",
                    doc.text_pos_at(n.range().start).row
                )
            })
        };
        out.push((
            attr("link1")?,
            attr("link2")?,
            Reason::parse(n.attribute("reason").unwrap_or("User")),
        ));
    }
    Ok(out)
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srdf_pairs_are_read_with_their_reasons() {
        let pairs = read_srdf(
            r#"<robot name="r"><disable_collisions link1="a" link2="b" reason="Never"/>
               <disable_collisions link1="c" link2="d" reason="Because"/></robot>"#,
        )
        .unwrap();
        assert_eq!(pairs[0], ("a".into(), "b".into(), Reason::Never));
        assert_eq!(pairs[1].2, Reason::User);
        let e = read_srdf(r#"<robot><disable_collisions link1="a"/></robot>"#).unwrap_err();
        assert!(e.contains("link2"), "{e}");
    }
}
