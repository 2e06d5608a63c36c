//! windlass-providers
