//! Which pairs of links are never checked: the allowed-collision matrix.
//!
//! Links next to each other in the tree never are (they touch at their
//! joint by design). Beyond that, an SRDF's `<disable_collisions>` when one
//! is given (MoveIt's convention); otherwise the matrix is generated the
//! way the MoveIt Setup Assistant does it: random configurations are
//! sampled, and pairs in collision in (nearly) every sample, in the
//! default pose, or in none of them are disabled. Generating takes a
//! moment, so the result is kept as an SRDF in the cache folder
//! (`$XDG_CACHE_HOME/arm_ik`, else `~/.cache/arm_ik`) under a hash of the
//! robot's body, and read back next time.

use super::CollisionError;
use super::body::Body;
use super::world::World;
use crate::ik::Rng;
use crate::model::Chain;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Random configurations the generated matrix is sampled on (MoveIt's
/// default sampling density).
pub const SAMPLES: usize = 10_000;
/// A pair in collision in at least this share of the samples is "always"
/// in collision.
const ALWAYS: f64 = 0.95;
/// Bumped when the generation changes, so old cache files are not read.
const VERSION: u32 = 1;

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

    fn disable(&mut self, body: &Body, a: usize, b: usize, reason: Reason) {
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

    /// Generates the matrix by sampling, or reads it from the cache when
    /// an earlier run sampled the same body.
    pub fn generate(chain: &Chain, world: &mut World) -> Matrix {
        let key = fingerprint(chain, world.body());
        let cache = cache_dir().map(|d| d.join(format!("acm-{key:016x}.srdf")));
        if let Some(path) = &cache
            && let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pairs) = read_srdf(&text)
        {
            let body = world.body();
            let mut m = Matrix::adjacent_only(body);
            m.origin = Origin::Cached(path.clone());
            for (l1, l2, reason) in pairs {
                if let (Some(a), Some(b)) = (body.link(&l1), body.link(&l2)) {
                    m.disable(body, a, b, reason);
                }
            }
            return m;
        }
        let mut m = sample(chain, world);
        m.origin = Origin::Generated {
            cache: cache.clone(),
        };
        if let Some(path) = &cache {
            // Written whole under a temporary name, then renamed: two
            // processes generating at once never read half a file.
            let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
            let written = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&tmp, m.to_srdf(&chain.robot)))
                .and_then(|()| std::fs::rename(&tmp, path));
            if written.is_err() {
                let _ = std::fs::remove_file(&tmp);
                m.origin = Origin::Generated { cache: None };
            }
        }
        m
    }
}

/// Every unordered pair of distinct links.
fn link_pairs(body: &Body) -> impl Iterator<Item = (usize, usize)> + '_ {
    let n = body.links.len();
    (0..n).flat_map(move |a| (a + 1..n).map(move |b| (a, b)))
}

/// Samples [`SAMPLES`] configurations of the arm (the gripper too) and
/// disables what MoveIt's Setup Assistant would.
fn sample(chain: &Chain, world: &mut World) -> Matrix {
    let body = world.body().clone();
    let mut m = Matrix::adjacent_only(&body);
    let pairs: Vec<(usize, usize)> = link_pairs(&body)
        .filter(|&(a, b)| {
            !m.disabled(a, b) && !body.links[a].parts.is_empty() && !body.links[b].parts.is_empty()
        })
        .collect();
    let rest: Vec<f64> = default_pose(chain);
    for (k, hit) in world.link_contacts(&rest, &pairs).into_iter().enumerate() {
        if hit {
            m.disable(&body, pairs[k].0, pairs[k].1, Reason::Default);
        }
    }
    let mut counts = vec![0usize; pairs.len()];
    let mut rng = Rng::new(0x5eed_ac11);
    let ranges = ranges(chain);
    let mut q = vec![0.0; ranges.len()];
    for _ in 0..SAMPLES {
        for (v, (lo, hi)) in q.iter_mut().zip(&ranges) {
            *v = rng.range(*lo, *hi);
        }
        for (c, hit) in counts.iter_mut().zip(world.link_contacts(&q, &pairs)) {
            *c += usize::from(hit);
        }
    }
    for (k, &(a, b)) in pairs.iter().enumerate() {
        if counts[k] as f64 >= ALWAYS * SAMPLES as f64 {
            m.disable(&body, a, b, Reason::Always);
        } else if counts[k] == 0 {
            m.disable(&body, a, b, Reason::Never);
        }
    }
    m
}

/// The node's axes' sampling ranges: the chain's joints, then the
/// actuated joints off it.
fn ranges(chain: &Chain) -> Vec<(f64, f64)> {
    let mut r: Vec<(f64, f64)> = chain.joints.iter().map(|j| j.sample_range()).collect();
    for e in chain.extras.iter().filter(|e| e.actuated()) {
        let (lo, hi) = (e.limits.lower, e.limits.upper);
        r.push(if lo.is_finite() && hi.is_finite() {
            (lo, hi)
        } else {
            (-std::f64::consts::PI, std::f64::consts::PI)
        });
    }
    r
}

/// The default pose: zero where the limits allow it, else mid-range.
fn default_pose(chain: &Chain) -> Vec<f64> {
    let mut q: Vec<f64> = chain
        .joints
        .iter()
        .map(|j| {
            if j.limits.contains(0.0) {
                0.0
            } else {
                j.limits.mid()
            }
        })
        .collect();
    q.extend(
        chain
            .extras
            .iter()
            .filter(|e| e.actuated())
            .map(|e| e.rest()),
    );
    q
}

/// `(link1, link2, reason)` of every `<disable_collisions>`.
fn read_srdf(text: &str) -> Result<Vec<(String, String, Reason)>, String> {
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

/// The cache folder: `$XDG_CACHE_HOME/arm_ik`, else `~/.cache/arm_ik`.
pub fn cache_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty());
    let base = match xdg {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    Some(base.join("arm_ik"))
}

/// A hash (FNV-1a, stable across builds) of everything the sampling
/// depends on: the body's links and solids, the joints' ranges and the
/// generation's version.
fn fingerprint(chain: &Chain, body: &Body) -> u64 {
    let mut text = format!(
        "v{VERSION} {SAMPLES} {:?} {:?}",
        chain.body.links,
        ranges(chain)
    );
    for l in &body.links {
        for p in &l.parts {
            let _ = write!(text, "|{:?}{:?}", p.place, p.aabb);
        }
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
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
