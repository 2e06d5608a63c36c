//! windlass-testkit
