//! The schema of where the stack's state lives: `[state]`.

use super::Presence::{Default, Optional};
use super::{field, str_rule, Field, Ty};
use crate::blueprint::rules::aws;

pub(crate) const BACKENDS: &[&str] = &["local", "s3"];

pub(super) const STATE: &[Field] = &[
    field(
        "backend",
        Ty::Enum(BACKENDS),
        Default("\"local\""),
        "Where state lives: `local` (a file beside you) or `s3` (shared by a team and CI, locked with a lock object). `--state` and `KBP_STATE` override the whole table.",
    ),
    field(
        "path",
        Ty::Str(None),
        Optional,
        "`local` only: the state file, relative to the blueprint file (default `.kbp/<cluster.name>.state.json`).",
    ),
    field("bucket", str_rule("an S3 bucket name", aws::bucket_name), Optional, "`s3` only, required there: the bucket holding state."),
    field(
        "key",
        str_rule("an S3 object key", aws::state_key),
        Optional,
        "`s3` only: the state object's key (default `kbp/<cluster.name>.state.json`); the lock is `<key>.lock`.",
    ),
    field(
        "region",
        str_rule("an AWS region name", aws::region),
        Optional,
        "`s3` only: the bucket's region (default `cluster.region`).",
    ),
    field(
        "kms_key_id",
        Ty::Str(None),
        Optional,
        "`s3` only: encrypt state with SSE-KMS under this key (ID, ARN or `alias/…`); SSE-S3 when absent.",
    ),
    field("profile", Ty::Str(None), Optional, "`s3` only: an AWS profile for the state bucket (the stack itself uses the usual credential chain)."),
    field("role_arn", str_rule("an IAM role ARN", aws::role_arn), Optional, "`s3` only: a role to assume for the state bucket."),
];
