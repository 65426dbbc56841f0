//! KMS: the key that envelope-encrypts the cluster's Kubernetes secrets.

mod key;

use super::Registry;

pub fn register(r: &mut Registry) {
    r.add(key::Key);
}
