//! Sets `cfg(std_srvs)` when the sourced ROS 2 has the std_srvs package (a
//! `share/std_srvs` folder in an entry of `AMENT_PREFIX_PATH`), so
//! `ik_node` serves its std_srvs/Trigger services (`~/relax`, `~/home`,
//! ...) where r2r can generate their bindings. r2r's pre-generated
//! `doc-only` bindings lack std_srvs: without a ROS sourced, the services
//! are left out and `cargo check --features ros2,r2r/doc-only` checks the
//! rest of the node.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(std_srvs)");
    println!("cargo::rerun-if-env-changed=AMENT_PREFIX_PATH");
    println!("cargo::rerun-if-changed=build.rs");
    let has_std_srvs = env::var_os("AMENT_PREFIX_PATH").is_some_and(|paths| {
        env::split_paths(&paths).any(|prefix| Path::new(&prefix).join("share/std_srvs").is_dir())
    });
    if has_std_srvs {
        println!("cargo::rustc-cfg=std_srvs");
    }
}
