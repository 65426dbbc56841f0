//! Karpenter's CRDs from a chart's OCI artifact (kbp::kubernetes::oci), against a real registry: Debian's
//! `docker-registry` (the CNCF distribution registry) on a free loopback port, with a Helm-style chart pushed to
//! it by the test. The anonymous bearer-token flow, redirects to a CDN and corrupted blobs are tested against
//! a small in-test HTTP server, since the real registry would need a token service for them.

use std::collections::HashMap;
use std::io::Write;
use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flate2::write::GzEncoder;
use kbp::kubernetes::oci::{crds_from_chart, crds_from_dir, ChartCache, ChartRef, OciError};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const VERSION: &str = "1.14.1";
const REPOSITORY: &str = "karpenter/karpenter";
const CRD_NAMES: [&str; 2] = ["ec2nodeclasses.karpenter.k8s.aws", "nodepools.karpenter.sh"];

const NODEPOOL_CRD: &str = r#"---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.18.0
  name: nodepools.karpenter.sh
spec:
  group: karpenter.sh
  names:
    categories: [karpenter]
    kind: NodePool
    listKind: NodePoolList
    plural: nodepools
    singular: nodepool
  scope: Cluster
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          description: NodePool is the Schema for the NodePools API
          type: object
          properties:
            apiVersion: {type: string}
            kind: {type: string}
            metadata: {type: object}
            spec:
              type: object
              properties:
                weight:
                  type: integer
                  format: int32
                  minimum: 1
                  maximum: 100
            status: {type: object}
      subresources:
        status: {}
"#;

const EC2NODECLASS_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.18.0
  name: ec2nodeclasses.karpenter.k8s.aws
spec:
  group: karpenter.k8s.aws
  names:
    categories: [karpenter]
    kind: EC2NodeClass
    listKind: EC2NodeClassList
    plural: ec2nodeclasses
    shortNames: [ec2nc, ec2ncs]
    singular: ec2nodeclass
  scope: Cluster
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          description: EC2NodeClass is the Schema for the EC2NodeClass API
          type: object
          properties:
            apiVersion: {type: string}
            kind: {type: string}
            metadata: {type: object}
            spec:
              type: object
              required: [amiSelectorTerms]
              properties:
                role: {type: string}
                amiSelectorTerms:
                  type: array
                  items:
                    type: object
                    properties:
                      alias: {type: string}
            status: {type: object}
      subresources:
        status: {}
"#;

/// A YAML file in crds/ that is not a CRD, and a CRD outside crds/: neither may come back.
const NOT_A_CRD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-a-crd\ndata: {}\n";
const TEMPLATE_CRD: &str =
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: templated.example.com\n";

/// A Helm chart archive as `helm package` lays it out; the CRD files come in the opposite of name order.
fn chart_archive() -> Vec<u8> {
    let files = [
        (
            "karpenter/Chart.yaml",
            format!("apiVersion: v2\nname: karpenter\nversion: {VERSION}\nappVersion: {VERSION}\n"),
        ),
        ("karpenter/values.yaml", "replicas: 2\n".to_string()),
        ("karpenter/templates/x.yaml", TEMPLATE_CRD.to_string()),
        ("karpenter/crds/karpenter.sh_nodepools.yaml", NODEPOOL_CRD.to_string()),
        ("karpenter/crds/karpenter.k8s.aws_ec2nodeclasses.yml", EC2NODECLASS_CRD.to_string()),
        ("karpenter/crds/values-schema.yaml", NOT_A_CRD.to_string()),
        ("karpenter/crds/notes.txt", TEMPLATE_CRD.to_string()),
    ];
    let mut tar = tar::Builder::new(GzEncoder::new(Vec::new(), flate2::Compression::default()));
    for (path, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(1_700_000_000);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, path, text.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect::<String>())
}

fn helm_manifest(config: &[u8], layer_digest: &str, layer_size: usize) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": digest(config), "size": config.len()},
        "layers": [{
            "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
            "digest": layer_digest,
            "size": layer_size,
        }],
        "annotations": {"org.opencontainers.image.title": "karpenter", "org.opencontainers.image.version": VERSION},
    }))
    .unwrap()
}

fn helm_config() -> Vec<u8> {
    serde_json::to_vec(&json!({"apiVersion": "v2", "name": "karpenter", "version": VERSION})).unwrap()
}

fn names(crds: &[Value]) -> Vec<&str> {
    crds.iter().map(|crd| crd["metadata"]["name"].as_str().unwrap()).collect()
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `docker-registry serve` with filesystem storage in a temp dir, on a free loopback port, no auth; killed on drop.
struct Registry {
    child: Option<Child>,
    port: u16,
    dir: TempDir,
}

impl Registry {
    async fn start() -> Registry {
        let binary = registry_binary();
        let mut failures = Vec::new();
        // A free port can be taken by another test process before the registry binds it: try a few.
        for _ in 0..5 {
            let dir = tempfile::Builder::new().prefix("kbp-registry-").tempdir().unwrap();
            let port = free_port();
            let config = dir.path().join("config.yml");
            let storage = dir.path().join("storage");
            std::fs::write(
                &config,
                format!(
                    "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
                    storage.display()
                ),
            )
            .unwrap();
            let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
            let child = Command::new(&binary)
                .arg("serve")
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
            let mut registry = Registry { child: Some(child), port, dir };
            match registry.wait_ready().await {
                Ok(()) => return registry,
                Err(why) => failures.push(format!("port {port}: {why}")),
            }
        }
        panic!("docker-registry did not start:\n{}", failures.join("\n"));
    }

    async fn wait_ready(&mut self) -> Result<(), String> {
        let url = format!("http://127.0.0.1:{}/v2/", self.port);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                return Err(format!("exited with {status}: {}", self.log()));
            }
            if let Ok(response) = reqwest::get(&url).await {
                if response.status() == 200 {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(format!("GET {url} did not answer 200 within 20 s: {}", self.log()))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    fn chart(&self) -> ChartRef {
        format!("oci://127.0.0.1:{}/{REPOSITORY}", self.port).parse().unwrap()
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Pushes `archive` as a Helm chart artifact, the way `helm push` does: config and chart blobs (monolithic
    /// uploads), then the OCI image manifest under `tag`.
    async fn push_chart(&self, tag: &str, archive: &[u8]) {
        let base = format!("http://127.0.0.1:{}", self.port);
        let http = reqwest::Client::new();
        let config = helm_config();
        for blob in [&config[..], archive] {
            let started = http.post(format!("{base}/v2/{REPOSITORY}/blobs/uploads/")).send().await.unwrap();
            assert_eq!(started.status(), 202, "start upload: {}", started.text().await.unwrap());
            let location = started.headers()["location"].to_str().unwrap().to_string();
            let location = if location.starts_with('/') { format!("{base}{location}") } else { location };
            let separator = if location.contains('?') { '&' } else { '?' };
            let put = http
                .put(format!("{location}{separator}digest={}", urlencoding::encode(&digest(blob))))
                .header("content-type", "application/octet-stream")
                .body(blob.to_vec())
                .send()
                .await
                .unwrap();
            assert_eq!(put.status(), 201, "finish upload: {}", put.text().await.unwrap());
        }
        let manifest = helm_manifest(&config, &digest(archive), archive.len());
        let put = http
            .put(format!("{base}/v2/{REPOSITORY}/manifests/{tag}"))
            .header("content-type", "application/vnd.oci.image.manifest.v1+json")
            .body(manifest)
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), 201, "put manifest: {}", put.text().await.unwrap());
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The registry binary, or a failure that says how to install it: these tests must not pass by skipping.
fn registry_binary() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).map(|dir| dir.join("docker-registry")).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path.into_iter().chain([PathBuf::from("/usr/bin/docker-registry")]).find(|p| p.is_file()).unwrap_or_else(|| {
        panic!(
            "docker-registry (the CNCF distribution registry) is not installed; these tests need it.\n  \
             install it with `apt-get install -y docker-registry`, or run scripts/test.sh, which does"
        )
    })
}

fn cache_files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(cache_files(&path, extension));
        } else if path.extension().is_some_and(|e| e == extension) {
            found.push(path);
        }
    }
    found
}

#[tokio::test]
async fn pulls_the_chart_and_keeps_only_the_crds_under_crds_sorted() {
    let registry = Registry::start().await;
    let archive = chart_archive();
    registry.push_chart(VERSION, &archive).await;
    let cache_dir = TempDir::new().unwrap();

    let pulled = ChartCache::at(cache_dir.path()).chart(&registry.chart(), VERSION).await.unwrap();

    assert_eq!(pulled, archive);
    let crds = crds_from_chart(&pulled).unwrap();
    assert_eq!(names(&crds), CRD_NAMES);
    assert_eq!(
        crds[1]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["weight"]
            ["maximum"],
        100
    );
    let [archive_file] = &cache_files(cache_dir.path(), "tgz")[..] else { panic!("one cached archive expected") };
    assert!(
        archive_file.ends_with(format!("127.0.0.1_{}/{REPOSITORY}/{VERSION}.tgz", registry.port)),
        "{}",
        archive_file.display()
    );
    let record: Value = serde_json::from_slice(&std::fs::read(archive_file.with_extension("json")).unwrap()).unwrap();
    assert_eq!(record["archive_digest"], digest(&archive));
    assert!(record["manifest_digest"].as_str().unwrap().starts_with("sha256:"), "{record}");
}

#[tokio::test]
async fn a_second_pull_is_served_from_the_cache_with_the_registry_stopped() {
    let mut registry = Registry::start().await;
    let archive = chart_archive();
    registry.push_chart(VERSION, &archive).await;
    let cache_dir = TempDir::new().unwrap();
    let chart = registry.chart();
    ChartCache::at(cache_dir.path()).chart(&chart, VERSION).await.unwrap();

    registry.stop();
    let again = ChartCache::at(cache_dir.path()).chart(&chart, VERSION).await.unwrap();

    assert_eq!(again, archive);
    // And the registry is really gone: a version not in the cache cannot be had.
    let err = ChartCache::at(cache_dir.path()).chart(&chart, "1.14.2").await.unwrap_err();
    assert!(matches!(err, OciError::Network { .. }), "{err}");
}

#[tokio::test]
async fn a_corrupted_cache_file_is_detected_and_pulled_again() {
    let mut registry = Registry::start().await;
    let archive = chart_archive();
    registry.push_chart(VERSION, &archive).await;
    let cache_dir = TempDir::new().unwrap();
    let cache = ChartCache::at(cache_dir.path());
    let chart = registry.chart();
    cache.chart(&chart, VERSION).await.unwrap();
    let [archive_file] = &cache_files(cache_dir.path(), "tgz")[..] else { panic!("one cached archive expected") };
    let mut corrupted = archive.clone();
    corrupted[archive.len() / 2] ^= 0xff;
    std::fs::write(archive_file, &corrupted).unwrap();

    let repulled = cache.chart(&chart, VERSION).await.unwrap();

    assert_eq!(repulled, archive);
    assert_eq!(std::fs::read(archive_file).unwrap(), archive, "the cache holds the good archive again");
    // With the registry gone a corrupted archive is an error, never returned.
    std::fs::write(archive_file, &corrupted).unwrap();
    registry.stop();
    let err = cache.chart(&chart, VERSION).await.unwrap_err();
    assert!(matches!(err, OciError::Network { .. }), "{err}");
}

/// The way out a registry's failure names: a local chart (its CRDs and the controller's templates).
const AIR_GAPPED: &str = "set karpenter.chart to a local chart directory or .tgz";

#[tokio::test]
async fn an_unknown_version_names_it_and_the_air_gapped_way_out() {
    let registry = Registry::start().await;
    registry.push_chart(VERSION, &chart_archive()).await;
    let cache_dir = TempDir::new().unwrap();

    let err = ChartCache::at(cache_dir.path()).chart(&registry.chart(), "9.9.9").await.unwrap_err();

    let text = err.to_string();
    assert!(matches!(err, OciError::VersionNotFound { .. }), "{text}");
    assert!(
        text.starts_with(&format!(
            "chart oci://127.0.0.1:{}/{REPOSITORY} has no version 9.9.9 (HTTP 404",
            registry.port
        )),
        "{text}"
    );
    assert!(text.contains("check karpenter.version") && text.contains(AIR_GAPPED), "{text}");
    assert!(cache_files(cache_dir.path(), "tgz").is_empty());
}

#[tokio::test]
async fn an_unreachable_registry_is_named_with_the_air_gapped_way_out() {
    let port = free_port();
    let chart: ChartRef = format!("oci://127.0.0.1:{port}/{REPOSITORY}").parse().unwrap();
    let cache_dir = TempDir::new().unwrap();

    let err = ChartCache::at(cache_dir.path()).chart(&chart, VERSION).await.unwrap_err();

    let text = err.to_string();
    assert!(matches!(err, OciError::Network { .. }), "{text}");
    assert!(text.starts_with(&format!("cannot reach registry 127.0.0.1:{port} for chart {chart}")), "{text}");
    assert!(text.contains(AIR_GAPPED), "{text}");
}

/// What the in-test registry and its CDN saw: which server, the path with query, the Authorization header.
type Seen = Arc<Mutex<Vec<(&'static str, String, Option<String>)>>>;

/// A registry that hands out anonymous tokens (as public.ecr.aws does), answers the first blob GET with 503 and
/// then redirects blobs to a "CDN" on another port; `private/…` wants Basic credentials.
struct TokenRegistry {
    port: u16,
    seen: Seen,
}

const TOKEN: &str = "anonymous-token-123";

impl TokenRegistry {
    async fn start(manifests: HashMap<String, Vec<u8>>, blobs: HashMap<String, Vec<u8>>) -> TokenRegistry {
        let registry = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let cdn = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = registry.local_addr().unwrap().port();
        let cdn_port = cdn.local_addr().unwrap().port();
        let seen: Seen = Arc::default();
        let blobs = Arc::new(blobs);
        let blob_gets = Arc::new(Mutex::new(0));
        let cdn_blobs = blobs.clone();
        serve(cdn, "cdn", seen.clone(), move |path, _auth| {
            match path.strip_prefix("/blob/").and_then(|d| cdn_blobs.get(d)) {
                Some(bytes) => (200, vec![], bytes.clone()),
                None => (404, vec![], vec![]),
            }
        });
        serve(registry, "registry", seen.clone(), move |path, auth| {
            let challenge =
                format!(r#"Bearer realm="http://127.0.0.1:{port}/token",service="fake-registry",scope="aws""#);
            if path.starts_with("/token?") {
                return (200, vec![], format!(r#"{{"access_token":"{TOKEN}","expires_in":300}}"#).into_bytes());
            }
            if path.starts_with("/v2/private/") {
                return (401, vec![("WWW-Authenticate".into(), r#"Basic realm="fake""#.into())], vec![]);
            }
            if auth != Some(format!("Bearer {TOKEN}")) {
                return (
                    401,
                    vec![("WWW-Authenticate".into(), challenge)],
                    br#"{"errors":[{"code":"UNAUTHORIZED"}]}"#.to_vec(),
                );
            }
            if let Some(tag) = path.strip_prefix("/v2/charts/karpenter/manifests/") {
                return match manifests.get(tag) {
                    Some(m) => (
                        200,
                        vec![("Content-Type".into(), "application/vnd.oci.image.manifest.v1+json".into())],
                        m.clone(),
                    ),
                    None => (
                        404,
                        vec![],
                        br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#.to_vec(),
                    ),
                };
            }
            if let Some(digest) = path.strip_prefix("/v2/charts/karpenter/blobs/") {
                let mut gets = blob_gets.lock().unwrap();
                *gets += 1;
                if *gets == 1 {
                    return (503, vec![], b"try again".to_vec());
                }
                return (307, vec![("Location".into(), format!("http://127.0.0.1:{cdn_port}/blob/{digest}"))], vec![]);
            }
            (404, vec![], vec![])
        });
        TokenRegistry { port, seen }
    }

    fn chart(&self, repository: &str) -> ChartRef {
        format!("oci://127.0.0.1:{}/{repository}", self.port).parse().unwrap()
    }

    fn seen(&self) -> Vec<(&'static str, String, Option<String>)> {
        self.seen.lock().unwrap().clone()
    }
}

type Handler = dyn Fn(&str, Option<String>) -> (u16, Vec<(String, String)>, Vec<u8>) + Send + Sync;

/// A one-request-per-connection HTTP/1.1 server good enough for reqwest's GETs.
fn serve(
    listener: tokio::net::TcpListener,
    name: &'static str,
    seen: Seen,
    handler: impl Fn(&str, Option<String>) -> (u16, Vec<(String, String)>, Vec<u8>) + Send + Sync + 'static,
) {
    let handler: Arc<Handler> = Arc::new(handler);
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else { return };
            let (handler, seen) = (handler.clone(), seen.clone());
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if stream.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or_default().to_string();
                let auth = head
                    .lines()
                    .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("authorization")))
                    .map(|(_, v)| v.trim().to_string());
                seen.lock().unwrap().push((name, path.clone(), auth.clone()));
                let (status, headers, body) = handler(&path, auth);
                let mut response =
                    format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
                for (k, v) in headers {
                    response.push_str(&format!("{k}: {v}\r\n"));
                }
                response.push_str("\r\n");
                let mut bytes = response.into_bytes();
                bytes.extend_from_slice(&body);
                let _ = stream.write_all(&bytes).await;
                let _ = stream.shutdown().await;
            });
        }
    });
}

#[tokio::test]
async fn an_anonymous_token_is_fetched_on_401_and_not_sent_on_to_the_blob_cdn() {
    let archive = chart_archive();
    let manifest = helm_manifest(&helm_config(), &digest(&archive), archive.len());
    let server = TokenRegistry::start(
        HashMap::from([(VERSION.to_string(), manifest)]),
        HashMap::from([(digest(&archive), archive.clone())]),
    )
    .await;
    let cache_dir = TempDir::new().unwrap();

    let pulled = ChartCache::at(cache_dir.path()).chart(&server.chart("charts/karpenter"), VERSION).await.unwrap();

    assert_eq!(pulled, archive);
    let seen = server.seen();
    let summary: Vec<(&str, &str, bool)> = seen
        .iter()
        .map(|(server, path, auth)| (*server, path.split('/').nth(4).unwrap_or(path), auth.is_some()))
        .collect();
    assert_eq!(
        summary,
        [
            ("registry", "manifests", false),
            ("registry", "/token?service=fake-registry&scope=repository%3Acharts%2Fkarpenter%3Apull", false),
            ("registry", "manifests", true),
            ("registry", "blobs", true), // 503, tried again
            ("registry", "blobs", true), // 307 to the CDN
            ("cdn", &*format!("/blob/{}", digest(&archive)), false),
        ],
        "{seen:#?}"
    );
}

#[tokio::test]
async fn a_blob_that_does_not_match_its_manifest_digest_is_refused() {
    let archive = chart_archive();
    let mut tampered = archive.clone();
    tampered[10] ^= 0xff;
    // The manifest lists the real archive; the registry serves tampered bytes under that digest.
    let manifest = helm_manifest(&helm_config(), &digest(&archive), archive.len());
    let server = TokenRegistry::start(
        HashMap::from([(VERSION.to_string(), manifest)]),
        HashMap::from([(digest(&archive), tampered.clone())]),
    )
    .await;
    let cache_dir = TempDir::new().unwrap();

    let err = ChartCache::at(cache_dir.path()).chart(&server.chart("charts/karpenter"), VERSION).await.unwrap_err();

    let text = err.to_string();
    assert!(matches!(err, OciError::Mismatch { what: "digest", .. }), "{text}");
    assert!(
        text.contains(&format!("has digest {}, but its manifest says {}", digest(&tampered), digest(&archive))),
        "{text}"
    );
    assert!(cache_files(cache_dir.path(), "tgz").is_empty(), "nothing cached");
}

#[tokio::test]
async fn a_registry_wanting_credentials_says_kbp_pulls_anonymously() {
    let server = TokenRegistry::start(HashMap::new(), HashMap::new()).await;
    let cache_dir = TempDir::new().unwrap();

    let err = ChartCache::at(cache_dir.path()).chart(&server.chart("private/karpenter"), VERSION).await.unwrap_err();

    let text = err.to_string();
    assert!(matches!(err, OciError::Unauthorized { .. }), "{text}");
    assert!(text.contains(r#"Basic realm="fake""#) && text.contains("without credentials"), "{text}");
    assert!(text.contains(AIR_GAPPED), "{text}");
}

#[test]
fn crds_from_dir_reads_the_yaml_files_only_and_sorts_them() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("a-nodepools.yaml"), NODEPOOL_CRD).unwrap();
    std::fs::write(dir.path().join("b-ec2nodeclasses.yml"), EC2NODECLASS_CRD).unwrap();
    std::fs::write(dir.path().join("c-configmap.yaml"), NOT_A_CRD).unwrap();
    std::fs::write(dir.path().join("README.md"), "# CRDs\n\nnot: [yaml\n").unwrap();
    std::fs::create_dir(dir.path().join("old")).unwrap();
    std::fs::write(dir.path().join("old/templated.yaml"), TEMPLATE_CRD).unwrap();

    let crds = crds_from_dir(dir.path()).unwrap();

    assert_eq!(names(&crds), CRD_NAMES);
}

#[test]
fn crds_from_dir_names_a_malformed_file() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("nodepools.yaml"), NODEPOOL_CRD).unwrap();
    let broken = dir.path().join("ec2nodeclasses.yaml");
    let mut file = std::fs::File::create(&broken).unwrap();
    file.write_all(b"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: [oops\n")
        .unwrap();

    let err = crds_from_dir(dir.path()).unwrap_err();

    let text = err.to_string();
    assert!(matches!(err, OciError::Yaml { .. }), "{text}");
    assert!(text.starts_with(&format!("{}: not valid YAML", broken.display())), "{text}");
}

#[test]
fn a_directory_without_crds_is_an_error_naming_it() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("configmap.yaml"), NOT_A_CRD).unwrap();

    let err = crds_from_dir(dir.path()).unwrap_err();

    assert!(err.to_string().starts_with(&format!("no CustomResourceDefinition in {}", dir.path().display())), "{err}");
}

#[test]
fn a_chart_without_crds_is_an_error() {
    let mut tar = tar::Builder::new(GzEncoder::new(Vec::new(), flate2::Compression::default()));
    let mut header = tar::Header::new_gnu();
    header.set_size(NOT_A_CRD.len() as u64);
    header.set_mode(0o644);
    tar.append_data(&mut header, "other/templates/cm.yaml", NOT_A_CRD.as_bytes()).unwrap();
    let archive = tar.into_inner().unwrap().finish().unwrap();

    let err = crds_from_chart(&archive).unwrap_err();

    assert!(matches!(err, OciError::NoCrds { .. }), "{err}");
    assert!(err.to_string().contains("karpenter.crds_dir"), "{err}");
}

/// A chart archive holding `crds` (CRD objects) under crds/, as the release's chart does.
fn chart_with(version: &str, crds: &[Value]) -> Vec<u8> {
    let mut files = vec![(
        "karpenter/Chart.yaml".to_string(),
        format!("apiVersion: v2\nname: karpenter\nversion: {version}\nappVersion: {version}\n"),
    )];
    for crd in crds {
        let name = crd["metadata"]["name"].as_str().unwrap();
        files.push((format!("karpenter/crds/{name}.yaml"), serde_norway::to_string(crd).unwrap()));
    }
    let mut tar = tar::Builder::new(GzEncoder::new(Vec::new(), flate2::Compression::default()));
    for (path, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, path, text.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// The official v1.14.1 CRDs, and the same as an older release had them: without the `Gte`/`Lte` requirement
/// operators, which Karpenter added in v1.9.
fn release_crds() -> (Vec<Value>, Vec<Value>) {
    let current = crds_from_dir(&crate::support::reference_crds_dir()).unwrap();
    let mut older = current.clone();
    for crd in &mut older {
        let schema = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        if let Some(operator) = schema.pointer_mut(
            "/properties/spec/properties/template/properties/spec/properties/requirements/items/properties/operator/enum",
        ) {
            operator.as_array_mut().unwrap().retain(|o| o != "Gte" && o != "Lte");
        }
    }
    assert_ne!(older, current, "the NodePool CRD has the requirement operator enum");
    (older, current)
}

#[tokio::test]
async fn init_caches_the_release_and_validate_judges_by_the_crds_of_the_version_the_blueprint_names() {
    let mut registry = Registry::start().await;
    let (older, current) = release_crds();
    registry.push_chart("1.8.0", &chart_with("1.8.0", &older)).await;
    registry.push_chart("1.14.1", &chart_with("1.14.1", &current)).await;
    let work = TempDir::new().unwrap();
    let cache = work.path().join("cache");
    let blueprint = |version: &str| {
        format!(
            "[cluster]\nname = \"demo\"\nregion = \"us-west-2\"\n\n[karpenter]\nversion = \"{version}\"\nchart = \"{}\"\n\n\
             [node_pools.default]\nrequirements = [\n  {{ key = \"karpenter.k8s.aws/instance-cpu\", operator = \"Gte\", values = [\"4\"] }},\n]\n",
            registry.chart()
        )
    };
    let kbp = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_kbp"))
            .args(args)
            .current_dir(work.path())
            .env("KBP_CACHE_DIR", &cache)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.code(), text)
    };
    std::fs::write(work.path().join("old.toml"), blueprint("1.8.0")).unwrap();
    std::fs::write(work.path().join("new.toml"), blueprint("1.14.1")).unwrap();

    // Nothing cached: validate says which checks it could not run, and passes what it could check.
    let (code, text) = kbp(&["validate", "old.toml"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("were not checked against the Karpenter CRDs") && text.contains("kbp init"), "{text}");
    assert!(!cache.exists() || cache_files(&cache, "tgz").is_empty(), "validate pulled nothing");

    for file in ["old.toml", "new.toml"] {
        let (code, text) = kbp(&["init", file]);
        assert_eq!(code, Some(0), "{text}");
        assert!(text.contains("5 CRDs"), "the release has five CRDs: {text}");
    }
    registry.stop();

    // Offline now: the older release's CRD refuses `Gte`, at the field that wrote it.
    let (code, text) = kbp(&["validate", "old.toml"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("unsupported value \"Gte\""), "{text}");
    assert!(text.contains("old.toml:11:") && text.contains("node_pools.default.requirements[0].operator"), "{text}");
    assert!(text.contains("Karpenter 1.8.0 CRD"), "{text}");
    // The newer one accepts it, with every check run.
    let (code, text) = kbp(&["validate", "new.toml"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("not checked"), "{text}");
}

/// `kbp render` of karpenter-mng with the chart named by `chart` (an `oci://` reference or a directory).
fn render_karpenter_mng(chart: &str, cache: &Path) -> Vec<Value> {
    let blueprint = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/karpenter-mng.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_kbp"))
        .arg("render")
        .arg(&blueprint)
        .args(["--set", &format!("karpenter.chart={chart}")])
        .current_dir(cache.parent().unwrap())
        .env("KBP_CACHE_DIR", cache)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "kbp render with {chart}: {}", String::from_utf8_lossy(&out.stderr));
    kbp::kubernetes::manifests::documents(&String::from_utf8(out.stdout).unwrap()).unwrap()
}

#[tokio::test]
async fn the_published_chart_packaged_by_helm_and_pulled_from_a_registry_renders_as_from_its_directory() {
    let work = TempDir::new().unwrap();
    let reference = crate::support::reference_chart_dir();
    let packaged = Command::new(crate::chart_fidelity::helm())
        .arg("package")
        .arg(&reference)
        .arg("--destination")
        .arg(work.path())
        .output()
        .unwrap();
    assert!(packaged.status.success(), "helm package: {}", String::from_utf8_lossy(&packaged.stderr));
    let archive = std::fs::read(work.path().join(format!("karpenter-{VERSION}.tgz"))).unwrap();
    let registry = Registry::start().await;
    registry.push_chart(VERSION, &archive).await;

    let pulled = render_karpenter_mng(&registry.chart().to_string(), &work.path().join("cache"));
    assert_eq!(cache_files(&work.path().join("cache"), "tgz").len(), 1, "the pulled chart is cached");
    let local = render_karpenter_mng(&reference.display().to_string(), &work.path().join("unused-cache"));
    let crds: Vec<Value> = pulled.iter().filter(|d| d["kind"] == "CustomResourceDefinition").cloned().collect();
    assert_eq!(names(&crds).len(), 5, "the release's five CRDs: {:?}", names(&crds));
    let kinds = |docs: &[Value]| docs.iter().map(|d| d["kind"].as_str().unwrap_or("").to_string()).collect::<Vec<_>>();
    assert!(kinds(&pulled).contains(&"Deployment".to_string()), "{:?}", kinds(&pulled));
    assert_eq!(pulled, local, "the same objects from the registry as from the chart's directory");
}
