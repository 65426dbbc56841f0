//! The arguments of `kbp state …` and `kbp force-unlock`: the commands that read and edit a stack's state
//! without planning it.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::{parse_duration, parse_location};
use crate::state::Location;

#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// List the addresses in state, with kind and ID.
    List(StateQuery),
    /// Show one resource's ID, attributes, outputs and dependencies.
    Show {
        /// Such as `vpc.main` or `subnet.private["us-west-2a"]`.
        address: String,
        #[command(flatten)]
        query: StateQuery,
    },
    /// Print the whole state document (JSON) on stdout.
    Pull(StateQuery),
    /// Replace the state with a file; refused for another stack or lineage, an older serial, or a different
    /// document at the same serial, unless --force.
    Push {
        /// A state file, as `kbp state pull` prints it.
        file: PathBuf,
        /// Replace whatever is there.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        query: StateQuery,
    },
    /// Forget resources: kbp stops managing them, and leaves what they name in AWS as it is.
    Rm {
        /// Addresses such as `vpc.main` or `subnet.private["us-west-2a"]`.
        #[arg(required = true)]
        addresses: Vec<String>,
        #[command(flatten)]
        query: StateQuery,
    },
    /// Rename a resource's address in state (after renaming it in the blueprint), so it is not replaced.
    Mv {
        from: String,
        to: String,
        #[command(flatten)]
        query: StateQuery,
    },
    /// Move the state to another location (local file to S3 and back), both locked; serial and lineage are
    /// kept, and the old location is left pointing to the new one.
    Migrate {
        /// The new location: a file path or s3://BUCKET/KEY[?region=…].
        #[arg(long, value_name = "LOCATION", value_parser = parse_location)]
        to: Location,
        /// Replace a state already at the new location.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        query: StateQuery,
    },
}

#[derive(Debug, Args)]
pub struct StateQuery {
    /// Find the state of this blueprint's stack (else `--state`, else the only state in `.kbp/`).
    #[arg(short = 'f', long = "blueprint", value_name = "FILE")]
    pub blueprint: Option<PathBuf>,
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Where state lives: a file path or s3://BUCKET/KEY[?region=…] (overrides the blueprint's state table).
    #[arg(long, value_name = "LOCATION", env = "KBP_STATE", value_parser = parse_location)]
    pub state: Option<Location>,
    /// How long to wait for another run holding the state lock (commands that change state).
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    pub lock_timeout: Duration,
    #[arg(long)]
    pub json: bool,
}

/// `kbp force-unlock LOCK_ID`: for a lock left by a run that was killed (a local lock never needs it: the OS
/// releases it with its process).
#[derive(Debug, Args)]
pub struct ForceUnlockArgs {
    /// The lock ID, as the error of the blocked run shows it.
    pub lock_id: String,
    #[command(flatten)]
    pub query: StateQuery,
    /// Remove the lock without asking (required when stdin is not a terminal).
    #[arg(long)]
    pub auto_approve: bool,
}
