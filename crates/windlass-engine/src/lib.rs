//! windlass-engine
