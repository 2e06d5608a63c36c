//! What the SQLite and Postgres stores share for files and vector stores:
//! keyword terms, rank fusion, vector similarity and the wire objects built
//! from rows. Each backend runs its own SQL; these make their answers agree.

pub(crate) mod fuse;
pub(crate) mod paging;
pub(crate) mod records;
pub(crate) mod search;
pub(crate) mod terms;
pub(crate) mod vectors;
