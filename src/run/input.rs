//! What a source of commands hands the run loop, shared by every source
//! (lines, bags, the built-in path) so none of them depends on another.

use super::lines::InputError;
use crate::node::Command;

/// What a source hands the loop.
#[derive(Debug)]
pub enum Input {
    Command(Command),
    /// Input that is not a command (counted, reported, skipped).
    Bad(InputError),
}

/// Whether a source can still give commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Poll {
    More,
    Ended,
}
