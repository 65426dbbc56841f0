//! Computed defaults: the values that depend on other fields (zone names from the region, subnets carved from
//! the VPC CIDR unless the VPC is an existing one, role names from the cluster name, the root device from the
//! AMI family), then the typed [`Blueprint`]. Literal defaults were already filled in by the walker.

use ipnet::Ipv4Net;
use serde_json::{Map, Value as Json};

use super::model::Blueprint;
use super::rules::karpenter::default_device_name;
use super::tree::Index;
use crate::diag::Diagnostics;

pub(crate) fn complete(mut doc: Json, index: &mut Index, diags: &mut Diagnostics) -> Option<Blueprint> {
    let cluster_name = doc["cluster"]["name"].as_str().unwrap_or_default().to_string();
    let region = doc["cluster"]["region"].as_str().unwrap_or_default().to_string();
    if let Some(vpc) = doc.get_mut("vpc").and_then(Json::as_object_mut) {
        vpc_defaults(vpc, &region, index, diags);
    }
    if let Some(k) = doc.get_mut("karpenter").and_then(Json::as_object_mut) {
        k.entry("node_role_name").or_insert_with(|| format!("KarpenterNodeRole-{cluster_name}").into());
        k.entry("controller_role_name").or_insert_with(|| format!("KarpenterController-{cluster_name}").into());
    }
    if let Some(classes) = doc.get_mut("node_classes").and_then(Json::as_object_mut) {
        for class in classes.values_mut() {
            let spec: std::collections::BTreeMap<String, Json> =
                class.as_object().map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect()).unwrap_or_default();
            let family = crate::blueprint::model::ami_family(class["ami_alias"].as_str().unwrap_or_default(), &spec);
            let device = default_device_name(&family);
            if let Some(volume) = class.get_mut("root_volume").and_then(Json::as_object_mut) {
                volume.entry("device_name").or_insert_with(|| device.into());
            }
        }
    }
    if let Some(addons) = doc.get_mut("addons").and_then(Json::as_object_mut) {
        // The model lists enabled add-ons only; `enabled` is how the blueprint says "not this default one".
        addons.retain(|_, a| a["enabled"] != Json::Bool(false));
        for a in addons.values_mut().filter_map(Json::as_object_mut) {
            a.remove("enabled");
        }
    }
    match serde_json::from_value(doc) {
        Ok(bp) => Some(bp),
        Err(e) => {
            // The walker produces every field with the right type; this is a kbp bug, reported rather than hidden.
            let b = diags.error(0, 0..0, format!("internal error: the checked blueprint does not fit the model: {e}"));
            b.hint("please report this with the blueprint that caused it");
            None
        }
    }
}

/// `cidrsubnet(net, newbits, num)` as in Terraform: the `num`-th block of the prefix `newbits` longer than `net`.
pub(crate) fn cidrsubnet(net: Ipv4Net, newbits: u8, num: u32) -> Option<Ipv4Net> {
    let prefix = net.prefix_len().checked_add(newbits).filter(|p| *p <= 32)?;
    net.subnets(prefix).ok()?.nth(usize::try_from(num).ok()?)
}

fn vpc_defaults(vpc: &mut Map<String, Json>, region: &str, index: &mut Index, diags: &mut Diagnostics) {
    if vpc.contains_key("id") {
        // An existing network's zones and address ranges are its owner's: kbp computes none (preflight reads the
        // subnets' zones from AWS). What the user wrote of them is refused by validation.
        return;
    }
    if let Some(n) = vpc.get("azs").and_then(Json::as_u64) {
        let names: Vec<Json> =
            (b'a'..=b'z').take(n as usize).map(|c| format!("{region}{}", c as char).into()).collect();
        vpc.insert("azs".into(), Json::Array(names));
    }
    let zones = vpc.get("azs").and_then(Json::as_array).map_or(0, Vec::len) as u32;
    let cidr: Option<Ipv4Net> = vpc.get("cidr").and_then(Json::as_str).and_then(|s| s.parse().ok());
    for (field, newbits, first) in [("private_subnets", 4u8, 0u32), ("public_subnets", 8, 48)] {
        if vpc.contains_key(field) {
            continue;
        }
        let computed: Option<Vec<Ipv4Net>> = cidr.and_then(|c| {
            (0..zones).map(|i| cidrsubnet(c, newbits, first + i).filter(|s| s.prefix_len() <= 28)).collect()
        });
        let subnets = match computed {
            Some(s) => s.iter().map(|n| Json::String(n.to_string())).collect(),
            None => {
                let path = format!("vpc.{field}");
                if !index.is_rejected("vpc.cidr") {
                    let (source, span) = index.locate("vpc.cidr").map_or((0, 0..0), |p| (p.source, p.span.clone()));
                    let (c, p) = (cidr.map(|c| c.to_string()).unwrap_or_default(), newbits);
                    diags
                        .error(source, span, format!("the VPC CIDR `{c}` is too small for the default {field}"))
                        .path(&path)
                        .expected(format!("a VPC prefix of at most /{}", 28 - p))
                        .hint(format!("set `vpc.{field}` explicitly, one CIDR per zone"));
                }
                index.reject(&path);
                Vec::new()
            }
        };
        vpc.insert(field.into(), Json::Array(subnets));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidrsubnet_matches_terraform() {
        let vpc: Ipv4Net = "10.0.0.0/16".parse().expect("valid");
        assert_eq!(cidrsubnet(vpc, 4, 2).map(|n| n.to_string()), Some("10.0.32.0/20".into()));
        assert_eq!(cidrsubnet(vpc, 8, 48).map(|n| n.to_string()), Some("10.0.48.0/24".into()));
        let small: Ipv4Net = "192.168.0.0/20".parse().expect("valid");
        assert_eq!(cidrsubnet(small, 4, 1).map(|n| n.to_string()), Some("192.168.1.0/24".into()));
        assert_eq!(cidrsubnet(small, 4, 16), None);
        assert_eq!(cidrsubnet(small, 13, 0), None);
    }
}
