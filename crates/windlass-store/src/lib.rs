//! windlass-store
