//! Rules of EC2NodeClasses and NodePools the CRDs do not make (those are checked on the rendered objects, see
//! `cli::crd_check`): references from pools to classes, and, as warnings that say where it would fail, what the
//! API server accepts but Karpenter's runtime validation or an EC2 launch would refuse.

use std::collections::HashMap;

use super::{has_al2, Checker};
use crate::blueprint::model::{Blueprint, NodePool, Requirement};
use crate::blueprint::rules::{closest, k8s};
use crate::blueprint::schema::code_list;
use crate::blueprint::tree::{child, item};

pub(super) fn node_classes(c: &mut Checker, bp: &Blueprint) {
    one_node_os(c, bp);
    for (name, class) in &bp.node_classes {
        let base = child("node_classes", name);
        let alias = &class.ami_alias;
        if alias.starts_with("al2@") && !has_al2(&bp.cluster.version) {
            let msg = format!(
                "EKS publishes no Amazon Linux 2 AMIs for Kubernetes {}: `{alias}` will not resolve",
                bp.cluster.version
            );
            c.warning(&child(&base, "ami_alias"), &["cluster.version"], msg)
                .map(|b| b.hint("use `al2023@latest` or `bottlerocket@latest`"));
        }
        let v = &class.root_volume;
        let vol = child(&base, "root_volume");
        let ty = v.volume_type.as_str();
        // EC2 refuses IOPS on volume types without provisioned performance, and throughput on all but gp3.
        if let Some(iops) = v.iops.filter(|_| !class.spec.contains_key("blockDeviceMappings")) {
            let range = match ty {
                "gp3" => Some(3000..=80_000),
                "io1" => Some(100..=64_000),
                "io2" => Some(100..=256_000),
                _ => None,
            };
            let at = child(&vol, "iops");
            match range {
                None => {
                    c.warning(
                        &at,
                        &[&child(&vol, "type")],
                        format!("EC2 refuses `iops` on a {ty} volume: launches will fail"),
                    )
                    .map(|b| b.hint("use type gp3, io1 or io2, or remove `iops`"));
                }
                Some(r) if !r.contains(&iops) => {
                    let msg =
                        format!("{iops} IOPS is outside what EC2 provisions for {ty} ({}–{})", r.start(), r.end());
                    c.warning(&at, &[&child(&vol, "type")], msg);
                }
                Some(_) => {}
            }
        }
        if v.throughput.is_some() && ty != "gp3" {
            c.warning(
                &child(&vol, "throughput"),
                &[&child(&vol, "type")],
                format!("EC2 refuses `throughput` on a {ty} volume: launches will fail"),
            )
            .map(|b| b.hint("only gp3 volumes take a throughput"));
        }
        let gib = size_gib(&v.size);
        let (min, max) = match ty {
            "io1" | "io2" => (4, 16384),
            "st1" | "sc1" => (125, 16384),
            "standard" => (1, 1024),
            _ => (1, 16384),
        };
        if gib.is_some_and(|g| g < min || g > max) {
            let msg = format!("a {ty} volume must be {min}–{max} GiB; `{}` will fail at launch", v.size);
            c.warning(&child(&vol, "size"), &[&child(&vol, "type")], msg);
        }
    }
}

/// Every class launches its nodes with the one node role, and EKS gives a role one access entry, of one type:
/// EC2_LINUX or EC2_WINDOWS. A role cannot be both, so the classes are all Linux or all Windows.
fn one_node_os(c: &mut Checker, bp: &Blueprint) {
    let windows = bp.node_classes.iter().find(|(_, class)| class.windows());
    let linux = bp.node_classes.iter().find(|(_, class)| !class.windows());
    let (Some((win, win_class)), Some((lin, lin_class))) = (windows, linux) else { return };
    let at = child(&child("node_classes", win), "ami_alias");
    let other = child(&child("node_classes", lin), "ami_alias");
    let related = c.place(&other);
    let msg = format!(
        "node class `{win}` launches Windows nodes (`{}`) and `{lin}` Linux nodes (`{}`), but both join with the \
         node role `{}`, and EKS gives a role one access entry, either EC2_WINDOWS or EC2_LINUX",
        win_class.family(),
        lin_class.family(),
        bp.karpenter.node_role_name
    );
    c.error(&at, &[&other], msg).map(|b| {
        b.hint(
            "make every node class Windows or every one Linux (the controller node group runs Linux either way), \
             or keep one family of nodes in a stack of its own",
        )
        .related(related.0, related.1, "a Linux node class")
    });
}

/// A volume size (already matching the CRD pattern) in GiB, rounded down.
fn size_gib(size: &str) -> Option<u64> {
    crate::kubernetes::quantity::value(size).map(|bytes| (bytes / f64::from(1u32 << 30)).floor() as u64)
}

pub(super) fn node_pools(c: &mut Checker, bp: &Blueprint) {
    let classes: Vec<&str> = bp.node_classes.keys().map(String::as_str).collect();
    // Listed in full only when short: one list per unknown reference would grow with pools × classes.
    let expected = match classes.len() {
        0..=SHORT_LIST => format!("one of {}", code_list(&classes)),
        n => format!("the name of one of the {n} classes in `node_classes`"),
    };
    let mut suggest = Suggest::default();
    if bp.node_pools.is_empty() {
        c.warning("node_pools", &[], "there are no node pools: Karpenter will launch no nodes".into())
            .map(|b| b.hint("add a `[node_pools.<name>]` table, or leave `node_pools` out for the default pool"));
    }
    for (name, pool) in &bp.node_pools {
        let base = child("node_pools", name);
        if !bp.node_classes.contains_key(&pool.node_class) {
            let wanted = pool.node_class.as_str();
            let msg = format!("node pool `{name}` uses node class `{wanted}`, which does not exist");
            c.error(&child(&base, "node_class"), &[], msg).map(|b| {
                let hint = match suggest.closest(wanted, &classes) {
                    Some(x) => format!("did you mean `{x}`?"),
                    None => format!("define `[node_classes.{wanted}]`, or name an existing class"),
                };
                b.expected(expected.as_str()).hint(hint)
            });
        }
        for (i, r) in pool.requirements.iter().enumerate() {
            requirement(c, r, &item(&child(&base, "requirements"), i));
        }
    }
}

/// Lists of names up to this long are written out in messages.
const SHORT_LIST: usize = 10;

/// "Did you mean" for unknown class names, remembered per name, and within a budget of comparisons: each search
/// compares with every class, so without one, many pools naming many missing classes would cost pools × classes.
struct Suggest<'a> {
    found: HashMap<&'a str, Option<&'a str>>,
    comparisons_left: usize,
}

impl Default for Suggest<'_> {
    fn default() -> Self {
        Suggest { found: HashMap::new(), comparisons_left: 20_000 }
    }
}

impl<'a> Suggest<'a> {
    fn closest(&mut self, wanted: &'a str, classes: &[&'a str]) -> Option<&'a str> {
        if let Some(found) = self.found.get(wanted) {
            return *found;
        }
        if classes.len() > self.comparisons_left {
            return None;
        }
        self.comparisons_left -= classes.len();
        let found = closest(wanted, classes.iter().copied());
        self.found.insert(wanted, found);
        found
    }
}

/// What the CRD accepts in a requirement but will not work as meant: Karpenter's runtime validation, or a
/// selection that matches nothing. The CRD's own rules on requirements are checked with the rendered NodePool.
fn requirement(c: &mut Checker, r: &Requirement, path: &str) {
    let values = child(path, "values");
    let op_path = child(path, "operator");
    let reads = [op_path.as_str(), values.as_str()];
    let op = r.operator.as_str();
    let n = r.values.len();
    match op {
        "Exists" | "DoesNotExist" if n > 0 => {
            c.warning(&values, &reads, format!("`{op}` ignores values")).map(|b| b.hint("remove `values`"));
        }
        "NotIn" if n == 0 => {
            c.warning(&values, &reads, "`NotIn` without values excludes nothing".into());
        }
        _ => {}
    }
    // Karpenter's runtime validation refuses values that are not label values; the CRD does not check them.
    if !matches!(op, "Gt" | "Lt" | "Gte" | "Lte") {
        for (i, v) in r.values.iter().enumerate() {
            if let Err(p) = k8s::label_value(v) {
                c.warning(&item(&values, i), &reads, format!("{}; Karpenter will refuse this NodePool", p.message));
            }
        }
    }
    if r.key == "karpenter.sh/capacity-type" {
        for (i, v) in r.values.iter().enumerate() {
            if !matches!(v.as_str(), "spot" | "on-demand" | "reserved") {
                c.warning(&item(&values, i), &reads, format!("capacity type `{v}` matches no instance"))
                    .map(|b| b.expected("`spot`, `on-demand` or `reserved`"));
            }
        }
    }
}

/// Whether the pool may launch Spot capacity (Karpenter launches on-demand only unless the capacity-type
/// requirement allows Spot).
pub(crate) fn allows_spot(pool: &NodePool) -> bool {
    pool.requirements.iter().filter(|r| r.key == "karpenter.sh/capacity-type").any(|r| {
        let spot = r.values.iter().any(|v| v == "spot");
        match r.operator.as_str() {
            "In" => spot,
            "NotIn" => !spot,
            "Exists" => true,
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_sizes_in_gib() {
        assert_eq!(size_gib("20Gi"), Some(20));
        assert_eq!(size_gib("2Ti"), Some(2048));
        assert_eq!(size_gib("100G"), Some(93));
    }
}
