//! windlass
