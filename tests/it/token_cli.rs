//! `kbp token` as kubectl's exec plugin runs it: an ExecCredential whose token is a presigned STS
//! GetCallerIdentity URL for the named cluster, signed with the credentials of the AWS chain.

use std::process::{Command, Stdio};

use base64::Engine;

#[test]
fn token_is_an_exec_credential_for_the_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kbp"))
        .args(["token", "--cluster", "sbx-42", "--region", "eu-central-1"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AWS_ACCESS_KEY_ID", "AKIDTOKENTEST")
        .env("AWS_SECRET_ACCESS_KEY", "secret")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", dir.path().join("none"))
        .env("AWS_SHARED_CREDENTIALS_FILE", dir.path().join("none"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "kubectl shows stderr to the user: {}", String::from_utf8_lossy(&out.stderr));
    let cred: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cred["kind"], "ExecCredential");
    assert_eq!(cred["apiVersion"], "client.authentication.k8s.io/v1beta1");
    assert!(cred["status"]["expirationTimestamp"].as_str().unwrap().ends_with('Z'));
    let token = cred["status"]["token"].as_str().unwrap();
    let encoded = token.strip_prefix("k8s-aws-v1.").expect("EKS token prefix");
    let url = String::from_utf8(base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(encoded).unwrap()).unwrap();
    assert!(
        url.starts_with("https://sts.eu-central-1.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&"),
        "{url}"
    );
    assert!(url.contains("X-Amz-Credential=AKIDTOKENTEST%2F"), "{url}");
    assert!(url.contains("%2Feu-central-1%2Fsts%2Faws4_request"), "{url}");
    assert!(url.contains("X-Amz-SignedHeaders=host%3Bx-k8s-aws-id"), "the cluster header is signed: {url}");
    assert!(url.contains("X-Amz-Expires=60") && url.contains("X-Amz-Signature="), "{url}");
}
