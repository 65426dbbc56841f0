//! kbp compiles a blueprint into a resource graph, diffs it against state and applies the difference.
//! One module per pipeline stage; data flows one way:
//!
//! blueprint → graph → plan → exec → providers → state, with ui rendering the events of every stage.

// The futures of a stack's search by tags nest every kind's: laying them out takes more than the default depth.
#![recursion_limit = "256"]

pub mod access;
pub mod aws;
pub mod backoff;
pub mod blueprint;
pub mod cache_dir;
pub mod catalog;
pub mod cli;
pub mod color;
pub mod diag;
pub mod events;
pub mod exec;
pub mod graph;
pub mod helm;
pub mod kubernetes;
pub mod plan;
pub mod private_file;
pub mod providers;
pub mod simulate;
pub mod state;
pub mod teardown;
pub mod ui;
