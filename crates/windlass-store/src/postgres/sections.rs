//! The sections a response's item references sit in (the `section` column
//! of `response_items`), shared by the reads and the writes.

/// Reference sections, in transcript order.
pub(crate) const HISTORY: i16 = 0;
pub(crate) const INPUT: i16 = 1;
pub(crate) const OUTPUT: i16 = 2;
