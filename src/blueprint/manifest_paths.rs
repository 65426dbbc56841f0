//! From a field of a rendered NodePool or EC2NodeClass back to the blueprint field that wrote it, so that what
//! the CRD refuses is reported at the blueprint's file:line:col. The mapping is mechanical: the object's
//! prefix for the table's fields is dropped (`spec.`, `spec.template.spec.`, `spec.template.metadata.`), each
//! camelCase name becomes snake_case, and the nearest field the user wrote is where the problem is shown. Only
//! kbp's shorthands (`ami_alias`, `root_volume`, `node_class`) and the cluster-wide tags copied into every node
//! class are named here.

use super::tree::{child, Index, Place};

/// The blueprint table of the manifest of `kind` named `name` (`node_pools.default`).
pub(super) fn table(kind: &str, name: &str) -> String {
    child(if kind == "NodePool" { "node_pools" } else { "node_classes" }, name)
}

/// The blueprint path and place of `path` (a violation path such as `spec.template.spec.requirements[0].key`)
/// in the manifest of `kind` named `name`.
pub(super) fn locate<'a>(index: &'a Index, kind: &str, name: &str, path: &str) -> (String, Option<&'a Place>) {
    let prefixes: &[&str] = match kind {
        "NodePool" => &["spec.template.spec.", "spec.template.metadata.", "spec."],
        _ => &["spec."],
    };
    let root = table(kind, name);
    let relative = match path {
        "spec" => "",
        _ => prefixes.iter().find_map(|p| path.strip_prefix(p)).unwrap_or(path),
    };
    let mut segments = split(relative);
    // A CRD field the user did not write but kbp made from its shorthand is shown at the shorthand.
    if let Some(first) = segments.first_mut() {
        if let Some(short) = shorthand(first).filter(|_| index.get(&child(&root, first)).is_none()) {
            *first = short.to_string();
            segments.truncate(1);
        }
    }
    if segments.is_empty() {
        return (root.clone(), index.locate(&root));
    }
    let mut written = root.clone();
    for s in &segments {
        written = match s.strip_prefix('[') {
            Some(_) => format!("{written}{s}"),
            None => child(&written, s),
        };
    }
    // A tag the node class did not set came from `[cluster] tags`.
    if kind == "EC2NodeClass" && segments.first().map(String::as_str) == Some("tags") && index.get(&written).is_none() {
        let cluster = segments[1..].iter().fold("cluster.tags".to_string(), |p, s| child(&p, s));
        if index.get(&cluster).is_some() {
            return (cluster.clone(), index.locate(&cluster));
        }
    }
    let place = index.locate(&written).or_else(|| index.locate(&root));
    (written, place)
}

/// kbp's fields that stand for a whole CRD field.
fn shorthand(crd_field: &str) -> Option<&'static str> {
    match crd_field {
        "ami_selector_terms" => Some("ami_alias"),
        "block_device_mappings" => Some("root_volume"),
        "node_class_ref" => Some("node_class"),
        _ => None,
    }
}

/// `a.fooBar[2].x[some/key]` → `["a", "foo_bar", "[2]", "x", "some/key"]`: names in snake_case, map keys (in
/// brackets in a violation path) as they are, list indexes kept in brackets.
fn split(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        rest = rest.trim_start_matches('.');
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').unwrap_or(inner.len());
            let key = &inner[..end];
            if key.bytes().all(|b| b.is_ascii_digit()) && !key.is_empty() {
                out.push(format!("[{key}]"));
            } else {
                out.push(key.to_string());
            }
            rest = inner.get(end + 1..).unwrap_or("");
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            out.push(snake(&rest[..end]));
            rest = &rest[end..];
        }
    }
    out
}

/// `volumeSize` → `volume_size`, `kmsKeyID` → `kms_key_id`, `httpProtocolIPv6` → `http_protocol_ipv6`.
pub(crate) fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            // A word starts at an upper-case letter after a lower-case one (`volumeSize`), or at the last of a
            // run of capitals when a word of two or more lower-case letters follows (`GCHigh`, but `IPv6`).
            let lower_run = chars[i + 1..].iter().take_while(|n| n.is_ascii_lowercase()).count();
            let starts_word = prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                || (prev.is_some_and(|p| p.is_ascii_uppercase()) && lower_run >= 2);
            if starts_word && !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(*c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_names_become_snake_case() {
        for (crd, blueprint) in [
            ("volumeSize", "volume_size"),
            ("kmsKeyID", "kms_key_id"),
            ("snapshotID", "snapshot_id"),
            ("httpProtocolIPv6", "http_protocol_ipv6"),
            ("associatePublicIPAddress", "associate_public_ip_address"),
            ("minValues", "min_values"),
            ("cpuCFSQuota", "cpu_cfs_quota"),
            ("imageGCHighThresholdPercent", "image_gc_high_threshold_percent"),
            ("tags", "tags"),
        ] {
            assert_eq!(snake(crd), blueprint, "{crd}");
        }
    }

    #[test]
    fn violation_paths_split_into_blueprint_segments() {
        assert_eq!(
            split("requirements[0].minValues"),
            ["requirements", "[0]", "min_values"].map(String::from).to_vec()
        );
        assert_eq!(split("limits[nvidia.com/gpu]"), ["limits", "nvidia.com/gpu"].map(String::from).to_vec());
    }
}
