//! AWS value rules: names the EKS, EC2 and IAM APIs accept, tags, CIDRs, instance types, EKS add-ons.

use ipnet::Ipv4Net;

use super::{is_digits, Problem};

/// EKS CreateCluster `name`: 1–100 characters, `^[0-9A-Za-z][A-Za-z0-9\-_]*$`.
pub(crate) fn cluster_name(s: &str) -> Result<(), Problem> {
    eks_name(s, 100, "cluster")
}

/// EKS CreateNodegroup `nodegroupName`: the cluster name rules, at most 63 characters.
pub(crate) fn nodegroup_name(s: &str) -> Result<(), Problem> {
    eks_name(s, 63, "node group")
}

fn eks_name(s: &str, max: usize, what: &str) -> Result<(), Problem> {
    let shape = s.starts_with(|c: char| c.is_ascii_alphanumeric()) && s.chars().all(eks_name_char);
    if s.len() > max || !shape {
        return Err(Problem::new(format!("`{s}` is not a valid EKS {what} name"))
            .hint(format!("use 1 to {max} letters, digits, `-` and `_`, starting with a letter or digit")));
    }
    Ok(())
}

/// An AWS region name such as `us-west-2`, `us-gov-west-1` or `eusc-de-east-1`: `^[a-z]{2,4}(-[a-z]+)+-[0-9]+$`.
pub(crate) fn region(s: &str) -> Result<(), Problem> {
    let parts: Vec<&str> = s.split('-').collect();
    let lower = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase());
    let ok = parts.len() >= 3
        && (2..=4).contains(&parts[0].len())
        && lower(&parts[0])
        && parts[1..parts.len() - 1].iter().all(lower)
        && parts.last().is_some_and(|n| is_digits(n));
    if !ok {
        return Err(Problem::new(format!("`{s}` is not an AWS region name")).hint("write a region like `us-west-2`"));
    }
    Ok(())
}

/// IAM role names: 1–64 characters of `[\w+=,.@-]`.
pub(crate) fn iam_role_name(s: &str) -> Result<(), Problem> {
    if s.is_empty() || s.len() > 64 || !s.chars().all(iam_name_char) {
        return Err(Problem::new(format!("`{s}` is not a valid IAM role name"))
            .hint("use 1 to 64 letters, digits and `_+=,.@-`"));
    }
    Ok(())
}

/// AWS tag keys: 1–128 characters of letters, digits, spaces and `_.:/=+-@`, not starting with `aws:`.
pub(crate) fn tag_key(s: &str) -> Result<(), Problem> {
    if s.is_empty() || s.chars().count() > 128 || !s.chars().all(tag_char) {
        return Err(Problem::new(format!("`{s}` is not a valid AWS tag key"))
            .hint("use 1 to 128 letters, digits, spaces and `_.:/=+-@`"));
    }
    if s.to_ascii_lowercase().starts_with("aws:") {
        return Err(Problem::new(format!("tag key `{s}` uses the `aws:` prefix, which AWS reserves")));
    }
    Ok(())
}

/// Tag keys of resources kbp creates: the AWS rules, and not one of the tags kbp writes itself.
pub(crate) fn stack_tag_key(s: &str) -> Result<(), Problem> {
    tag_key(s)?;
    // kbp:stack, kbp:address, kbp:stack-id, kbp:owner, kbp:expires: read back, a `kbp:` tag is never the user's.
    if s.starts_with("kbp:") {
        return Err(Problem::new(format!("tag `{s}` is reserved: kbp sets its `kbp:` tags to track what it owns")));
    }
    Ok(())
}

/// AWS tag values: at most 256 characters of letters, digits, spaces and `_.:/=+-@`.
pub(crate) fn tag_value(s: &str) -> Result<(), Problem> {
    if s.chars().count() > 256 || !s.chars().all(tag_char) {
        return Err(Problem::new(format!("`{s}` is not a valid AWS tag value"))
            .hint("use at most 256 letters, digits, spaces and `_.:/=+-@`"));
    }
    Ok(())
}

/// A character of a tag key or value as IAM, EKS, SQS, EventBridge and KMS take them (EC2 takes any).
pub(crate) fn tag_char(c: char) -> bool {
    c.is_alphanumeric() || c == ' ' || "_.:/=+-@".contains(c)
}

/// A character of an IAM role, policy or instance profile name: `[\w+=,.@-]`.
pub(crate) fn iam_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_+=,.@-".contains(c)
}

/// A character of an EKS cluster or node group name: `[A-Za-z0-9_-]`.
pub(crate) fn eks_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// An IPv4 CIDR whose host bits are zero (EC2 refuses `10.0.0.1/16`).
fn cidr(s: &str) -> Result<Ipv4Net, Problem> {
    let net: Ipv4Net = s.parse().map_err(|_| {
        Problem::new(format!("`{s}` is not an IPv4 CIDR block"))
            .hint("write an address and a prefix length, like `10.0.0.0/16`")
    })?;
    if net.trunc() != net {
        return Err(Problem::new(format!("`{s}` has host bits set")).hint(format!("did you mean `{}`?", net.trunc())));
    }
    Ok(net)
}

pub(crate) fn ipv4_cidr(s: &str) -> Result<(), Problem> {
    cidr(s).map(|_| ())
}

/// EC2 CreateVpc accepts netmasks from /16 to /28; a /24 is the smallest that still fits subnets in every AZ.
pub(crate) fn vpc_cidr(s: &str) -> Result<(), Problem> {
    cidr_with_prefix(s, "VPC", 16..=24, "use a prefix from /16 (65,536 addresses) to /24")
}

/// EC2 CreateSubnet accepts netmasks from /16 to /28.
pub(crate) fn subnet_cidr(s: &str) -> Result<(), Problem> {
    cidr_with_prefix(s, "subnet", 16..=28, "use a prefix from /16 to /28")
}

/// `s` as a CIDR block whose prefix length is in `prefixes`, the range EC2 accepts for a `what`.
fn cidr_with_prefix(s: &str, what: &str, prefixes: std::ops::RangeInclusive<u8>, hint: &str) -> Result<(), Problem> {
    let net = cidr(s)?;
    if !prefixes.contains(&net.prefix_len()) {
        return Err(Problem::new(format!("{what} CIDR `{s}` has a /{} prefix", net.prefix_len())).hint(hint));
    }
    Ok(())
}

/// An availability zone name, checked against the region later: lowercase letters, digits and `-`.
pub(crate) fn az_name(s: &str) -> Result<(), Problem> {
    let ok = !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        return Err(
            Problem::new(format!("`{s}` is not an availability zone name")).hint("write a zone like `us-west-2a`")
        );
    }
    Ok(())
}

/// The ID of an existing VPC, such as `vpc-0123456789abcdef0`.
/// An address of a resource kbp compiles: `<type>.<name>`, optionally keyed (`<type>.<name>["<key>"]`).
pub(crate) fn resource_address(s: &str) -> Result<(), Problem> {
    let (head, key) = match s.split_once('[') {
        Some((head, rest)) => (head, Some(rest)),
        None => (s, None),
    };
    let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let named = head.split_once('.').is_some_and(|(t, n)| word(t) && word(n));
    let keyed = key.is_none_or(|k| k.len() > 3 && k.starts_with('"') && k.ends_with("\"]"));
    if named && keyed {
        Ok(())
    } else {
        Err(Problem::new(format!("`{s}` is not a resource address"))
            .hint("write it as `kbp graph --format json` lists it, such as `iam_role.cluster` or `eks_addon.main[\"coredns\"]`"))
    }
}

/// An AWS resource ID of any kind: not empty, no longer than any AWS ID or URL.
pub(crate) fn resource_id(s: &str) -> Result<(), Problem> {
    if s.trim().is_empty() || s.len() > 2048 {
        return Err(Problem::new("an ID is 1 to 2048 characters").hint("copy the ID from the AWS console or CLI"));
    }
    Ok(())
}

pub(crate) fn vpc_id(s: &str) -> Result<(), Problem> {
    ec2_id(s, "vpc", "aws ec2 describe-vpcs")
}

/// The ID of an existing subnet, such as `subnet-0123456789abcdef0`.
pub(crate) fn subnet_id(s: &str) -> Result<(), Problem> {
    ec2_id(s, "subnet", "aws ec2 describe-subnets --filters Name=vpc-id,Values=VPC_ID")
}

/// The ID of an existing security group, such as `sg-0123456789abcdef0`.
pub(crate) fn security_group_id(s: &str) -> Result<(), Problem> {
    ec2_id(s, "sg", "aws ec2 describe-security-groups --filters Name=vpc-id,Values=VPC_ID")
}

/// EC2 resource ID prefixes kbp reads, and what each names.
const EC2_IDS: &[(&str, &str)] = &[("vpc", "a VPC"), ("subnet", "a subnet"), ("sg", "a security group")];

/// An EC2 resource ID: `prefix-` and 8 hexadecimal digits (resources made before 2018) or 17, in lowercase as EC2
/// writes them.
fn ec2_id(s: &str, prefix: &str, listed_by: &str) -> Result<(), Problem> {
    let hex =
        |d: &str| matches!(d.len(), 8 | 17) && d.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if s.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')).is_some_and(hex) {
        return Ok(());
    }
    let what = EC2_IDS.iter().find(|(p, _)| *p == prefix).map_or("an EC2", |(_, w)| w);
    // The likeliest slip is an ID of another kind in the wrong field (a subnet's ID as the VPC's).
    let other = EC2_IDS.iter().find(|(p, _)| *p != prefix && s.strip_prefix(p).is_some_and(|r| r.starts_with('-')));
    let message = match other {
        Some((_, kind)) => format!("`{s}` is {kind} ID, not {what} ID"),
        None => format!("`{s}` is not {what} ID"),
    };
    Err(Problem::new(message).hint(format!(
        "write `{prefix}-` and 8 or 17 lowercase hexadecimal digits, like `{prefix}-0123456789abcdef0` (`{listed_by}` lists them)"
    )))
}

/// An EC2 instance type, `family.size` such as `m5.large` or `u-6tb1.metal`.
pub(crate) fn instance_type(s: &str) -> Result<(), Problem> {
    let word = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    let ok = s.split_once('.').is_some_and(|(family, size)| word(family) && word(size));
    if !ok {
        return Err(
            Problem::new(format!("`{s}` is not an EC2 instance type")).hint("write `family.size`, like `m5.large`")
        );
    }
    Ok(())
}

/// Whether an instance type runs on AWS Graviton (arm64): `a1`, or a `g` among the attribute letters after the
/// generation digit (`m7g`, `c6gn`, `im4gn`), which GPU families (`g5`, `g6e`) do not have.
pub(crate) fn is_graviton(instance_type: &str) -> bool {
    let family = instance_type.split('.').next().unwrap_or("");
    if family == "a1" {
        return true;
    }
    match family.find(|c: char| c.is_ascii_digit()) {
        Some(i) => family[i..].trim_start_matches(|c: char| c.is_ascii_digit()).contains('g'),
        None => false,
    }
}

/// EKS add-on names: lowercase letters, digits and `-`, like `vpc-cni` or `aws-ebs-csi-driver`.
pub(crate) fn addon_name(s: &str) -> Result<(), Problem> {
    let ok = s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.len() <= 100
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        return Err(Problem::new(format!("`{s}` does not look like an EKS add-on name"))
            .hint("add-on names are lowercase, like `vpc-cni` or `aws-ebs-csi-driver`"));
    }
    Ok(())
}

/// `a.b.c` with numeric parts.
pub(crate) fn semver(s: &str) -> Option<(u64, u64, u64)> {
    let mut parts = s.split('.').map(|p| if is_digits(p) { p.parse::<u64>().ok() } else { None });
    let v = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(v)
}

/// EKS add-on versions: `v<major>.<minor>.<patch>-eksbuild.<n>`.
pub(crate) fn addon_version(s: &str) -> Result<(), Problem> {
    let ok = s
        .strip_prefix('v')
        .and_then(|r| r.split_once("-eksbuild."))
        .is_some_and(|(v, n)| semver(v).is_some() && is_digits(n));
    if !ok {
        return Err(Problem::new(format!("`{s}` is not an EKS add-on version"))
            .hint("write like `v1.19.2-eksbuild.1` (`aws eks describe-addon-versions` lists them)"));
    }
    Ok(())
}

/// EKS node group `releaseVersion`: an AMI release such as `1.33.0-20250704` (Amazon Linux) or
/// `1.42.0-a1b2c3d4` (Bottlerocket): a version, a dash, a build.
pub(crate) fn ami_release_version(s: &str) -> Result<(), Problem> {
    let ok = s.len() <= 64
        && s.split_once('-').is_some_and(|(v, build)| {
            semver(v).is_some() && !build.is_empty() && build.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
        });
    if !ok {
        return Err(Problem::new(format!("`{s}` is not an EKS AMI release version"))
            .hint("write like `1.33.0-20250704` or `1.42.0-a1b2c3d4` (the AMI's release notes list them)"));
    }
    Ok(())
}

/// EKS add-on `configurationValues`: kbp passes it as given, and EKS wants a JSON object.
pub(crate) fn json_object(s: &str) -> Result<(), Problem> {
    match serde_json::from_str::<serde_json::Value>(s) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        Ok(_) => Err(Problem::new("configuration values must be a JSON object").hint("wrap the settings in `{ … }`")),
        Err(e) => Err(Problem::new(format!("configuration values are not valid JSON: {e}"))
            .hint("use a TOML literal string ('…') so JSON quotes need no escaping")),
    }
}

/// An S3 general-purpose bucket name (3–63 lowercase letters, digits, `-` and `.`).
pub(crate) fn bucket_name(s: &str) -> Result<(), Problem> {
    match bucket_name_problem(s) {
        Some(problem) => Err(Problem::new(problem).hint("S3 bucket names are like `acme-kbp-state`")),
        None => Ok(()),
    }
}

/// Why `name` is not an S3 bucket name (AWS's general-purpose bucket rules), or `None`.
pub(crate) fn bucket_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("no bucket name".to_string());
    }
    if !(3..=63).contains(&name.len()) {
        return Some(format!("bucket name `{name}` must be 3 to 63 characters long"));
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.';
    if !name.chars().all(allowed) {
        return Some(format!("bucket name `{name}` may hold only lowercase letters, digits, hyphens and dots"));
    }
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !edge(name.chars().next()) || !edge(name.chars().last()) {
        return Some(format!("bucket name `{name}` must begin and end with a letter or digit"));
    }
    if name.contains("..") {
        return Some(format!("bucket name `{name}` must not hold two adjacent dots"));
    }
    None
}

/// An S3 object key for state: 1–1024 bytes, not ending in `/` (that would name a folder).
pub(crate) fn state_key(s: &str) -> Result<(), Problem> {
    if s.is_empty() || s.len() > 1024 || s.ends_with('/') {
        return Err(Problem::new(format!("`{s}` is not an object key for state"))
            .hint("use 1 to 1024 characters not ending in `/`, such as `kbp/<cluster>.state.json`"));
    }
    Ok(())
}

/// The resource part (`role/NAME`, `user/PATH/NAME`) of an IAM ARN, `arn:PARTITION:iam::ACCOUNT:RESOURCE`.
fn iam_resource(s: &str) -> Option<&str> {
    let parts: Vec<&str> = s.splitn(6, ':').collect();
    let ok = parts.len() == 6
        && parts[0] == "arn"
        && parts[1].starts_with("aws")
        && parts[2] == "iam"
        && parts[3].is_empty()
        && parts[4].len() == 12
        && is_digits(parts[4]);
    ok.then(|| parts[5])
}

/// An IAM principal an EKS access entry takes: a role or user ARN, `arn:PARTITION:iam::ACCOUNT:role/NAME` or
/// `…:user/NAME` (with a path or not). Not an STS session ARN: EKS wants the role.
pub(crate) fn iam_principal_arn(s: &str) -> Result<(), Problem> {
    let ok = iam_resource(s).is_some_and(|r| {
        (r.starts_with("role/") || r.starts_with("user/")) && r.rsplit('/').next().is_some_and(|n| !n.is_empty())
    });
    if !ok {
        let hint = if s.contains(":sts::") {
            "an access entry names the role, not a session of it: `arn:aws:iam::ACCOUNT:role/NAME`"
        } else {
            "write an IAM role or user ARN, such as `arn:aws:iam::111122223333:role/platform-admins`"
        };
        return Err(Problem::new(format!("`{s}` is not an IAM role or user ARN")).hint(hint));
    }
    Ok(())
}

/// A Kubernetes user or group name an access entry gives: EKS refuses those that start with a prefix
/// Kubernetes or AWS reserve (`system:`, `eks:`, `aws:`, `amazon:`, `iam:`).
pub(crate) fn access_entry_subject(s: &str) -> Result<(), Problem> {
    const RESERVED: [&str; 5] = ["system:", "eks:", "aws:", "amazon:", "iam:"];
    if s.is_empty() || s.len() > 255 {
        return Err(
            Problem::new(format!("`{s}` is not a Kubernetes user or group name")).hint("use 1 to 255 characters")
        );
    }
    if let Some(prefix) = RESERVED.iter().find(|p| s.starts_with(*p)) {
        return Err(Problem::new(format!("`{s}` starts with `{prefix}`, which EKS reserves"))
            .hint("choose a name of your own, such as `platform-admins`, and bind it with RBAC"));
    }
    Ok(())
}

/// An EKS access policy: a name such as `AmazonEKSViewPolicy`, or its ARN
/// (`arn:aws:eks::aws:cluster-access-policy/NAME`).
pub(crate) fn access_policy(s: &str) -> Result<(), Problem> {
    let name = s
        .strip_prefix("arn:")
        .map_or(Some(s), |rest| rest.split_once(":eks::aws:cluster-access-policy/").map(|(_, n)| n));
    let ok = name.is_some_and(|n| {
        n.starts_with("AmazonEKS") && n.ends_with("Policy") && n.chars().all(|c| c.is_ascii_alphanumeric())
    });
    if !ok {
        return Err(Problem::new(format!("`{s}` is not an EKS access policy"))
            .hint("name one `aws eks list-access-policies` lists, such as `AmazonEKSViewPolicy` or `AmazonEKSClusterAdminPolicy`"));
    }
    Ok(())
}

/// An IAM role ARN, `arn:PARTITION:iam::ACCOUNT:role/NAME`.
pub(crate) fn role_arn(s: &str) -> Result<(), Problem> {
    let ok = iam_resource(s).and_then(|r| r.strip_prefix("role/")).is_some_and(|n| !n.is_empty());
    if !ok {
        return Err(Problem::new(format!("`{s}` is not an IAM role ARN"))
            .hint("write it as `arn:aws:iam::123456789012:role/NAME`"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::rules::judge;

    #[test]
    fn names_and_regions() {
        assert!(cluster_name("ex-karpenter-mng").is_ok());
        assert!(cluster_name("_x").is_err() && cluster_name("a.b").is_err() && cluster_name("").is_err());
        assert!(nodegroup_name(&"n".repeat(64)).is_err());
        let regions = ["us-west-2", "eu-central-1", "ap-northeast-1", "us-gov-west-1", "eusc-de-east-1"];
        judge(region, &regions, &["us-west", "uswest2", "US-WEST-2", "us-west-2a"]);
        assert!(iam_role_name("KarpenterNodeRole-x").is_ok());
        assert!(iam_role_name(&"r".repeat(65)).is_err() && iam_role_name("a b").is_err());
    }

    #[test]
    fn tags() {
        assert!(tag_key("team").is_ok() && tag_key("aws:foo").is_err() && tag_key("AWS:x").is_err());
        assert!(stack_tag_key("kbp:stack").is_err());
        assert!(tag_value("").is_ok() && tag_value(&"v".repeat(257)).is_err() && tag_value("a*b").is_err());
    }

    #[test]
    fn cidrs() {
        assert!(vpc_cidr("10.0.0.0/16").is_ok());
        assert!(vpc_cidr("10.0.0.0/8").is_err() && vpc_cidr("10.0.0.0/25").is_err());
        assert_eq!(vpc_cidr("10.0.0.1/16").unwrap_err().hint.as_deref(), Some("did you mean `10.0.0.0/16`?"));
        assert!(subnet_cidr("10.0.0.0/28").is_ok() && subnet_cidr("10.0.0.0/29").is_err());
        assert!(ipv4_cidr("0.0.0.0/0").is_ok() && ipv4_cidr("nope").is_err());
    }

    #[test]
    fn ec2_ids() {
        assert!(subnet_id("subnet-0123456789abcdef0").is_ok() && security_group_id("sg-0a1b2c3d").is_ok());
        let bad = ["vpc-", "vpc-0123", "vpc-0123456789ABCDEF0", "vpc-0123456789abcdefg", "vpc0123456789abcdef0", ""];
        judge(vpc_id, &["vpc-0123456789abcdef0", "vpc-0a1b2c3d"], &bad);
        let e = vpc_id("vpc-12").unwrap_err();
        assert_eq!(e.message, "`vpc-12` is not a VPC ID");
        assert!(e.hint.as_deref().is_some_and(|h| h.contains("8 or 17 lowercase hexadecimal digits")), "{e:?}");
        let e = vpc_id("subnet-0123456789abcdef0").unwrap_err();
        assert_eq!(e.message, "`subnet-0123456789abcdef0` is a subnet ID, not a VPC ID");
        assert_eq!(
            security_group_id("subnet-0a1b2c3d").unwrap_err().message,
            "`subnet-0a1b2c3d` is a subnet ID, not a security group ID"
        );
        assert!(subnet_id("sg-0a1b2c3d").unwrap_err().hint.as_deref().is_some_and(|h| h.contains("describe-subnets")));
    }

    #[test]
    fn access_entry_principals_subjects_and_policies() {
        let ok = ["arn:aws:iam::111122223333:role/admins", "arn:aws-cn:iam::111122223333:user/ops/jane"];
        let session = "arn:aws:sts::111122223333:assumed-role/admins/jane";
        judge(iam_principal_arn, &ok, &[session, "arn:aws:iam::1111:role/x", "arn:aws:iam::111122223333:group/g"]);
        assert!(iam_principal_arn(session).unwrap_err().hint.unwrap().contains("names the role, not a session"));
        judge(access_entry_subject, &["platform", "team:oncall"], &["system:masters", "eks:x", "iam:y", ""]);
        let arn = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy";
        judge(
            access_policy,
            &["AmazonEKSViewPolicy", arn],
            &["ViewPolicy", "arn:aws:iam::aws:policy/AmazonEKSViewPolicy"],
        );
    }

    #[test]
    fn instance_types_and_addons() {
        assert!(instance_type("m5.large").is_ok() && instance_type("m5large").is_err());
        assert!(is_graviton("m7g.large") && is_graviton("c6gn.xlarge") && is_graviton("a1.large"));
        assert!(!is_graviton("g5.xlarge") && !is_graviton("m5.large") && !is_graviton("g4ad.xlarge"));
        assert!(addon_name("aws-ebs-csi-driver").is_ok() && addon_name("Foo").is_err());
        assert!(addon_version("v1.19.2-eksbuild.1").is_ok());
        assert!(addon_version("1.19.2").is_err() && addon_version("v1.19-eksbuild.1").is_err());
        assert!(json_object(r#"{"env": {}}"#).is_ok());
        assert!(json_object("[1]").is_err() && json_object("{").is_err());
        assert_eq!(semver("1.14.1"), Some((1, 14, 1)));
        assert_eq!(semver("1.14"), None);
    }
}
