//! What AWS accepts of the values a kind sends: each provider declares, in its [`super::Descriptor`], the
//! constraints of the names, tags, descriptions and documents it puts in its requests ([`Constraint`]), and
//! [`check`] judges a compiled graph against them, offline. `kbp validate` (and every command that loads a
//! blueprint) runs it over the registry, so a value AWS would refuse is reported at the blueprint field it comes
//! from before anything is created; preflight adds what only AWS knows (names already taken, quotas).
//!
//! The figures are AWS's documented limits (each rule says where from); the emulator enforces the same ones.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{tags, Registry};
use crate::blueprint::field_child;
use crate::blueprint::rules::aws;
use crate::graph::value::{references, resolve};
use crate::graph::{Address, ResourceGraph};

/// One value a kind sends and the rule AWS holds it to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constraint {
    /// The attribute holding the value (`name`, `tags`, `description`, `policy`, `taints`).
    pub attr: &'static str,
    /// The rule the value is held to.
    pub rule: Rule,
}

impl Constraint {
    /// The constraint `rule` on the attribute `attr`.
    pub const fn new(attr: &'static str, rule: Rule) -> Self {
        Constraint { attr, rule }
    }
}

/// The characters a value may hold, with the words that say so to a user.
#[derive(Debug, Clone, Copy)]
pub struct Chars {
    /// Whether one character is allowed.
    pub allows: fn(char) -> bool,
    /// The allowed characters in words, for a message: "letters, digits and `+=,.@_-`".
    pub described: &'static str,
}

impl PartialEq for Chars {
    fn eq(&self, other: &Self) -> bool {
        self.described == other.described
    }
}

/// IAM names of roles, policies and instance profiles: `[\w+=,.@-]`
/// (<https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html>).
pub const IAM_NAME: Chars = Chars { allows: aws::iam_name_char, described: "letters, digits and `_+=,.@-`" };
/// IAM (and most services') tag keys and values: `[\p{L}\p{Z}\p{N}_.:/=+\-@]`
/// (<https://docs.aws.amazon.com/IAM/latest/APIReference/API_Tag.html>).
pub const TAG_CHARS: Chars = Chars { allows: aws::tag_char, described: "letters, digits, spaces and `_.:/=+-@`" };
/// EC2 takes any character in a tag (<https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_Tags.html>).
pub const ANY: Chars = Chars { allows: |_| true, described: "any characters" };
/// A VPC security group's name and description: `a-zA-Z0-9`, spaces and `._-:/()#,@[]+=&;{}!$*`
/// (<https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateSecurityGroup.html>).
pub const EC2_GROUP_TEXT: Chars = Chars {
    allows: |c| c.is_ascii_alphanumeric() || " ._-:/()#,@[]+=&;{}!$*".contains(c),
    described: "letters, digits, spaces and `._-:/()#,@[]+=&;{}!$*`",
};
/// EKS names of clusters and node groups: `[A-Za-z0-9_-]` (<https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html>).
pub const EKS_NAME: Chars = Chars { allows: aws::eks_name_char, described: "letters, digits, `-` and `_`" };
/// SQS queue names: `[A-Za-z0-9_-]` (<https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html>).
pub const SQS_NAME: Chars = EKS_NAME;
/// EventBridge rule names: `[\.\-_A-Za-z0-9]` (<https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutRule.html>).
pub const EVENTS_NAME: Chars =
    Chars { allows: |c| c.is_ascii_alphanumeric() || ".-_".contains(c), described: "letters, digits and `.-_`" };
/// KMS alias names: `alias/` and `[a-zA-Z0-9/_-]` (<https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateAlias.html>).
pub const KMS_ALIAS: Chars =
    Chars { allows: |c| c.is_ascii_alphanumeric() || "/_-".contains(c), described: "letters, digits and `/_-`" };

/// A rule of AWS's on one value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// A name: 1 to `max` characters of `chars`, shared with whom `unique` says.
    Name {
        /// What AWS calls the value, for messages: `IAM role name`.
        api: &'static str,
        /// The most characters AWS takes.
        max: usize,
        /// The characters AWS takes.
        chars: Chars,
        /// Who else may not hold the name.
        unique: Unique,
    },
    /// Free text (a description): at most `max` characters of `chars`.
    Text {
        /// What AWS calls the value, for messages: `KMS key description`.
        api: &'static str,
        /// The most characters AWS takes.
        max: usize,
        /// The characters AWS takes.
        chars: Chars,
    },
    /// The resource's tags: with `kbp_tags`, kbp's own ([`tags::kbp_tags`], `kbp:stack-id`, and `kbp:owner` and
    /// `kbp:expires` of `--ttl`) are counted too. At most [`MAX_TAGS`], keys ≤ 128 and values ≤ 256 characters of
    /// `chars`, no key under `aws:`.
    Tags {
        /// What AWS calls them, for messages: `IAM role` (tags).
        api: &'static str,
        /// The characters keys and values may hold.
        chars: Chars,
        /// Whether kbp adds its own tags to the user's on this kind.
        kbp_tags: bool,
    },
    /// A JSON policy document: at most `max` characters, whitespace counted or not.
    Policy {
        /// What AWS calls the document, for messages: `role trust policy`.
        api: &'static str,
        /// The most characters AWS takes.
        max: usize,
        /// Whether AWS counts whitespace towards `max` (IAM does not).
        whitespace: bool,
    },
    /// EKS node group taints: at most 50, keys 1–63 and values ≤ 63 characters, no reserved prefix.
    Taints,
    /// EKS node group labels: keys and values ≤ 63 characters (a key's name part), no reserved prefix.
    Labels,
}

/// Who else may not hold a name of a kind ([`Rule::Name`]). The one place a kind says its name is unique: the
/// graph check refuses two resources of the stack with one name, and preflight asks who holds an account's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unique {
    /// Nobody: names repeat (an inline policy's, from role to role).
    No,
    /// Nothing else in what it belongs to (a VPC's security groups, a cluster's node groups): two resources of
    /// the stack may not share it, and preflight does not ask AWS.
    InParent,
    /// Nothing else in the account and region: preflight also asks the provider who holds it
    /// ([`Provider::name_holder`](super::Provider::name_holder)). It says what the resource is, for people
    /// (`IAM role`).
    InAccount(&'static str),
}

/// Tags per resource, in every service kbp uses (<https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html>).
pub const MAX_TAGS: usize = 50;
/// kbp's own tags on every resource it tags: `kbp:stack`, `kbp:address`, `kbp:stack-id`, and for a sandbox
/// (`kbp apply --ttl`) `kbp:owner` and `kbp:expires`. A blueprint is judged as if it could be a sandbox.
pub const KBP_OWN_TAGS: usize = 5;
/// Kubernetes prefixes EKS keeps for itself in node group labels and taints
/// (<https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html>).
pub const RESERVED_PREFIXES: &[&str] = &["kubernetes.io/", "k8s.io/", "eks.amazonaws.com/"];
/// EKS: taints per node group (<https://docs.aws.amazon.com/eks/latest/userguide/node-taints-managed-node-groups.html>).
pub const MAX_TAINTS: usize = 50;

/// A value kbp would send that AWS would refuse.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The resource whose attribute AWS would refuse.
    pub address: Address,
    /// Where in the resource's attributes (`name`, `tags`, `tags.team`, `taints[2].key`): the graph maps it back
    /// to the blueprint field it came from ([`crate::graph::Resource::origin`]).
    pub attr: String,
    /// What is wrong, without the resource (the caller names it), so that one problem of many resources
    /// (`cluster.tags` on each) is reported once.
    pub message: String,
    /// What to change in the blueprint so AWS accepts it.
    pub hint: String,
    /// For a count that differs between resources (tags per resource): the count, so the largest is reported.
    pub count: Option<usize>,
}

/// Every value of `graph` that breaks a constraint its kind declares. Values known only after apply (an ARN)
/// are judged with a stand-in of their longest usual length.
pub fn check(graph: &ResourceGraph, registry: &Registry) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut names: BTreeMap<(&str, String), Vec<&Address>> = BTreeMap::new();
    for r in graph.in_order() {
        let Some(provider) = registry.get(&r.kind) else { continue };
        for c in provider.descriptor().sends {
            let Some(value) = r.attrs.get(c.attr) else { continue };
            let value = stand_in(value);
            let mut at = |attr: String, message: String, hint: String| {
                // The one finding a tag rule makes at `tags` itself is its count.
                let count = match c.rule {
                    Rule::Tags { kbp_tags, .. } if attr == "tags" => tag_count(kbp_tags, &value),
                    _ => None,
                };
                findings.push(Finding { address: r.address.clone(), attr, message, hint, count })
            };
            judge(&r.address, c, &value, &mut at);
            if let (Rule::Name { unique: Unique::InParent | Unique::InAccount(_), api, .. }, Some(name)) =
                (c.rule, value.as_str())
            {
                names.entry((api, name.to_string())).or_default().push(&r.address);
            }
        }
    }
    for ((api, name), holders) in names.into_iter().filter(|(_, h)| h.len() > 1) {
        let all: Vec<String> = holders.iter().map(|a| a.to_string()).collect();
        for address in &holders {
            findings.push(Finding {
                address: (*address).clone(),
                attr: "name".to_string(),
                message: format!("{} would all be the {api} `{name}`; AWS holds one of a name", all.join(", ")),
                hint: "the names must differ: change the fields they are derived from".to_string(),
                count: None,
            });
        }
    }
    findings
}

/// The tags a resource would carry: its `tags` and, with `kbp_tags`, kbp's own.
fn tag_count(kbp_tags: bool, tags: &Value) -> Option<usize> {
    Some(tags.as_object()?.len() + if kbp_tags { KBP_OWN_TAGS } else { 0 })
}

/// `value` with each reference to another resource's output replaced by a stand-in as long as such outputs
/// usually are (an ARN of a long name), so sizes are judged a little on the safe side.
fn stand_in(value: &Value) -> Value {
    if references(value).is_empty() {
        return value.clone();
    }
    let long = format!("arn:aws:iam::123456789012:role/{}", "x".repeat(64));
    resolve(value, &|_: &Address, _: &str| Some(Value::String(long.clone()))).0
}

fn judge(address: &Address, c: &Constraint, value: &Value, at: &mut impl FnMut(String, String, String)) {
    let attr = c.attr.to_string();
    match c.rule {
        Rule::Name { api, max, chars, .. } => {
            let Some(s) = value.as_str() else { return };
            text(api, s, 1, max, chars, |m, h| at(attr.clone(), m, h));
        }
        Rule::Text { api, max, chars } => {
            let Some(s) = value.as_str() else { return };
            text(api, s, 0, max, chars, |m, h| at(attr.clone(), m, h));
        }
        Rule::Tags { api, chars, kbp_tags } => judge_tags(address, api, chars, kbp_tags, value, at),
        Rule::Policy { api, max, whitespace } => {
            let doc = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let size =
                if whitespace { doc.chars().count() } else { doc.chars().filter(|c| !c.is_whitespace()).count() };
            if size > max {
                let counted = if whitespace { "characters" } else { "characters not counting whitespace" };
                at(
                    attr,
                    format!("the {api} would be {size} {counted}; AWS allows {max}"),
                    "shorten the names it is derived from (the cluster name appears in it several times)".to_string(),
                );
            }
        }
        Rule::Taints => judge_taints(value, at),
        Rule::Labels => judge_labels(value, at),
    }
}

/// A string of `min` to `max` characters of `chars`.
fn text(api: &str, s: &str, min: usize, max: usize, chars: Chars, mut at: impl FnMut(String, String)) {
    let len = s.chars().count();
    if len < min || len > max {
        at(
            format!("the {api} `{s}` would be {len} characters; AWS allows {min} to {max}"),
            "shorten the field it is derived from".to_string(),
        );
    }
    if let Some(bad) = s.chars().find(|c| !(chars.allows)(*c)) {
        at(
            format!("the {api} `{s}` would contain `{bad}`; AWS allows only {}", chars.described),
            format!("remove `{bad}`"),
        );
    }
}

fn judge_tags(
    address: &Address,
    api: &str,
    chars: Chars,
    kbp_tags: bool,
    value: &Value,
    at: &mut impl FnMut(String, String, String),
) {
    let (Some(map), Some(count)) = (value.as_object(), tag_count(kbp_tags, value)) else { return };
    let own = count - map.len();
    if count > MAX_TAGS {
        let kbp = if kbp_tags {
            format!(
                ", and kbp's own {own} (kbp:stack, kbp:address, kbp:stack-id; kbp:owner and kbp:expires under --ttl)"
            )
        } else {
            String::new()
        };
        at(
            "tags".to_string(),
            format!("would carry {} tags: {} from the blueprint and what kbp adds for it (a Name, discovery tags){kbp}; AWS allows {MAX_TAGS} on each {api}", count, map.len()),
            format!("keep the blueprint's tags on it to {}", MAX_TAGS - own),
        );
    }
    let mut all: Vec<(String, String)> =
        map.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect();
    if kbp_tags {
        all.push((tags::ADDRESS.to_string(), tags::address_value(address)));
    }
    for (k, v) in all {
        let attr = field_child("tags", &k);
        if k.chars().count() > 128 || k.is_empty() {
            at(
                attr.clone(),
                format!("tag key `{k}` would be {} characters; AWS allows 1 to 128", k.chars().count()),
                "shorten the key".to_string(),
            );
        }
        if v.chars().count() > 256 {
            at(
                attr.clone(),
                format!("tag `{k}`'s value would be {} characters; AWS allows 256", v.chars().count()),
                "shorten the value".to_string(),
            );
        }
        if k.to_ascii_lowercase().starts_with("aws:") {
            at(
                attr.clone(),
                format!("tag key `{k}` is under `aws:`, which AWS keeps for itself"),
                "use another prefix".to_string(),
            );
        }
        if let Some(bad) = k.chars().chain(v.chars()).find(|c| !(chars.allows)(*c)) {
            at(
                attr,
                format!("tag `{k}` = `{v}` would contain `{bad}`; a {api}'s tags allow only {}", chars.described),
                format!("remove `{bad}`"),
            );
        }
    }
}

fn judge_taints(value: &Value, at: &mut impl FnMut(String, String, String)) {
    let Some(list) = value.as_array() else { return };
    if list.len() > MAX_TAINTS {
        at(
            "taints".to_string(),
            format!(
                "the node group would have {} taints with kbp's own `karpenter.sh/controller`; EKS allows {MAX_TAINTS}",
                list.len()
            ),
            format!("keep the blueprint's taints to {}", MAX_TAINTS - 1),
        );
    }
    for (i, t) in list.iter().enumerate() {
        let key = t["key"].as_str().unwrap_or_default();
        let value = t["value"].as_str().unwrap_or_default();
        let n = key.chars().count();
        if n == 0 || n > 63 {
            at(
                format!("taints[{i}].key"),
                format!("taint key `{key}` is {n} characters; EKS allows 1 to 63"),
                "shorten the key".to_string(),
            );
        }
        if value.chars().count() > 63 {
            at(
                format!("taints[{i}].value"),
                format!("taint `{key}`'s value is {} characters; EKS allows 63", value.chars().count()),
                "shorten the value".to_string(),
            );
        }
        reserved(key, "taint", &mut |m, h| at(format!("taints[{i}].key"), m, h));
    }
}

fn judge_labels(value: &Value, at: &mut impl FnMut(String, String, String)) {
    let Some(map) = value.as_object() else { return };
    for (key, v) in map {
        let attr = field_child("labels", key);
        let name = key.rsplit_once('/').map_or(key.as_str(), |(_, n)| n);
        if key.chars().count() > 63 {
            at(
                attr.clone(),
                format!("label key `{key}` is {} characters; EKS allows 63", key.chars().count()),
                "shorten the key".to_string(),
            );
        } else if name.is_empty() {
            at(attr.clone(), format!("label key `{key}` has no name after its prefix"), "add a name".to_string());
        }
        let v = v.as_str().unwrap_or_default();
        if v.chars().count() > 63 {
            at(
                attr.clone(),
                format!("label `{key}`'s value is {} characters; EKS allows 63", v.chars().count()),
                "shorten the value".to_string(),
            );
        }
        reserved(key, "label", &mut |m, h| at(attr.clone(), m, h));
    }
}

fn reserved(key: &str, what: &str, at: &mut impl FnMut(String, String)) {
    let prefix = key.rsplit_once('/').map(|(p, _)| p).unwrap_or_default();
    let hit = RESERVED_PREFIXES.iter().find(|r| {
        let r = r.trim_end_matches('/');
        prefix == r || prefix.ends_with(&format!(".{r}"))
    });
    if let Some(r) = hit {
        at(
            format!("{what} key `{key}` is under `{r}`, which EKS keeps for Kubernetes and itself"),
            format!("use a prefix of your own, such as `example.com/{}`", key.rsplit('/').next().unwrap_or(key)),
        );
    }
}

/// Kinds whose values kbp sends but which declare no constraint for them: a registry-wide test keeps this empty.
pub fn undeclared(graph: &ResourceGraph, registry: &Registry) -> BTreeSet<(String, &'static str)> {
    let mut out = BTreeSet::new();
    for r in graph.in_order() {
        let Some(p) = registry.get(&r.kind) else { continue };
        let declared: BTreeSet<&str> = p.descriptor().sends.iter().map(|c| c.attr).collect();
        for attr in SENT_ATTRS.iter().filter(|a| r.attrs.contains_key(**a) && !declared.contains(**a)) {
            out.insert((r.kind.clone(), *attr));
        }
    }
    out
}

/// Attributes that name, tag, describe or grant: what AWS holds to limits of its own.
pub const SENT_ATTRS: &[&str] =
    &["name", "tags", "description", "policy", "assume_role_policy", "alias", "taints", "labels"];

/// Tags on an EC2 resource, kbp's own among them.
pub const EC2_TAGS: Constraint =
    Constraint::new("tags", Rule::Tags { api: "EC2 resource", chars: ANY, kbp_tags: true });
/// Tags on a resource of a service that keeps tags to [`TAG_CHARS`] (IAM, EKS, SQS, EventBridge, KMS).
pub const fn tags_of(api: &'static str) -> Constraint {
    Constraint::new("tags", Rule::Tags { api, chars: TAG_CHARS, kbp_tags: true })
}
/// An IAM description: at most 1,000 characters (<https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html>).
pub const IAM_DESCRIPTION: Constraint = Constraint::new(
    "description",
    Rule::Text {
        api: "IAM description",
        max: 1000,
        chars: Chars {
            allows: |c| {
                c == '\t' || c == '\n' || c == '\r' || (' '..='~').contains(&c) || ('\u{a1}'..='\u{ff}').contains(&c)
            },
            described: "printable Latin-1 characters",
        },
    },
);
