//! `[vpc] id`: a cluster in a VPC someone else owns. What loads, what is refused (with its place and a hint), and
//! that the printed blueprint loads back.

use super::{errors, shipped, HEADER};
use crate::blueprint::*;
use crate::diag::Diagnostics;

const VPC: &str = "vpc-0123456789abcdef0";
const A: &str = "subnet-0123456789abcdef0";
const B: &str = "subnet-0123456789abcdef1";

/// A blueprint with `[vpc]` holding `id`, two private subnets, and `rest`.
fn existing(rest: &str) -> String {
    format!("{HEADER}[vpc]\nid = \"{VPC}\"\nprivate_subnet_ids = [\"{A}\", \"{B}\"]\n{rest}")
}

fn refused(text: &str) -> Diagnostics {
    load_str("e.toml", text, &[]).expect_err("must be refused")
}

/// The one error, as (line, column, path, message, hint).
fn only_error(d: &Diagnostics) -> (usize, usize, String, String, String) {
    let found = errors(d);
    assert_eq!(found.len(), 1, "{}", d.render(false));
    let item = d.items().iter().find(|i| i.severity == crate::diag::Severity::Error).expect("an error");
    let (line, col, message) = found[0].clone();
    (line, col, item.path.clone().unwrap_or_default(), message, item.hint.clone().unwrap_or_default())
}

#[test]
fn the_shipped_example_computes_no_network() {
    let bp = load(&shipped("existing-vpc.toml"), &[]).expect("loads");
    let v = bp.vpc.existing().expect("an existing network");
    assert_eq!(v.id, VPC);
    assert_eq!(v.private_subnet_ids.len(), 3);
    assert_eq!(v.public_subnet_ids.len(), 3);
    assert_eq!(v.security_group_ids, ["sg-0123456789abcdef0"]);
    assert!(bp.vpc.managed().is_none());
    crate::graph::compile(&bp).expect("compiles");
}

#[test]
fn printed_existing_network_loads_back_without_the_managed_fields() {
    let bp = load_str("e.toml", &existing(&format!("public_subnet_ids = [\"{}\"]\n", "subnet-0a1b2c3d")), &[])
        .unwrap_or_else(|d| panic!("{}", d.render(false)));
    let text = to_toml(&bp);
    let printed: toml::Table = toml::from_str(&text).expect("TOML");
    let vpc = printed["vpc"].as_table().expect("a [vpc] table");
    for field in MANAGED_NETWORK_ONLY {
        assert!(!vpc.contains_key(*field), "{field} printed:\n{text}");
    }
    assert_eq!(vpc["id"].as_str(), Some(VPC));
    let again = load_str("print.toml", &text, &[]).unwrap_or_else(|d| panic!("{text}\n{}", d.render(false)));
    assert_eq!(bp, again);
    // A managed VPC prints none of the new fields.
    let managed = to_toml(&load_str("m.toml", HEADER, &[]).expect("loads"));
    assert!(!managed.contains("subnet_ids") && !managed.contains("security_group_ids"), "{managed}");
}

#[test]
fn managed_network_fields_are_refused_with_an_existing_vpc() {
    for (line, hint) in [
        ("cidr = \"10.1.0.0/16\"", "ranges and zones"),
        ("azs = 2", "ranges and zones"),
        ("private_subnets = [\"10.0.0.0/20\"]", "private_subnet_ids"),
        ("public_subnets = [\"10.0.48.0/24\"]", "ranges and zones"),
        ("nat_gateway = \"per-az\"", "routes"),
        ("enable_dns_hostnames = true", "DNS host names"),
        ("tags = { team = \"a\" }", "private_subnet_tags"),
    ] {
        let d = refused(&existing(&format!("{line}\n")));
        let field = line.split(' ').next().expect("a key");
        let (l, col, path, message, h) = only_error(&d);
        assert_eq!((l, col), (7, field.len() + 4), "{line}: {}", d.render(false));
        assert_eq!(path, format!("vpc.{field}"));
        assert_eq!(
            message,
            format!("`{field}` describes a VPC kbp creates; it cannot be set with an existing VPC (`vpc.id`)")
        );
        assert!(h.contains(hint), "{line}: {h}");
        let related = &d.items()[0].related;
        assert_eq!(related.first().map(|r| r.position.line), Some(5), "{line}: points at the id");
    }
    // Through --set too, pointing into the argument.
    let d = load_str("e.toml", &existing(""), &["vpc.nat_gateway=none".into()]).expect_err("refused");
    assert_eq!(d.items()[0].file, "--set");
    assert_eq!(d.items()[0].path.as_deref(), Some("vpc.nat_gateway"));
}

#[test]
fn an_existing_vpc_needs_two_private_subnets() {
    let one = format!("{HEADER}[vpc]\nid = \"{VPC}\"\nprivate_subnet_ids = [\"{A}\"]\n");
    let (line, col, path, message, hint) = only_error(&refused(&one));
    assert_eq!((line, col), (6, 22));
    assert_eq!(path, "vpc.private_subnet_ids");
    assert_eq!(message, "an existing VPC needs at least 2 `private_subnet_ids`, found 1");
    assert!(hint.contains("two zones"), "{hint}");
    // Left out altogether, the error points at the table.
    let (line, _, path, message, _) = only_error(&refused(&format!("{HEADER}[vpc]\nid = \"{VPC}\"\n")));
    assert_eq!((line, path.as_str()), (4, "vpc.private_subnet_ids"));
    assert!(message.ends_with("found 0"), "{message}");
}

#[test]
fn a_subnet_is_private_or_public_not_both() {
    let d = refused(&existing(&format!("public_subnet_ids = [\"subnet-0a1b2c3d\", \"{B}\"]\n")));
    let (line, col, path, message, hint) = only_error(&d);
    assert_eq!((line, col, path.as_str()), (7, 41, "vpc.public_subnet_ids[1]"));
    assert_eq!(message, format!("subnet `{B}` is listed both as private and as public"));
    assert!(hint.contains("list it once"), "{hint}");
    assert_eq!(d.items()[0].related[0].position.line, 6);
    // Within one list, the schema refuses the duplicate.
    let d = refused(&format!("{HEADER}[vpc]\nid = \"{VPC}\"\nprivate_subnet_ids = [\"{A}\", \"{B}\", \"{A}\"]\n"));
    assert!(d.items()[0].message.contains("appears more than once"), "{}", d.render(false));
}

#[test]
fn existing_network_fields_are_refused_without_an_id() {
    for (line, what) in [
        (format!("private_subnet_ids = [\"{A}\", \"{B}\"]"), "subnets"),
        (format!("public_subnet_ids = [\"{A}\"]"), "subnets"),
        ("security_group_ids = [\"sg-0a1b2c3d\"]".to_string(), "security groups"),
    ] {
        let d = refused(&format!("{HEADER}[vpc]\n{line}\n"));
        let field = line.split(' ').next().expect("a key");
        let (l, col, path, message, hint) = only_error(&d);
        assert_eq!((l, col), (5, field.len() + 4), "{line}");
        assert_eq!(path, format!("vpc.{field}"));
        assert_eq!(message, format!("`{field}` names {what} of an existing VPC, but `vpc.id` is not set"));
        assert!(hint.starts_with("set `vpc.id`"), "{hint}");
    }
    // Empty lists say nothing, and are allowed.
    load_str("e.toml", &format!("{HEADER}[vpc]\nprivate_subnet_ids = []\nsecurity_group_ids = []\n"), &[])
        .expect("loads");
}

#[test]
fn ids_are_checked_by_kind() {
    let d = refused(&format!("{HEADER}[vpc]\nid = \"{A}\"\nprivate_subnet_ids = [\"{A}\", \"{B}\"]\n"));
    // One error: the rest of [vpc] is not judged against an ID that was refused.
    let (line, col, path, message, hint) = only_error(&d);
    assert_eq!((line, col, path.as_str()), (5, 6, "vpc.id"));
    assert_eq!(message, format!("`{A}` is a subnet ID, not a VPC ID"));
    assert!(hint.contains("describe-vpcs"), "{hint}");
    let d = refused(&existing("security_group_ids = [\"sg-1\", \"sg-0a1b2c3d\"]\n"));
    let (_, _, path, message, _) = only_error(&d);
    assert_eq!((path.as_str(), message.as_str()), ("vpc.security_group_ids[0]", "`sg-1` is not a security group ID"));
    let four = "security_group_ids = [\"sg-0a1b2c31\", \"sg-0a1b2c32\", \"sg-0a1b2c33\", \"sg-0a1b2c34\"]\n";
    let (_, _, path, message, _) = only_error(&refused(&existing(four)));
    assert_eq!((path.as_str(), message.as_str()), ("vpc.security_group_ids", "at most 3 items are allowed, found 4"));
}

#[test]
fn sets_name_an_existing_network() {
    let minimal = std::fs::read_to_string(shipped("minimal.toml")).expect("readable");
    let sets = [
        format!("vpc.id={VPC}"),
        format!("vpc.private_subnet_ids=[\"{A}\", \"{B}\"]"),
        "vpc.security_group_ids=[\"sg-0a1b2c3d\"]".to_string(),
    ];
    let bp = load_str("m.toml", &minimal, &sets).unwrap_or_else(|d| panic!("{}", d.render(false)));
    let v = bp.vpc.existing().expect("an existing network");
    assert_eq!(v.id, VPC);
    assert_eq!(v.private_subnet_ids, [A, B]);
    assert_eq!(v.security_group_ids, ["sg-0a1b2c3d"]);
    assert!(bp.vpc.managed().is_none());
    // A shipped blueprint that describes its VPC cannot be pointed at an existing one by --set alone.
    let mng = std::fs::read_to_string(shipped("karpenter-mng.toml")).expect("readable");
    let d = load_str("k.toml", &mng, &sets).expect_err("cidr, azs and nat_gateway are written");
    let paths: Vec<_> = d.items().iter().filter_map(|i| i.path.as_deref()).collect();
    assert_eq!(paths, ["vpc.cidr", "vpc.azs", "vpc.nat_gateway"], "{}", d.render(false));
}
