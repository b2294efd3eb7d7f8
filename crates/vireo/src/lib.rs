//! Vireo.
