//! Mangled blueprints must produce diagnostics, never a panic.
