//! Test harness library.
