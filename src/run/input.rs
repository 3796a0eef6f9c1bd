//! What a source of commands hands the loop each tick: commands, or input
//! that was not one, and whether more can come. Apart from the sources so
//! that each source's file depends on it and not on the others.

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
