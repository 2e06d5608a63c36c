//! The sections a response's item references sit in (the `section` column
//! of `response_items`), shared by the reads and the writes.

/// Reference sections, in transcript order.
pub(crate) const HISTORY: i64 = 0;
pub(crate) const INPUT: i64 = 1;
pub(crate) const OUTPUT: i64 = 2;
