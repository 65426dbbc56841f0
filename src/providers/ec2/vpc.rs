//! `aws_vpc`: the cluster's VPC, its DNS settings and the defaults AWS makes with it (the default security group
//! and the main route table, which other resources reference as outputs).

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_ec2::types::{
    AttributeBooleanValue, Filter, ResourceType, RouteTable, SecurityGroup, Vpc as AwsVpc, VpcAttributeName, VpcState,
};
use serde_json::{json, Value};

use super::describe;
use super::wait::{self, Budget, Poll};
use super::{arn, ids, matched, missing, object, remove_when_unused, send, stack_search, tagged_kind, tagging};
use crate::graph::{kinds, Attrs};
use crate::providers::send::send_unretried;
use crate::providers::tagged::{found, Search};
use crate::providers::Found;
use crate::providers::{spec, Applied, Context, Descriptor, Desired, Observed, Provider, ProviderError, Result};

pub(crate) struct Vpc;

/// The attributes the compiler emits, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::vpc::Vpc;

const NOT_FOUND: &str = "InvalidVpcID.NotFound";

#[async_trait]
impl Provider for Vpc {
    fn descriptor(&self) -> Descriptor {
        tagged_kind(kinds::VPC).force_new(&["cidr_block"]).imported_by("its ID, `vpc-…`")
    }

    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let ours = describe::ours::<AwsVpc>(cx, search).await?;
        let name = |v: &AwsVpc| stack_search::name(v.tags());
        Ok(ours
            .iter()
            .map(|v| found(kinds::VPC, v.vpc_id().unwrap_or_default(), name(v), String::new(), Vec::new()))
            .collect())
    }

    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(vpc) = describe::one::<AwsVpc>(cx, id, &[]).await? else { return Ok(None) };
        let defaults = Defaults::look_up(cx, id).await?;
        Ok(Some(observe(cx, &vpc, Dns::read(cx, id).await?, &defaults)))
    }

    /// The VPCs and their defaults in one call each; the DNS settings are one call per VPC and setting, as
    /// DescribeVpcAttribute takes one of each.
    async fn read_many(&self, cx: &Context, items: &[(String, Attrs)]) -> Result<Vec<Option<Observed>>> {
        let found = describe::with_ids::<AwsVpc>(cx, &ids(items)).await?;
        let live: Vec<String> = found.iter().filter_map(|v| v.vpc_id().map(str::to_string)).collect();
        let mut defaults = Defaults::of(cx, &live).await?;
        let mut out = Vec::new();
        for vpc in matched(items, &found, |v| v.vpc_id()) {
            out.push(match vpc {
                Some(vpc) => {
                    let id = vpc.vpc_id().unwrap_or_default();
                    let defaults = defaults.remove(id).unwrap_or_default();
                    Some(observe(cx, vpc, Dns::read(cx, id).await?, &defaults))
                }
                None => None,
            });
        }
        Ok(out)
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        describe::find::<AwsVpc>(cx, desired).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(kinds::VPC, desired.attrs)?;
        let tags = tagging::spec(ResourceType::Vpc, desired);
        let created = send_unretried(cx, "ec2:CreateVpc", &[], || {
            let call = cx.ec2().create_vpc().cidr_block(&s.cidr_block).tag_specifications(tags.clone());
            call.customize().config_override(super::once()).send()
        })
        .await?;
        let id = created.vpc().and_then(|v| v.vpc_id()).ok_or_else(|| missing("ec2:CreateVpc", "VPC ID"))?;
        let vpc =
            wait::until("ec2:DescribeVpcs", &format!("VPC {id} to become available"), Budget::minutes(5), || async {
                Ok(match describe::one::<AwsVpc>(cx, id, &[NOT_FOUND]).await? {
                    Some(v) if v.state() == Some(&VpcState::Available) => Poll::Done(v),
                    Some(v) => Poll::Pending(v.state().map_or("no state", |s| s.as_str()).to_string()),
                    None => Poll::Pending("not visible yet".to_string()),
                })
            })
            .await?;
        // A new VPC has DNS support on and DNS hostnames off.
        Dns { support: true, hostnames: false }.change_to(cx, id, Dns::desired(&s)).await?;
        // The default security group and main route table are made with the VPC but may show up a moment later.
        let defaults = wait::until(
            "ec2:DescribeRouteTables",
            &format!("the defaults of VPC {id}"),
            Budget::minutes(2),
            || async {
                let d = Defaults::look_up(cx, id).await?;
                Ok(if d.security_group_id.is_some() && d.main_route_table_id.is_some() {
                    Poll::Done(d)
                } else {
                    Poll::Pending("default security group or main route table not visible yet".to_string())
                })
            },
        )
        .await?;
        Ok(Applied { id: id.to_string(), outputs: outputs(cx, &vpc, &defaults) })
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(kinds::VPC, desired.attrs)?;
        tagging::reconcile(cx, id, desired).await?;
        Dns::read(cx, id).await?.change_to(cx, id, Dns::desired(&s)).await?;
        let vpc = describe::one::<AwsVpc>(cx, id, &[]).await?.ok_or_else(|| {
            ProviderError::new("ec2:DescribeVpcs", NOT_FOUND, format!("VPC {id} disappeared during the update"))
                .with_hint("someone deleted it outside kbp; run kbp again to recreate it")
        })?;
        let defaults = Defaults::look_up(cx, id).await?;
        Ok(Applied { id: id.to_string(), outputs: outputs(cx, &vpc, &defaults) })
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let (op, what) = ("ec2:DeleteVpc", format!("VPC {id}"));
        remove_when_unused(cx, op, &what, &[], Budget::minutes(5), || cx.ec2().delete_vpc().vpc_id(id).send()).await
    }
}

fn observe(cx: &Context, vpc: &AwsVpc, dns: Dns, defaults: &Defaults) -> Observed {
    let attrs = json!({
        "cidr_block": vpc.cidr_block(),
        "enable_dns_support": dns.support,
        "enable_dns_hostnames": dns.hostnames,
        "tags": tagging::attr(vpc.tags()),
    });
    Observed { attrs: object(attrs), outputs: outputs(cx, vpc, defaults) }
}

/// The VPC's two DNS attributes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Dns {
    support: bool,
    hostnames: bool,
}

impl Dns {
    fn desired(s: &Spec) -> Dns {
        Dns { support: s.enable_dns_support, hostnames: s.enable_dns_hostnames }
    }

    async fn read(cx: &Context, id: &str) -> Result<Dns> {
        Ok(Dns {
            support: read_attribute(cx, id, VpcAttributeName::EnableDnsSupport).await?,
            hostnames: read_attribute(cx, id, VpcAttributeName::EnableDnsHostnames).await?,
        })
    }

    /// Applies `want` over `self` (the current settings). AWS takes one attribute per ModifyVpcAttribute call
    /// and refuses DNS hostnames without DNS support, so hostnames go off first and on last.
    async fn change_to(self, cx: &Context, id: &str, want: Dns) -> Result<()> {
        if self.hostnames && !want.hostnames {
            modify_attribute(cx, id, VpcAttributeName::EnableDnsHostnames, false).await?;
        }
        if self.support != want.support {
            modify_attribute(cx, id, VpcAttributeName::EnableDnsSupport, want.support).await?;
        }
        if !self.hostnames && want.hostnames {
            modify_attribute(cx, id, VpcAttributeName::EnableDnsHostnames, true).await?;
        }
        Ok(())
    }
}

async fn read_attribute(cx: &Context, id: &str, name: VpcAttributeName) -> Result<bool> {
    let resp = send(cx, "ec2:DescribeVpcAttribute", &[NOT_FOUND], || {
        cx.ec2().describe_vpc_attribute().vpc_id(id).attribute(name.clone()).send()
    })
    .await?;
    let value = match name {
        VpcAttributeName::EnableDnsHostnames => resp.enable_dns_hostnames(),
        _ => resp.enable_dns_support(),
    };
    value.and_then(|v| v.value()).ok_or_else(|| missing("ec2:DescribeVpcAttribute", name.as_str()))
}

async fn modify_attribute(cx: &Context, id: &str, name: VpcAttributeName, on: bool) -> Result<()> {
    let value = AttributeBooleanValue::builder().value(on).build();
    send(cx, "ec2:ModifyVpcAttribute", &[NOT_FOUND], || {
        let call = cx.ec2().modify_vpc_attribute().vpc_id(id);
        match name {
            VpcAttributeName::EnableDnsHostnames => call.enable_dns_hostnames(value.clone()),
            _ => call.enable_dns_support(value.clone()),
        }
        .send()
    })
    .await?;
    Ok(())
}

/// What AWS makes along with a VPC and other resources reference.
#[derive(Default)]
struct Defaults {
    security_group_id: Option<String>,
    main_route_table_id: Option<String>,
}

impl Defaults {
    async fn look_up(cx: &Context, vpc_id: &str) -> Result<Defaults> {
        Ok(Self::of(cx, &[vpc_id.to_string()]).await?.remove(vpc_id).unwrap_or_default())
    }

    /// The defaults of each of `vpcs`, by VPC ID: one call for the groups and one for the tables.
    async fn of(cx: &Context, vpcs: &[String]) -> Result<HashMap<String, Defaults>> {
        let (default, main) = (
            [Filter::builder().name("group-name").values("default").build()],
            [Filter::builder().name("association.main").values("true").build()],
        );
        let (groups, tables) = futures::try_join!(
            describe::by_filter::<SecurityGroup>(cx, "vpc-id", vpcs, &default),
            describe::by_filter::<RouteTable>(cx, "vpc-id", vpcs, &main),
        )?;
        let mut out: HashMap<String, Defaults> = HashMap::new();
        for g in &groups {
            if let (Some(vpc), Some(id)) = (g.vpc_id(), g.group_id()) {
                out.entry(vpc.to_string()).or_default().security_group_id.get_or_insert_with(|| id.to_string());
            }
        }
        for t in &tables {
            if let (Some(vpc), Some(id)) = (t.vpc_id(), t.route_table_id()) {
                out.entry(vpc.to_string()).or_default().main_route_table_id.get_or_insert_with(|| id.to_string());
            }
        }
        Ok(out)
    }
}

fn outputs(cx: &Context, vpc: &AwsVpc, defaults: &Defaults) -> Attrs {
    let id = vpc.vpc_id().unwrap_or_default();
    let owner = vpc.owner_id().unwrap_or_default();
    let mut out = object(json!({
        "id": id,
        "arn": arn(&cx.region, owner, &format!("vpc/{id}")),
        "owner_id": owner,
    }));
    let optional = [
        ("default_security_group_id", &defaults.security_group_id),
        ("main_route_table_id", &defaults.main_route_table_id),
    ];
    for (key, value) in optional {
        if let Some(v) = value {
            out.insert(key.to_string(), Value::String(v.clone()));
        }
    }
    out
}
