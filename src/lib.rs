//! arm_ik: inverse kinematics for hobby robot arms, from URDF to servo.
//!
//! Data flows one way: a target ([`ik::Target`]) is solved on a
//! [`model::Chain`] by one of the [`ik`] solvers, the result is limited, then
//! published or streamed.
//!
//! Layers, lowest first; a module imports only from layers below it:
//! [`model`] → [`ik`] → `collision` → `plot`, `servo`, `bag`, `bench` → `node` →
//! `replay` → `run`
//! (assembles a node on the output its parameters choose, and runs it
//! without ROS from any command source, bags read as replay reads them) →
//! `ros`, the CLI and the binaries.
//!
//! `tests/layers.rs` reads the paragraph above and fails when a module
//! imports from a layer above its own, or when the submodules of one
//! module import each other in a cycle.
//!
//! # Features
//!
//! - `app` (default): every layer above [`ik`], the `arm_ik` command line
//!   and what they need (serde, SQLite, MCAP, serial ports, clap).
//! - `compare-k`: `arm_ik bench --compare k`, the `k` crate's Jacobian solver
//!   on the same targets.
//! - `ros2`: the ROS 2 node `ik_node` and the `ros` module (r2r).
//!
//! Without default features the crate is the kinematics alone, [`model`]
//! and [`ik`], built on nalgebra, urdf-rs and thiserror:
//!
//! ```toml
//! arm_ik = { version = "0.1", default-features = false }
//! ```
//!
//! # Example
//!
//! A URDF in, a chain out, a solver bound to it, a pose solved:
//!
//! ```
//! use arm_ik::ik::{Common, SolverConfig, SolverKind, Solver, Target};
//! use arm_ik::model::Chain;
//! use nalgebra::Vector3;
//!
//! // Two links of 20 cm on a turntable: yaw, shoulder, elbow.
//! let urdf = r#"
//! <robot name="two_link">
//!   <link name="base"/> <link name="turntable"/> <link name="upper"/> <link name="fore"/>
//!   <joint name="yaw" type="revolute">
//!     <parent link="base"/> <child link="turntable"/>
//!     <axis xyz="0 0 1"/> <limit lower="-3" upper="3" effort="1" velocity="1"/>
//!   </joint>
//!   <joint name="shoulder" type="revolute">
//!     <parent link="turntable"/> <child link="upper"/> <origin xyz="0 0 0.05"/>
//!     <axis xyz="0 1 0"/> <limit lower="-2" upper="2" effort="1" velocity="1"/>
//!   </joint>
//!   <joint name="elbow" type="revolute">
//!     <parent link="upper"/> <child link="fore"/> <origin xyz="0 0 0.2"/>
//!     <axis xyz="0 1 0"/> <limit lower="-2.5" upper="2.5" effort="1" velocity="1"/>
//!   </joint>
//!   <link name="tip"/>
//!   <joint name="tool" type="fixed">
//!     <parent link="fore"/> <child link="tip"/> <origin xyz="0 0 0.2"/>
//!   </joint>
//! </robot>"#;
//! let chain = Chain::from_urdf_str(urdf, Some("base"), Some("tip"))?;
//! assert_eq!(chain.joint_names(), ["yaw", "shoulder", "elbow"]);
//!
//! // Three joints reach a position, not an orientation.
//! let config = SolverConfig::default_for(SolverKind::Jacobian);
//! let mut solver = Solver::new(&chain, config, Common::default())?;
//! let target = Target::position(Vector3::new(0.15, 0.1, 0.2));
//! let solution = solver.solve(&target, &chain.mid_configuration())?;
//!
//! assert!(solution.status.is_converged());
//! assert!(chain.within_limits(&solution.q));
//! let reached = chain.fk(&solution.q).translation.vector;
//! assert!((reached - target.position).norm() < 1e-5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "app")]
pub mod bag;
#[cfg(feature = "app")]
pub mod bench;
#[cfg(feature = "app")]
pub mod collision;
pub mod ik;
pub mod model;
#[cfg(feature = "app")]
pub mod node;
#[cfg(feature = "app")]
pub mod plot;
#[cfg(feature = "app")]
pub mod replay;
#[cfg(feature = "ros2")]
pub mod ros;
#[cfg(feature = "app")]
pub mod run;
#[cfg(feature = "app")]
pub mod servo;
