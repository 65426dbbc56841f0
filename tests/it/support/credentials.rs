//! A machine without AWS credentials: no credential variables, no profile files, no instance metadata, and an
//! endpoint nothing listens on, so a call that is made anyway fails instead of reaching AWS.

use std::process::Command;

/// `cmd` (kbp) with every `AWS_*` variable of the test's environment removed and the standard chain given
/// nothing to find.
pub(crate) fn without_aws_credentials(cmd: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("AWS_") {
            cmd.env_remove(&key);
        }
    }
    cmd.env("AWS_CONFIG_FILE", "/nonexistent")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
        .env("AWS_REGION", "us-west-2")
}
