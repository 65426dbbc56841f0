//! The test harness itself: a private emulator starts, answers the AWS calls kbp depends on through the Rust
//! SDK, is isolated from other tests' emulators, and is gone after Drop. If these fail, every other
//! integration test would fail for reasons that have nothing to do with kbp.

use crate::support::{Emulator, ACCOUNT_ID};

/// The AWS managed policies a Karpenter-ready cluster attaches to its roles; moto has them only when
/// started with MOTO_IAM_LOAD_MANAGED_POLICIES=true, which scripts/emulator.sh sets.
const MANAGED_POLICIES: &[&str] = &[
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKSClusterPolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
    "AmazonSSMManagedInstanceCore",
];

#[tokio::test]
async fn emulator_answers_ec2_describe_vpcs() {
    let em = Emulator::start();
    let vpcs = em
        .ec2()
        .await
        .describe_vpcs()
        .send()
        .await
        .unwrap_or_else(|e| panic!("DescribeVpcs: {e:?}\nlog:\n{}", em.log()));
    // moto creates a default VPC per region, as AWS does for new accounts.
    assert!(vpcs.vpcs().iter().any(|v| v.is_default() == Some(true)), "expected a default VPC in {:?}", vpcs.vpcs());
}

#[tokio::test]
async fn emulator_has_aws_managed_iam_policies() {
    let em = Emulator::start();
    let iam = em.iam().await;
    for name in MANAGED_POLICIES {
        let arn = format!("arn:aws:iam::aws:policy/{name}");
        let policy =
            iam.get_policy().policy_arn(&arn).send().await.unwrap_or_else(|e| panic!("GetPolicy {arn}: {e:?}"));
        let policy = policy.policy().expect("GetPolicy returns a policy");
        assert_eq!(policy.policy_name(), Some(*name));
        assert_eq!(policy.arn(), Some(arn.as_str()));
    }
}

#[tokio::test]
async fn emulator_answers_sts_get_caller_identity() {
    let em = Emulator::start();
    let me = em.sts().await.get_caller_identity().send().await.expect("GetCallerIdentity");
    assert_eq!(me.account(), Some(ACCOUNT_ID));
}

#[tokio::test]
async fn two_emulators_are_isolated() {
    let a = Emulator::start();
    let b = Emulator::start();
    assert_ne!(a.port, b.port);

    let created = a.ec2().await.create_vpc().cidr_block("10.42.0.0/16").send().await.expect("CreateVpc in emulator a");
    let vpc_id = created.vpc().and_then(|v| v.vpc_id()).expect("CreateVpc returns the VPC id").to_string();

    let ids = |out: aws_sdk_ec2::operation::describe_vpcs::DescribeVpcsOutput| -> Vec<String> {
        out.vpcs().iter().filter_map(|v| v.vpc_id().map(str::to_string)).collect()
    };
    let in_a = ids(a.ec2().await.describe_vpcs().send().await.expect("DescribeVpcs a"));
    let in_b = ids(b.ec2().await.describe_vpcs().send().await.expect("DescribeVpcs b"));
    assert!(in_a.contains(&vpc_id), "{vpc_id} missing from emulator a: {in_a:?}");
    assert!(!in_b.contains(&vpc_id), "{vpc_id} leaked into emulator b: {in_b:?}");
}

#[test]
fn dropping_the_emulator_stops_it() {
    let em = Emulator::start();
    let addr = format!("127.0.0.1:{}", em.port);
    std::net::TcpStream::connect(&addr).expect("emulator listens while alive");
    drop(em);
    assert!(std::net::TcpStream::connect(&addr).is_err(), "emulator still listening on {addr} after drop");
}
