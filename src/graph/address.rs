//! Resource addresses: the stable names (`vpc.main`, `subnet.private["us-west-2a"]`) that tie a blueprint's
//! resources to their entries in state across runs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `<type>.<name>` or `<type>.<name>["<key>"]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Address {
    /// The resource type: the first part, such as `subnet` or `eks_node_group`.
    pub ty: String,
    /// The resource's name within its type: `private`, `controller`.
    pub name: String,
    /// For one of a set made from a map (a subnet per zone): its key, `us-west-2a`.
    pub key: Option<String>,
}

impl Address {
    /// `<ty>.<name>`.
    pub fn new(ty: &str, name: &str) -> Self {
        Address { ty: ty.to_string(), name: name.to_string(), key: None }
    }

    /// `<ty>.<name>["<key>"]`.
    pub fn keyed(ty: &str, name: &str, key: &str) -> Self {
        Address { ty: ty.to_string(), name: name.to_string(), key: Some(key.to_string()) }
    }

    /// Where state keeps the old object of a create-before-destroy replacement, from the moment its successor is
    /// being created until it is deleted: `eks_node_group.controller-deposed`. Not in any graph, so a plan made
    /// while it is there deletes it (after its successor, see [`Address::deposed_of`]).
    pub fn deposed(&self) -> Address {
        Address { name: format!("{}{DEPOSED}", self.name), ..self.clone() }
    }

    /// The address whose old object this is, for a [`Address::deposed`] one.
    pub fn deposed_of(&self) -> Option<Address> {
        let name = self.name.strip_suffix(DEPOSED).filter(|n| !n.is_empty())?;
        Some(Address { name: name.to_string(), ..self.clone() })
    }
}

const DEPOSED: &str = "-deposed";

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.ty, self.name)?;
        if let Some(key) = &self.key {
            write!(f, "[\"{key}\"]")?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
#[error(
    "`{0}` is not a resource address; expected TYPE.NAME or TYPE.NAME[\"KEY\"], such as subnet.private[\"us-west-2a\"]"
)]
/// Text that does not parse as an [`Address`]; its message shows the forms that do.
pub struct BadAddress(String);

impl FromStr for Address {
    type Err = BadAddress;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadAddress(s.to_string());
        let (head, key) = match s.find('[') {
            Some(open) => {
                let rest = &s[open..];
                let inner = rest.strip_prefix("[\"").and_then(|r| r.strip_suffix("\"]")).ok_or_else(bad)?;
                if inner.contains('"') {
                    return Err(bad());
                }
                (&s[..open], Some(inner.to_string()))
            }
            None => (s, None),
        };
        let (ty, name) = head.split_once('.').ok_or_else(bad)?;
        let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !word(ty) || !word(name) {
            return Err(bad());
        }
        Ok(Address { ty: ty.to_string(), name: name.to_string(), key })
    }
}

impl Serialize for Address {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Address {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_plain_and_keyed_addresses() {
        for s in ["vpc.main", "subnet.private[\"us-west-2a\"]", "iam_role.karpenter_node", "node_pool.gpu[\"a.b/c\"]"] {
            let a: Address = s.parse().unwrap();
            assert_eq!(a.to_string(), s);
        }
    }

    #[test]
    fn rejects_malformed_addresses() {
        for s in ["vpc", ".main", "vpc.", "subnet.private[us]", "subnet.private[\"a\"", "a b.c"] {
            assert!(s.parse::<Address>().is_err(), "{s} should be rejected");
        }
    }
}
