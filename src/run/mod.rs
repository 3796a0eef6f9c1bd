//! The runner layer: assembles and drives a node core for the front-ends.
//!
//! It sits above `node`, `servo` and `replay` and below the front-ends
//! (`cli`, `ros`, the binaries): the node core knows only the
//! [`ServoOutput`](crate::servo::ServoOutput) interface, and the choice of
//! hardware (virtual servos, or which protocol on which port, from the
//! node's parameters or a servo file) is made here, at the edge that builds
//! the node (`build`). Without ROS, [`driver::run`] is the loop: commands
//! from a [`Source`] (a built-in path, JSON lines in the format of
//! [`lines`], a target bag at its recorded timing), one tick per period on
//! a simulated or wall clock, a [`RunSummary`] at the end.

mod bag_source;
mod build;
mod delivery;
pub mod driver;
mod input;
mod leader_source;
pub mod lines;
mod source;
mod summary;

pub use bag_source::BagSource;
pub use build::{
    BuiltNode, BuiltOutput, RunError, Warning, build_node, build_on_port, build_paced_on_port,
    build_virtual, check_output, output,
};
pub use delivery::Delivery;
pub use driver::{Clock, Observer, RunOptions, run};
pub use input::{Input, Poll};
pub use leader_source::{LeaderError, LeaderSource, map_joints, moved_joints, open_leader};
pub use lines::{InputError, LINE_FORMAT, Line, READ_AHEAD, parse_line, spawn_reader};
pub use source::{LineSource, Source};
pub use summary::{Ending, MeanMax, Micros, PathSummary, Rejection, RunSummary, Steered, Verdict};
