//! The runner layer: assembles and drives a node core for the front-ends.
//!
//! It sits above `node` and `servo` (beside `replay`) and below the
//! front-ends (`cli`, `ros`, the binaries): the node core knows only the
//! [`ServoOutput`](crate::servo::ServoOutput) interface, and the choice of
//! hardware (virtual servos, or which protocol on which port, from the
//! node's parameters) is made here, at the edge that builds the node.

mod build;

pub use build::{BuiltNode, BuiltOutput, RunError, Warning, build_node, check_output, output};
