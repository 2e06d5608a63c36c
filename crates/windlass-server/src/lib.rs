//! windlass-server
