//! Where a stack's state lives: a local file, or an object in S3. Written by users as a path or an
//! `s3://bucket/key` URL (`--state`, `KBP_STATE`), or as the blueprint's `[state]` table; recorded in saved
//! plans so `kbp apply PLAN` writes back where the plan was made.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::blueprint::Blueprint;

/// Where a stack's state lives; serialized with a `backend` tag (`local` or `s3`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "snake_case")]
pub enum Location {
    /// A file on this machine, locked with an OS file lock.
    Local {
        /// The state file; its lock is `<path>.lock` beside it.
        path: PathBuf,
    },
    /// An object in S3, shared by a team and CI.
    S3(S3Location),
}

/// An S3 object holding a stack's state (`s3://bucket/key`), with how to reach it; the lock is `<key>.lock`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct S3Location {
    /// The bucket holding the state object.
    pub bucket: String,
    /// The state object's key; [`default_key`] unless the user names one.
    pub key: String,
    /// The bucket's region; `None` takes the AWS configuration's (or the stack's, see [`Location::in_region`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// SSE-KMS with this key (ID, ARN or `alias/…`); SSE-S3 when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kms_key_id: Option<String>,
    /// A named AWS profile for the state bucket only (the stack's resources use the usual chain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// A role to assume for the state bucket only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role_arn: Option<String>,
}

/// The default local state file of a stack, relative to the working directory (kbp makes it relative to the
/// blueprint's directory when it has a blueprint: see `blueprint::load`).
pub fn default_local(stack: &str) -> Location {
    Location::Local { path: PathBuf::from(crate::blueprint::model::default_state_file(stack)) }
}

/// The default object key of a stack's state in its bucket.
pub fn default_key(stack: &str) -> String {
    format!("kbp/{stack}.state.json")
}

impl Location {
    /// Where the stack of `bp` keeps its state, as the blueprint says (its `[state]` table, else the default
    /// file).
    pub fn of_blueprint(bp: &Blueprint) -> Location {
        let st = &bp.state;
        match (st.backend.as_str(), &st.bucket) {
            ("s3", Some(bucket)) => Location::S3(S3Location {
                bucket: bucket.clone(),
                key: st.key.clone().unwrap_or_else(|| default_key(&bp.cluster.name)),
                region: Some(st.region.clone().unwrap_or_else(|| bp.cluster.region.clone())),
                kms_key_id: st.kms_key_id.clone(),
                profile: st.profile.clone(),
                role_arn: st.role_arn.clone(),
            }),
            _ => match &st.path {
                Some(path) => Location::Local { path: path.into() },
                None => default_local(&bp.cluster.name),
            },
        }
    }

    /// Fills in the bucket's region from the stack's when the location names none: a team's bucket usually
    /// lives beside its clusters, and the stack's region is known wherever a blueprint is.
    pub fn in_region(mut self, region: &str) -> Location {
        if let Location::S3(s3) = &mut self {
            if s3.region.is_none() {
                s3.region = Some(region.to_string());
            }
        }
        self
    }

    /// Whether the state lives in S3 (shared, locked with a lock object) rather than in a local file.
    pub fn is_remote(&self) -> bool {
        matches!(self, Location::S3(_))
    }

    /// Same place, whatever the settings used to reach it (a saved plan and `--state` may differ in region or
    /// profile spelling and still name one object).
    pub fn same_place(&self, other: &Location) -> bool {
        match (self, other) {
            (Location::Local { path: a }, Location::Local { path: b }) => same_file(a, b),
            (Location::S3(a), Location::S3(b)) => a.bucket == b.bucket && a.key == b.key,
            _ => false,
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Local { path } => write!(f, "{}", path.display()),
            Location::S3(s3) => write!(f, "s3://{}/{}", s3.bucket, s3.key),
        }
    }
}

impl FromStr for Location {
    type Err = String;

    /// A path, or `s3://BUCKET/KEY` with optional `?region=…&kms_key_id=…&profile=…&role_arn=…`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.is_empty() {
            return Err("an empty state location\n  hint: give a file path or s3://BUCKET/KEY".to_string());
        }
        let Some(rest) = text.strip_prefix("s3://") else {
            if let Some((scheme, _)) = text.split_once("://") {
                return Err(format!(
                    "`{text}` names an unknown state backend `{scheme}`\n  hint: use a file path or s3://BUCKET/KEY"
                ));
            }
            return Ok(Location::Local { path: PathBuf::from(text) });
        };
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (bucket, key) = path.split_once('/').unwrap_or((path, ""));
        if let Some(problem) = crate::blueprint::rules::aws::bucket_name_problem(bucket) {
            return Err(format!("`{text}`: {problem}\n  hint: the form is s3://BUCKET/KEY"));
        }
        if key.is_empty() || key.ends_with('/') {
            return Err(format!(
                "`{text}` names no object key\n  hint: the form is s3://BUCKET/KEY, such as s3://{bucket}/kbp/<cluster>.state.json"
            ));
        }
        let mut s3 = S3Location {
            bucket: bucket.to_string(),
            key: key.to_string(),
            region: None,
            kms_key_id: None,
            profile: None,
            role_arn: None,
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = urlencoding::decode(value).map_err(|e| format!("`{text}`: {e}"))?.into_owned();
            if value.is_empty() {
                return Err(format!("`{text}`: `{name}` has no value"));
            }
            let slot = match name {
                "region" => &mut s3.region,
                "kms_key_id" => &mut s3.kms_key_id,
                "profile" => &mut s3.profile,
                "role_arn" => &mut s3.role_arn,
                other => {
                    return Err(format!(
                        "`{text}`: unknown setting `{other}`\n  hint: the settings are region, kms_key_id, profile and role_arn"
                    ))
                }
            };
            *slot = Some(value);
        }
        Ok(Location::S3(s3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_paths_and_s3_urls_with_settings() {
        assert_eq!(
            "state/x.json".parse::<Location>().unwrap(),
            Location::Local { path: PathBuf::from("state/x.json") }
        );
        let Location::S3(s3) =
            "s3://acme-state/teams/a/kbp.json?region=eu-west-1&kms_key_id=alias%2Fkbp".parse().unwrap()
        else {
            panic!("expected s3")
        };
        assert_eq!(s3.bucket, "acme-state");
        assert_eq!(s3.key, "teams/a/kbp.json");
        assert_eq!(s3.region.as_deref(), Some("eu-west-1"));
        assert_eq!(s3.kms_key_id.as_deref(), Some("alias/kbp"));
        assert_eq!(s3.profile, None);
    }

    #[test]
    fn refuses_malformed_urls_with_the_form_in_the_hint() {
        for (text, says) in [
            ("s3://acme-state", "no object key"),
            ("s3://acme-state/dir/", "no object key"),
            ("s3://Acme/k", "lowercase"),
            ("s3://ab/k", "3 to 63"),
            ("s3://-ab/k", "begin and end"),
            ("s3://a..b/k", "adjacent dots"),
            ("s3://acme/k?colour=red", "unknown setting `colour`"),
            ("s3://acme/k?region=", "has no value"),
            ("gs://acme/k", "unknown state backend `gs`"),
            ("", "empty"),
        ] {
            let e = text.parse::<Location>().unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn region_is_filled_only_where_missing_and_display_is_the_url() {
        let loc: Location = "s3://acme-state/k.json?region=eu-west-1".parse().unwrap();
        let Location::S3(s3) = loc.clone().in_region("us-west-2") else { panic!() };
        assert_eq!(s3.region.as_deref(), Some("eu-west-1"));
        let Location::S3(s3) = "s3://acme-state/k.json".parse::<Location>().unwrap().in_region("us-west-2") else {
            panic!()
        };
        assert_eq!(s3.region.as_deref(), Some("us-west-2"));
        assert_eq!(loc.to_string(), "s3://acme-state/k.json");
        assert!(loc.same_place(&"s3://acme-state/k.json?profile=ci".parse().unwrap()));
        assert!(!loc.same_place(&"s3://acme-state/other.json".parse().unwrap()));
    }

    #[test]
    fn round_trips_through_json_for_saved_plans() {
        let loc: Location = "s3://acme-state/k.json?region=eu-west-1".parse().unwrap();
        let text = serde_json::to_string(&loc).unwrap();
        assert!(text.contains(r#""backend":"s3""#), "{text}");
        assert_eq!(serde_json::from_str::<Location>(&text).unwrap(), loc);
        let local = default_local("demo");
        assert_eq!(serde_json::from_str::<Location>(&serde_json::to_string(&local).unwrap()).unwrap(), local);
    }
}
