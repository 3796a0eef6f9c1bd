//! What the bus-servo protocols (Feetech, Dynamixel) share: half-duplex
//! buses of servos with ids, instruction packets checked the same way,
//! status packets found in a noisy byte stream, and a session that asks
//! one servo at a time while opening and streams to all of them after.
//!
//! - [`encode`]: why an instruction packet cannot be built, and the checks
//!   of ids, register blocks and sync-write blocks both codecs make;
//! - [`rx`]: the receive buffer both status readers search for headers;
//! - [`servos`]: the status-reader interface (a protocol supplies its
//!   decoder, the buffer handling and replies come with it), the servos of
//!   one bus as a session sees them (who answered when, who is awaited)
//!   and the request/reply exchange;
//! - [`ping`]: who answers a broadcast (finding the servos).

pub mod encode;
pub mod ping;
pub mod rx;
pub mod servos;

pub use encode::{BROADCAST_ID, EncodeError, MAX_ID, ValueError};
pub use rx::RxBuffer;
pub use servos::{
    BusStatus, REPLIES_MISSING, Reply, Servos, StatusStream, decode_all, for_each_servo,
};
