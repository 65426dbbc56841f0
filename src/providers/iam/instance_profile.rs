//! `aws_iam_instance_profile`: the container that hands a role to EC2 instances (Karpenter's nodes). The ID is
//! the profile name. A profile holds at most one role.
//!
//! Karpenter makes one per EC2NodeClass, holding the node role; teardown finds those ([`Provider::discover`])
//! by the node role and by the cluster's tags on them.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Value};

use super::common::{self, absent_if_gone, explain_taken, object, remove, send, Entity, DELETE_CONFLICT};
use super::tagging::{self, Tagged};
use crate::graph::{kinds, Attrs};
use crate::providers::preflight::{quick, read, Holder};
use crate::providers::send::send_pages;
use crate::providers::spec;
use crate::providers::tagged::{owned_among, Search, PARALLEL_LOOKUPS};
use crate::providers::tags::user_tags;
use crate::providers::{contract, contract::Constraint, contract::Rule};
use crate::providers::{
    Applied, Context, Descriptor, Desired, DiscoveryScope, Found, Observed, Provider, ProviderError, Result,
    WithoutState,
};

const KIND: &str = kinds::IAM_INSTANCE_PROFILE;

/// The provider of `aws_iam_instance_profile`.
pub struct InstanceProfile;

/// The desired attributes, references resolved ([`crate::graph::kinds`]).
type Spec = crate::graph::kinds::iam_instance_profile::InstanceProfile<String>;

/// What AWS accepts of what this kind sends ([`contract`]).
const SENDS: &[Constraint] = &[
    Constraint::new(
        "name",
        Rule::Name {
            api: "IAM instance profile name",
            max: 128,
            chars: contract::IAM_NAME,
            unique: contract::Unique::InAccount("IAM instance profile"),
        },
    ),
    contract::tags_of("IAM instance profile"),
];

#[async_trait]
impl Provider for InstanceProfile {
    fn descriptor(&self) -> Descriptor {
        Descriptor::new(KIND, WithoutState::Tags, SENDS)
            .force_new(&["name", "path"])
            .imported_by("its instance profile name")
    }

    async fn name_holder(&self, cx: &Context, name: &str, _attrs: &Attrs) -> Result<Holder> {
        let r = cx.iam().get_instance_profile().instance_profile_name(name).customize();
        let found = read("iam:GetInstanceProfile", r.config_override(quick!(aws_sdk_iam)).send().await)?;
        Ok(found.map_or(Holder::Nobody, |out| super::common::holder(out.instance_profile.as_ref().map(|p| p.tags()))))
    }

    /// The instance profiles tagged for the stack, each one's tags read on its own.
    async fn tagged(&self, cx: &Context, search: &Search<'_>) -> Result<Vec<Found>> {
        let names = all(cx).await?;
        owned_among(search, KIND, names, |name| async move { Ok(tags_of(cx, &name).await?.into_iter().collect()) })
            .await
    }

    // Tags come from GetInstanceProfile, which returns them as ListInstanceProfileTags does, in one call.
    async fn read(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<Option<Observed>> {
        let Some(profile) = Described::get(cx, id).await? else { return Ok(None) };
        let attrs = json!({
            "name": profile.instance_profile_name(),
            "path": profile.path(),
            "role": role_of(&profile).map_or(Value::Null, |r| Value::String(r.to_string())),
            "tags": user_tags(tagging::from_iam(profile.tags())),
        });
        Ok(Some(Observed { attrs: object(attrs), outputs: applied(&profile).outputs }))
    }

    async fn find(&self, cx: &Context, desired: &Desired<'_>) -> Result<Option<String>> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        common::find_named(cx, &s.name, Described::instance_profile_name).await
    }

    async fn create(&self, cx: &Context, desired: &Desired<'_>) -> Result<Applied> {
        const OP: &str = "iam:CreateInstanceProfile";
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let name = s.name.as_str();
        let tags = tagging::to_iam(OP, &desired.tags())?;
        let out = send(cx, OP, &[], || {
            cx.iam()
                .create_instance_profile()
                .instance_profile_name(name)
                .path(path(&s))
                .set_tags(Some(tags.clone()))
                .send()
        })
        .await
        .map_err(|e| explain_taken(e, "instance profile", name))?;
        let profile =
            out.instance_profile.ok_or_else(|| ProviderError::new(OP, "", "IAM returned no instance profile"))?;
        if let Some(role) = role(&s) {
            add_role(cx, name, role).await?;
        }
        Ok(applied(&profile))
    }

    async fn update(&self, cx: &Context, id: &str, _prior: &Attrs, desired: &Desired<'_>) -> Result<Applied> {
        let s: Spec = spec::parse(KIND, desired.attrs)?;
        let profile: Described = common::existing(cx, id).await?;
        let wanted = role(&s);
        let current = role_of(&profile);
        if current != wanted {
            if let Some(old) = current {
                remove_role(cx, id, old).await?;
            }
            if let Some(new) = wanted {
                add_role(cx, id, new).await?;
            }
        }
        tagging::reconcile(cx, Tagged::InstanceProfile(id), profile.tags(), &desired.tags()).await?;
        Ok(applied(&profile))
    }

    async fn delete(&self, cx: &Context, id: &str, _prior: &Attrs) -> Result<()> {
        let Some(profile) = Described::get(cx, id).await? else { return Ok(()) };
        for role in profile.roles() {
            remove_role(cx, id, role.role_name()).await?;
        }
        let delete = || cx.iam().delete_instance_profile().instance_profile_name(id).send();
        remove(cx, "iam:DeleteInstanceProfile", DELETE_CONFLICT, delete).await
    }

    async fn discover(&self, cx: &Context, scope: &DiscoveryScope<'_>) -> Result<Vec<Found>> {
        let mut found: BTreeMap<String, (String, Option<String>)> = BTreeMap::new();
        for role in scope.node_roles {
            for name in profiles_of_role(cx, role).await? {
                found.insert(name, (format!("holds node role {role}"), Some(role.clone())));
            }
        }
        let cluster_key = format!("kubernetes.io/cluster/{}", scope.cluster);
        let others: Vec<String> = all(cx).await?.into_iter().filter(|n| !found.contains_key(n)).collect();
        let tagged: Vec<Option<String>> = futures::stream::iter(others)
            .map(|name| {
                let cluster_key = &cluster_key;
                async move {
                    let tags = tags_of(cx, &name).await?;
                    let ours = tags.contains_key(cluster_key)
                        || tags.get("karpenter.k8s.aws/cluster").is_some_and(|v| v == scope.cluster);
                    Ok::<_, ProviderError>(ours.then_some(name))
                }
            })
            .buffer_unordered(PARALLEL_LOOKUPS)
            .try_collect()
            .await?;
        for name in tagged.into_iter().flatten() {
            found.insert(name, (format!("tagged for cluster {}", scope.cluster), None));
        }
        Ok(found
            .into_iter()
            .filter(|(name, _)| !scope.keep.contains(name))
            .map(|(name, (why, role))| Found {
                kind: KIND,
                id: name.clone(),
                name: None,
                detail: why,
                uses: role.into_iter().collect(),
                after: Vec::new(),
                attrs: Attrs::new(),
            })
            .collect())
    }
}

/// The names of the profiles holding `role`; none when the role is gone.
async fn profiles_of_role(cx: &Context, role: &str) -> Result<Vec<String>> {
    let names = send_pages(
        cx,
        "iam:ListInstanceProfilesForRole",
        |marker| cx.iam().list_instance_profiles_for_role().role_name(role).set_marker(marker).send(),
        |page| (names_of(page.instance_profiles()), page.marker().filter(|_| page.is_truncated()).map(str::to_string)),
    );
    Ok(absent_if_gone(names.await)?.unwrap_or_default())
}

/// The names of every instance profile in the account.
pub(crate) async fn all(cx: &Context) -> Result<Vec<String>> {
    send_pages(
        cx,
        "iam:ListInstanceProfiles",
        |marker| cx.iam().list_instance_profiles().set_marker(marker).send(),
        |page| (names_of(page.instance_profiles()), page.marker().filter(|_| page.is_truncated()).map(str::to_string)),
    )
    .await
}

fn names_of(profiles: &[aws_sdk_iam::types::InstanceProfile]) -> Vec<String> {
    profiles.iter().map(|p| p.instance_profile_name().to_string()).collect()
}

/// A profile's tags (ListInstanceProfiles does not return them); empty when it vanished since it was listed.
pub(crate) async fn tags_of(cx: &Context, name: &str) -> Result<HashMap<String, String>> {
    let r = send(cx, "iam:ListInstanceProfileTags", &[], || {
        cx.iam().list_instance_profile_tags().instance_profile_name(name).send()
    })
    .await;
    Ok(absent_if_gone(r)?.map(|o| o.tags.into_iter().map(|t| (t.key, t.value)).collect()).unwrap_or_default())
}

type Described = aws_sdk_iam::types::InstanceProfile;

common::entity!(
    Described,
    "instance profile",
    "iam:GetInstanceProfile",
    |cx, name| cx.iam().get_instance_profile().instance_profile_name(name),
    |out| out.instance_profile
);

/// The path to create the profile under; an empty one is the root, as IAM's default.
fn path(s: &Spec) -> &str {
    Some(s.path.as_str()).filter(|p| !p.is_empty()).unwrap_or("/")
}

/// The role the profile should hold; an empty name is none.
fn role(s: &Spec) -> Option<&str> {
    s.role.as_deref().filter(|r| !r.is_empty())
}

fn role_of(profile: &Described) -> Option<&str> {
    profile.roles().first().map(|r| r.role_name())
}

async fn add_role(cx: &Context, profile: &str, role: &str) -> Result<()> {
    // A role or profile created a moment ago may not be visible to AddRoleToInstanceProfile yet.
    send(cx, "iam:AddRoleToInstanceProfile", &["NoSuchEntity"], || {
        cx.iam().add_role_to_instance_profile().instance_profile_name(profile).role_name(role).send()
    })
    .await
    .map(drop)
}

/// Takes the role out of the profile; a profile or role already gone counts as done.
pub(super) async fn remove_role(cx: &Context, profile: &str, role: &str) -> Result<()> {
    remove(cx, "iam:RemoveRoleFromInstanceProfile", &[], || {
        cx.iam().remove_role_from_instance_profile().instance_profile_name(profile).role_name(role).send()
    })
    .await
}

fn applied(profile: &Described) -> Applied {
    let name = profile.instance_profile_name();
    let outputs = json!({"id": name, "name": name, "arn": profile.arn()});
    Applied { id: name.to_string(), outputs: object(outputs) }
}
