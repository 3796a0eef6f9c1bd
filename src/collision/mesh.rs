//! Mesh files of `<collision>` elements: where a URI points on this
//! machine, and the convex hull of what the file holds.
//!
//! `package://PKG/rest` is looked up the ROS 2 way, in the share folder of
//! each prefix of `AMENT_PREFIX_PATH` that registers `PKG` in its ament
//! index, and in each folder of the mesh search path as `DIR/PKG/rest` (a
//! colcon-less install, a pip data package's `share`). `file://` URIs and
//! absolute paths are taken as they are, relative ones from the URDF's
//! folder. The hull is computed once per file and scale in a process and
//! kept: a live reload of the workspace, a second node core or the allowed
//! collision matrix's sampling reuse it.

use super::CollisionError;
use super::hull::Hull;
use super::simplify::{TOLERANCE, simplify};
use parry3d_f64::math::Point;
use parry3d_f64::shape::ConvexPolyhedron;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Where `uri` is on this machine: the first existing candidate, or an
/// error listing where it was looked for.
pub fn resolve(
    uri: &str,
    folder: Option<&Path>,
    mesh_path: &[PathBuf],
) -> Result<PathBuf, CollisionError> {
    let candidates = candidates(uri, folder, mesh_path, &ament_prefixes());
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| CollisionError::MeshNotFound {
            uri: uri.to_owned(),
            looked: candidates.iter().map(|p| p.display().to_string()).collect(),
        })
}

/// The prefixes of `AMENT_PREFIX_PATH`, as a sourced ROS 2 shell has them.
fn ament_prefixes() -> Vec<PathBuf> {
    std::env::var_os("AMENT_PREFIX_PATH")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default()
}

/// Every place `uri` may be, in order of preference.
fn candidates(
    uri: &str,
    folder: Option<&Path>,
    mesh_path: &[PathBuf],
    prefixes: &[PathBuf],
) -> Vec<PathBuf> {
    if let Some(rest) = uri.strip_prefix("package://") {
        let (package, rel) = rest.split_once('/').unwrap_or((rest, ""));
        let registered = |p: &&PathBuf| {
            p.join("share/ament_index/resource_index/packages")
                .join(package)
                .exists()
        };
        let ament = prefixes
            .iter()
            .filter(registered)
            .map(|p| p.join("share").join(package).join(rel));
        let searched = mesh_path.iter().map(|d| d.join(package).join(rel));
        return ament.chain(searched).collect();
    }
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    let path = Path::new(path);
    if path.is_absolute() {
        return vec![path.to_path_buf()];
    }
    let mut out: Vec<PathBuf> = folder.map(|f| f.join(path)).into_iter().collect();
    out.extend(mesh_path.iter().map(|d| d.join(path)));
    out.push(path.to_path_buf());
    out
}

type HullKey = (PathBuf, [u64; 3]);
type Cache = Mutex<HashMap<HullKey, Arc<Hull>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The convex hull of the mesh file at `path` (STL, DAE or OBJ) scaled per
/// axis, with fewer vertices within a millimetre (see [`simplify`]),
/// computed on first use and kept for the process.
pub fn hull(path: &Path, scale: [f64; 3]) -> Result<Arc<Hull>, CollisionError> {
    let key = (path.to_path_buf(), scale.map(f64::to_bits));
    if let Some(h) = cache().lock().map_err(|_| poisoned(path))?.get(&key) {
        return Ok(h.clone());
    }
    let bad = |why: String| CollisionError::BadMesh {
        path: path.display().to_string(),
        why,
    };
    let scene = mesh_loader::Loader::default()
        .load(path)
        .map_err(|e| bad(e.to_string()))?;
    let points: Vec<Point<f64>> = scene
        .meshes
        .iter()
        .flat_map(|m| &m.vertices)
        .map(|v| {
            Point::new(
                f64::from(v[0]) * scale[0],
                f64::from(v[1]) * scale[1],
                f64::from(v[2]) * scale[2],
            )
        })
        .filter(|p| p.coords.iter().all(|c| c.is_finite()))
        .collect();
    if points.len() < 4 {
        return Err(bad(format!("{} usable vertices", points.len())));
    }
    let hull = ConvexPolyhedron::from_convex_hull(&points)
        .ok_or_else(|| bad("its vertices span no volume (flat or degenerate)".into()))?;
    let (hull, round) = simplify(hull, TOLERANCE);
    let hull = Arc::new(Hull::new(hull, round));
    cache()
        .lock()
        .map_err(|_| poisoned(path))?
        .insert(key, hull.clone());
    Ok(hull)
}

fn poisoned(path: &Path) -> CollisionError {
    CollisionError::BadMesh {
        path: path.display().to_string(),
        why: "the hull cache was poisoned by a panic".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_uris_look_in_ament_shares_and_the_mesh_path() {
        let dir = std::env::temp_dir().join(format!("arm_ik-mesh-{}", std::process::id()));
        let prefix = dir.join("install");
        std::fs::create_dir_all(prefix.join("share/ament_index/resource_index/packages")).unwrap();
        std::fs::write(
            prefix.join("share/ament_index/resource_index/packages/arm_desc"),
            "",
        )
        .unwrap();
        let c = candidates(
            "package://arm_desc/meshes/a.stl",
            None,
            &[dir.join("share")],
            &[prefix.clone(), dir.join("other")],
        );
        assert_eq!(
            c,
            [
                prefix.join("share/arm_desc/meshes/a.stl"),
                dir.join("share/arm_desc/meshes/a.stl")
            ]
        );
        let rel = candidates("meshes/b.stl", Some(Path::new("/robot")), &[], &[]);
        assert_eq!(rel[0], Path::new("/robot/meshes/b.stl"));
        assert_eq!(
            candidates("file:///m/c.stl", None, &[], &[]),
            [PathBuf::from("/m/c.stl")]
        );
        let e = resolve("package://nope/x.stl", None, std::slice::from_ref(&dir)).unwrap_err();
        assert!(e.to_string().contains("nope/x.stl"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_ascii_stl_becomes_its_scaled_hull() {
        let dir = std::env::temp_dir().join(format!("arm_ik-stl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tetra.stl");
        let facet = |a: [f64; 3], b: [f64; 3], c: [f64; 3]| {
            format!(
                "facet normal 0 0 0\nouter loop\nvertex {} {} {}\nvertex {} {} {}\nvertex {} {} {}\nendloop\nendfacet\n",
                a[0], a[1], a[2], b[0], b[1], b[2], c[0], c[1], c[2]
            )
        };
        let (o, x, y, z) = ([0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
        let text = format!(
            "solid t\n{}{}{}{}endsolid t\n",
            facet(o, y, x),
            facet(o, x, z),
            facet(o, z, y),
            facet(x, y, z)
        );
        std::fs::write(&path, text).unwrap();
        let h = hull(&path, [0.5, 0.5, 2.0]).unwrap();
        let top = h.points().iter().map(|p| p.z).fold(0.0, f64::max);
        assert_eq!((h.points().len(), top), (4, 2.0));
        assert!(Arc::ptr_eq(&h, &hull(&path, [0.5, 0.5, 2.0]).unwrap()));
        std::fs::write(
            dir.join("flat.stl"),
            format!("solid f\n{}endsolid f\n", facet(o, x, y)),
        )
        .unwrap();
        let e = hull(&dir.join("flat.stl"), [1.0; 3]).unwrap_err();
        assert!(e.to_string().contains("flat.stl"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
