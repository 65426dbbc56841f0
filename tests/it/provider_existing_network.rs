//! A network the stack uses but does not own (`[vpc] id`): `aws_existing_vpc` and `aws_existing_subnet` only
//! check what the user made and never delete it, and `aws_subnet_tags` adds to such a subnet only the tags it
//! manages, never kbp's own, and puts back what they held before. The VPC and subnets are made with the raw
//! SDK, as a user's network would be, and read back with it.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::Tag;
use kbp::graph::{Address, Attrs};
use kbp::providers::{Applied, ProviderError};
use serde_json::{json, Value};

use crate::support::provider::*;

const VPC: &str = "aws_existing_vpc";
const SUBNET: &str = "aws_existing_subnet";
const TAGS: &str = "aws_subnet_tags";

/// A user's network, made outside kbp.
impl Harness {
    async fn user_vpc(&self, cidr: &str) -> String {
        let out = self.ec2.create_vpc().cidr_block(cidr).send().await.unwrap();
        out.vpc().and_then(|v| v.vpc_id()).unwrap().to_string()
    }

    async fn user_subnet(&self, vpc_id: &str, cidr: &str, tags: &[(&str, &str)]) -> String {
        let out = self.ec2.create_subnet().vpc_id(vpc_id).cidr_block(cidr).availability_zone("us-west-2a").send();
        let id = out.await.unwrap().subnet().and_then(|s| s.subnet_id()).unwrap().to_string();
        if !tags.is_empty() {
            let tags = tags.iter().map(|(k, v)| Tag::builder().key(*k).value(*v).build()).collect();
            self.ec2.create_tags().resources(&id).set_tags(Some(tags)).send().await.unwrap();
        }
        id
    }

    /// Every tag on subnet `id`, as the SDK reads it.
    async fn subnet_tags(&self, id: &str) -> BTreeMap<String, String> {
        let out = self.ec2.describe_subnets().subnet_ids(id).send().await.unwrap();
        tag_map(out.subnets()[0].tags())
    }

    async fn try_create(&self, kind: &str, address: &str, attrs: Value) -> Result<Applied, ProviderError> {
        let (address, attrs): (Address, Attrs) = (address.parse().unwrap(), obj(attrs));
        self.provider(kind).create(&self.cx, &desired(&address, &attrs)).await
    }
}

fn pairs(p: &[(&str, &str)]) -> BTreeMap<String, String> {
    p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// What update and delete are handed as `prior` for a resource applied with `attrs` and `applied`: the stored
/// attributes with the stored outputs under them, where `aws_subnet_tags` finds the values it remembered.
fn prior(attrs: &Value, applied: &Applied) -> Attrs {
    let mut prior = applied.outputs.clone();
    prior.extend(obj(attrs.clone()));
    prior
}

fn no_kbp_tags(tags: &BTreeMap<String, String>) -> bool {
    !tags.keys().any(|k| k.starts_with("kbp:"))
}

#[tokio::test]
async fn existing_vpc_is_checked_and_never_changed_or_deleted() {
    let h = Harness::start().await;
    let vpc_id = h.user_vpc("10.1.0.0/16").await;
    let attrs = json!({ "vpc_id": vpc_id });

    let Applied { id, outputs } = h.create(VPC, "vpc.main", &attrs).await;
    assert_eq!(id, vpc_id);
    assert_eq!(outputs, obj(json!({ "id": vpc_id, "cidr_block": "10.1.0.0/16" })));
    h.update_in_place(VPC, "vpc.main", &id, &attrs).await;

    h.provider(VPC).delete(&h.cx, &id, &obj(attrs.clone())).await.unwrap();
    let vpcs = h.ec2.describe_vpcs().vpc_ids(&vpc_id).send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "the user's VPC is still there");
    assert!(no_kbp_tags(&tag_map(vpcs.vpcs()[0].tags())), "kbp tagged a VPC it does not own");
    assert!(h.provider(VPC).read(&h.cx, &id, &obj(attrs)).await.unwrap().is_some());
}

#[tokio::test]
async fn an_unknown_vpc_is_an_error_that_points_at_the_blueprint() {
    let h = Harness::start().await;
    let missing = "vpc-0123456789abcdef0";
    let e = h.try_create(VPC, "vpc.main", json!({ "vpc_id": missing })).await.unwrap_err();
    assert!(e.message.contains(missing), "{e}");
    assert!(e.hint.as_deref().is_some_and(|hint| hint.contains("`vpc.id`")), "{:?}", e.hint);
    assert_eq!(h.provider(VPC).read(&h.cx, missing, &Attrs::new()).await.unwrap(), None);
}

#[tokio::test]
async fn existing_subnet_is_checked_in_its_vpc_and_never_deleted() {
    let h = Harness::start().await;
    let vpc_id = h.user_vpc("10.1.0.0/16").await;
    let subnet_id = h.user_subnet(&vpc_id, "10.1.1.0/24", &[("Name", "prod-a")]).await;
    let attrs = json!({ "subnet_id": subnet_id, "vpc_id": vpc_id });

    let Applied { id, outputs } = h.create(SUBNET, "subnet.private[\"us-west-2a\"]", &attrs).await;
    assert_eq!(id, subnet_id);
    let want =
        json!({ "id": subnet_id, "availability_zone": "us-west-2a", "vpc_id": vpc_id, "cidr_block": "10.1.1.0/24" });
    assert_eq!(outputs, obj(want));

    h.provider(SUBNET).delete(&h.cx, &id, &obj(attrs)).await.unwrap();
    assert_eq!(h.subnet_tags(&subnet_id).await, pairs(&[("Name", "prod-a")]), "the subnet is there, untouched");
}

#[tokio::test]
async fn an_unknown_subnet_or_one_of_another_vpc_is_refused() {
    let h = Harness::start().await;
    let (vpc_a, vpc_b) = (h.user_vpc("10.1.0.0/16").await, h.user_vpc("10.2.0.0/16").await);
    let in_a = h.user_subnet(&vpc_a, "10.1.1.0/24", &[]).await;
    let address = "subnet.private[\"us-west-2a\"]";

    let e = h.try_create(SUBNET, address, json!({ "subnet_id": in_a, "vpc_id": vpc_b })).await.unwrap_err();
    assert!(e.message.contains(&format!("{in_a} is in {vpc_a}, not {vpc_b}")), "{e}");
    assert!(e.hint.is_some());

    let missing = "subnet-0123456789abcdef0";
    let e = h.try_create(SUBNET, address, json!({ "subnet_id": missing, "vpc_id": vpc_a })).await.unwrap_err();
    assert!(e.message.contains(missing), "{e}");
    assert!(e.hint.as_deref().is_some_and(|hint| hint.contains("`vpc.private_subnet_ids`")), "{:?}", e.hint);
    assert_eq!(h.provider(SUBNET).read(&h.cx, missing, &Attrs::new()).await.unwrap(), None);
}

#[tokio::test]
async fn subnet_tags_change_only_their_keys_and_put_back_what_was_there() {
    let h = Harness::start().await;
    let vpc_id = h.user_vpc("10.1.0.0/16").await;
    let before = [
        ("Name", "prod-a"),
        ("karpenter.sh/discovery", "other-cluster"),
        ("kubernetes.io/role/internal-elb", "legacy"),
    ];
    let subnet_id = h.user_subnet(&vpc_id, "10.1.1.0/24", &before).await;
    let address = "subnet_tags.private[\"us-west-2a\"]";
    let p = h.provider(TAGS);

    // Create: the managed keys are set, the rest of the subnet's tags stay, and no kbp tag appears. The
    // harness checks that a read right after (a refresh) reports the desired attributes: no change planned.
    let v1 = json!({ "subnet_id": subnet_id, "tags": {
        "karpenter.sh/discovery": "test-stack", "kubernetes.io/role/internal-elb": "1", "example.com/owner": "kbp" } });
    let created = h.create(TAGS, address, &v1).await;
    assert_eq!(created.id, subnet_id);
    let after_create = h.subnet_tags(&subnet_id).await;
    assert_eq!(
        after_create,
        pairs(&[
            ("Name", "prod-a"),
            ("karpenter.sh/discovery", "test-stack"),
            ("kubernetes.io/role/internal-elb", "1"),
            ("example.com/owner", "kbp"),
        ])
    );
    assert!(no_kbp_tags(&after_create), "{after_create:?}");
    let remembered = json!({ "karpenter.sh/discovery": "other-cluster", "kubernetes.io/role/internal-elb": "legacy" });
    assert_eq!(created.outputs["previous_tags"], remembered);

    // A managed key removed by hand reads as absent (drift the plan repairs); unmanaged keys are not read.
    h.ec2
        .delete_tags()
        .resources(&subnet_id)
        .tags(Tag::builder().key("example.com/owner").build())
        .send()
        .await
        .unwrap();
    let read = p.read(&h.cx, &subnet_id, &obj(v1.clone())).await.unwrap().unwrap();
    let drifted = json!({ "karpenter.sh/discovery": "test-stack", "kubernetes.io/role/internal-elb": "1" });
    assert_eq!(read.attrs, obj(json!({ "subnet_id": subnet_id, "tags": drifted })));

    // Update: change one key, drop one that had a value before (put back) and one that had none (deleted),
    // add one.
    let v2 = json!({ "subnet_id": subnet_id, "tags": {
        "karpenter.sh/discovery": "test-stack-2", "example.com/team": "platform" } });
    let d2 = obj(v2.clone());
    let (addr, id) = (address.parse::<Address>().unwrap(), subnet_id.clone());
    let updated = p.update(&h.cx, &id, &prior(&v1, &created), &desired(&addr, &d2)).await.unwrap();
    let after_update = h.subnet_tags(&subnet_id).await;
    assert_eq!(
        after_update,
        pairs(&[
            ("Name", "prod-a"),
            ("karpenter.sh/discovery", "test-stack-2"),
            ("kubernetes.io/role/internal-elb", "legacy"),
            ("example.com/team", "platform"),
        ])
    );
    assert!(no_kbp_tags(&after_update), "{after_update:?}");
    assert_eq!(updated.outputs["previous_tags"], json!({ "karpenter.sh/discovery": "other-cluster" }));
    h.assert_reads(TAGS, &subnet_id, &d2).await;

    // Delete: the overwritten value comes back, the added key goes, the user's own tags stay. Twice is fine.
    for _ in 0..2 {
        p.delete(&h.cx, &subnet_id, &prior(&v2, &updated)).await.unwrap();
        assert_eq!(h.subnet_tags(&subnet_id).await, pairs(&before), "the subnet's tags are as the user left them");
    }
}

#[tokio::test]
async fn subnet_tags_of_a_gone_subnet_are_gone_and_deleting_them_succeeds() {
    let h = Harness::start().await;
    let vpc_id = h.user_vpc("10.1.0.0/16").await;
    let subnet_id = h.user_subnet(&vpc_id, "10.1.1.0/24", &[]).await;
    let attrs = json!({ "subnet_id": subnet_id, "tags": { "karpenter.sh/discovery": "test-stack" } });
    let created = h.create(TAGS, "subnet_tags.private[\"us-west-2a\"]", &attrs).await;

    h.ec2.delete_subnet().subnet_id(&subnet_id).send().await.unwrap();
    let p = h.provider(TAGS);
    assert_eq!(p.read(&h.cx, &subnet_id, &obj(attrs.clone())).await.unwrap(), None);
    p.delete(&h.cx, &subnet_id, &prior(&attrs, &created)).await.unwrap();

    let e = h.try_create(TAGS, "subnet_tags.private[\"us-west-2b\"]", attrs).await.unwrap_err();
    assert!(e.message.contains(&subnet_id) && e.hint.is_some(), "{e}");
}
