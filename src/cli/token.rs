//! `kbp token`: an ExecCredential for kubectl's exec plugin, like `aws eks get-token`.

use std::time::SystemTime;

use super::args::{Global, TokenArgs};
use super::common;
use crate::access::token;

pub(super) async fn run(a: TokenArgs, _g: &Global) -> u8 {
    let region = match a.region {
        Some(r) => r,
        None => match aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await.region() {
            Some(r) => r.to_string(),
            None => {
                return common::report(&anyhow::anyhow!(
                    "no region for the cluster\n  hint: pass --region, or set AWS_REGION / the profile's region"
                ))
            }
        },
    };
    match token::from_environment(&a.cluster, &region).await {
        Ok(t) => {
            println!("{}", token::exec_credential(&t, SystemTime::now()));
            0
        }
        Err(e) => match e.hint() {
            Some(hint) => common::report(&anyhow::anyhow!("{e}\n  hint: {hint}")),
            None => common::report(&e.into()),
        },
    }
}
