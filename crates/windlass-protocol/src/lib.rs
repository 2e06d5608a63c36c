//! windlass-protocol
