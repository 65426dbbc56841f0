//! `kbp simulate` run as a user runs it: the seed 004 NodePool patterns (tests/fixtures/blueprints/seed-004.toml)
//! against a mixed workload (tests/fixtures/workloads/seed-004-mixed.yaml), with the region's catalog read from
//! the emulator once and then from the cache; prices checked against what the emulator's EC2 and Price List API
//! answer; exit codes for a workload that fits and one that does not; bad input reported with file:line:col.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::events::{events, of_type};
use crate::support::*;

fn fixture(rel: &str) -> String {
    repo().join("tests/fixtures").join(rel).display().to_string()
}

fn simulate(em: &Emulator, cache: &Path, args: &[&str]) -> Output {
    let mut all =
        ["simulate", &fixture("blueprints/seed-004.toml")[..]].iter().map(|s| s.to_string()).collect::<Vec<_>>();
    all.extend(args.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    kbp_command(em, &refs, cache).env("KBP_CACHE_DIR", cache).output().unwrap()
}

fn the_simulation(out: &Output) -> (Value, Value) {
    let events = events(out);
    let sims = of_type(&events, "simulation");
    assert_eq!(sims.len(), 1, "{}", describe_output(out));
    (sims[0].clone(), events.last().unwrap().clone())
}

fn group<'a>(sim: &'a Value, name: &str) -> &'a Value {
    sim["simulation"]["groups"].as_array().unwrap().iter().find(|g| g["name"] == name).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_seed_patterns_are_simulated_with_the_regions_catalog_and_its_prices() {
    let em = Emulator::start_without_kubernetes();
    let cache = tempfile::tempdir().unwrap();
    let mixed = fixture("workloads/seed-004-mixed.yaml");

    let out = simulate(&em, cache.path(), &["--workload", &mixed, "--json"]);
    assert_exit_code(&out, 1, "a GPU pod without the toleration cannot be placed");
    let (sim, summary) = the_simulation(&out);
    assert!(summary["aws"]["calls"].as_u64().unwrap() >= 4, "the catalog was read from AWS: {summary}");
    assert_eq!(sim["catalog"]["from_cache"], false);
    assert_eq!(summary["pending_pods"], 1);
    let stray = group(&sim, "Pod/stray-gpu");
    assert!(stray["reasons"]["gpu"].as_str().unwrap().contains("does not tolerate its taint nvidia.com/gpu"));
    assert_eq!(group(&sim, "Deployment/idp-server")["node_pools"]["idp-server"], 3);
    assert_eq!(group(&sim, "Job/batch")["node_pools"]["general"], 4);
    assert_eq!(group(&sim, "Deployment/gpu-train")["node_pools"]["gpu"], 2);
    let web = &group(&sim, "Deployment/web")["node_pools"];
    assert_eq!(web["spot"].as_u64().unwrap() + web["general"].as_u64().unwrap_or(0), 20, "{web}");

    // Each node's price is what the emulator's EC2 (Spot) or Price List API (on-demand) says for its type.
    let sdk = em.sdk_config().await;
    let ec2 = aws_sdk_ec2::Client::new(&sdk);
    let nodes = sim["simulation"]["nodes"].as_array().unwrap();
    let spot = nodes.iter().find(|n| n["capacity_type"] == "spot").expect("a Spot node");
    let history = ec2
        .describe_spot_price_history()
        .instance_types(spot["instance_type"].as_str().unwrap().into())
        .availability_zone(spot["zone"].as_str().unwrap())
        .product_descriptions("Linux/UNIX")
        .start_time(aws_smithy_types::DateTime::from(std::time::SystemTime::now()))
        .send()
        .await
        .unwrap();
    let latest: f64 = history.spot_price_history()[0].spot_price().unwrap().parse().unwrap();
    assert!((spot["hourly_price"].as_f64().unwrap() - latest).abs() < 1e-9, "{spot} vs {latest}");
    let pricing = aws_sdk_pricing::Client::new(&sdk.to_builder().region(aws_config::Region::new("us-east-1")).build());
    let on_demand = nodes.iter().find(|n| n["capacity_type"] == "on-demand").expect("an on-demand node");
    let ty = on_demand["instance_type"].as_str().unwrap();
    let term = |field: &str, value: &str| {
        aws_sdk_pricing::types::Filter::builder()
            .r#type(aws_sdk_pricing::types::FilterType::TermMatch)
            .field(field)
            .value(value)
            .build()
            .unwrap()
    };
    let products = pricing
        .get_products()
        .service_code("AmazonEC2")
        .filters(term("instanceType", ty))
        .filters(term("regionCode", "us-west-2"))
        .filters(term("operatingSystem", "Linux"))
        .filters(term("tenancy", "Shared"))
        .filters(term("preInstalledSw", "NA"))
        .filters(term("capacitystatus", "Used"))
        .send()
        .await
        .unwrap();
    let product: Value = serde_json::from_str(&products.price_list()[0]).unwrap();
    let usd = product["terms"]["OnDemand"].as_object().unwrap().values().next().unwrap()["priceDimensions"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()["pricePerUnit"]["USD"]
        .as_str()
        .unwrap()
        .parse::<f64>()
        .unwrap();
    assert!((on_demand["hourly_price"].as_f64().unwrap() - usd).abs() < 1e-9, "{on_demand} vs {usd}");
    let hourly: f64 = nodes.iter().map(|n| n["hourly_price"].as_f64().unwrap()).sum();
    let monthly = sim["simulation"]["monthly_cost"].as_f64().unwrap();
    assert!((monthly - hourly * 730.0).abs() < 1e-6);
    assert!((summary["monthly_cost"].as_f64().unwrap() - monthly).abs() < 1e-9);

    // The second run reads the cached catalog: no AWS call, the same answer.
    let again = simulate(&em, cache.path(), &["--workload", &mixed, "--json"]);
    let (sim2, summary2) = the_simulation(&again);
    assert_eq!(summary2["aws"]["calls"], 0, "{summary2}");
    assert_eq!(sim2["catalog"]["from_cache"], true);
    assert_eq!(sim2["simulation"], sim["simulation"]);
    // --refresh-catalog reads it again.
    let refreshed = simulate(&em, cache.path(), &["--workload", &mixed, "--json", "--refresh-catalog"]);
    assert!(the_simulation(&refreshed).1["aws"]["calls"].as_u64().unwrap() >= 4);
}

#[test]
fn a_workload_that_fits_exits_0_and_the_table_names_pools_types_and_cost() {
    let em = Emulator::start_without_kubernetes();
    let cache = tempfile::tempdir().unwrap();
    let work = cache.path().join("work.toml");
    std::fs::write(
        &work,
        "[[workload]]\nname = \"api\"\nreplicas = 10\ncpu = 1\nmemory = \"2Gi\"\nzone_spread = 1\n\n\
         [[workload]]\nname = \"infer\"\ngpu = 1\ncpu = 2\nmemory = \"8Gi\"\n\
         tolerations = [{ key = \"nvidia.com/gpu\", operator = \"Exists\" }]\n",
    )
    .unwrap();
    let out = simulate(&em, cache.path(), &["-w", work.to_str().unwrap()]);
    assert_success(&out, "kbp simulate of a workload that fits");
    let text = stdout(&out);
    for expected in ["NODEPOOL", "spot", "gpu", "POD GROUP", "api", "infer", "a month (us-west-2 prices of"] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }
    let api = text.lines().find(|l| l.starts_with("api ")).unwrap();
    assert!(api.contains("spot 10") && api.trim_end().ends_with('0'), "all ten on Spot, none pending: {api}");

    // The cached catalog file serves as --catalog: no AWS at all.
    let file = cache.path().join("catalog/us-west-2.json");
    assert!(file.exists());
    let offline = kbp_offline(
        &[
            "simulate",
            &fixture("blueprints/seed-004.toml"),
            "-w",
            work.to_str().unwrap(),
            "--catalog",
            file.to_str().unwrap(),
            "--json",
        ],
        cache.path(),
    );
    assert_success(&offline, "kbp simulate --catalog");
    let (_, summary) = the_simulation(&offline);
    assert_eq!(summary["aws"]["calls"], 0);
}

#[test]
fn bad_workloads_and_catalogs_are_reported_with_their_place_and_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let bp = fixture("blueprints/seed-004.toml");
    let yaml = dir.path().join("bad.yaml");
    std::fs::write(&yaml, "kind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: [3\n").unwrap();
    let catalog = dir.path().join("catalog.json");
    std::fs::write(&catalog, "{\"region\": \"us-west-2\"}").unwrap();
    let out = kbp_offline(
        &["simulate", &bp, "-w", yaml.to_str().unwrap(), "--catalog", catalog.to_str().unwrap()],
        dir.path(),
    );
    assert_exit_code(&out, 1, "a broken workload");
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:", yaml.display())) && err.contains("hint:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let toml = dir.path().join("w.toml");
    std::fs::write(&toml, "[[workload]]\nname = \"x\"\ncpu = \"lots\"\n").unwrap();
    let out = kbp_offline(
        &["simulate", &bp, "-w", toml.to_str().unwrap(), "--catalog", catalog.to_str().unwrap()],
        dir.path(),
    );
    assert_exit_code(&out, 1, "a bad quantity");
    assert!(stderr(&out).contains("cpu = \"lots\" is not a Kubernetes quantity"), "{}", stderr(&out));

    std::fs::write(&toml, "[[workload]]\nname = \"x\"\ncpu = 1\n").unwrap();
    let out = kbp_offline(
        &["simulate", &bp, "-w", toml.to_str().unwrap(), "--catalog", catalog.to_str().unwrap()],
        dir.path(),
    );
    assert_exit_code(&out, 1, "a catalog that is not one");
    let err = stderr(&out);
    assert!(err.contains("not an instance-type catalog") && err.contains("catalog.json:1:"), "{err}");
}

/// `kbp simulate` with no AWS credentials and no AWS to reach, in an empty cache.
fn simulate_without_aws(cache: &Path, extra: &[&str]) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kbp"));
    credentials::without_aws_credentials(&mut cmd);
    cmd.args(["simulate", "blueprints/karpenter-mng.toml", "-w", "workloads/sample.yaml"])
        .args(extra)
        .current_dir(repo())
        .env("KBP_CACHE_DIR", cache)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn the_shipped_sample_catalog_simulates_offline_and_without_it_the_error_is_the_missing_credentials() {
    let cache = tempfile::tempdir().unwrap();
    let out = simulate_without_aws(cache.path(), &["--catalog", "examples/catalog-us-west-2.json", "--json"]);
    assert_success(&out, "kbp simulate --catalog examples/catalog-us-west-2.json without AWS");
    let (sim, summary) = the_simulation(&out);
    assert_eq!(summary["aws"]["calls"], 0, "{summary}");
    assert_eq!(summary["pending_pods"], 0, "the README's example places every pod: {sim}");
    assert!(summary["monthly_cost"].as_f64().unwrap() > 0.0, "the sample has prices: {summary}");
    assert_eq!(sim["catalog"]["region"], "us-west-2");

    let out = simulate_without_aws(cache.path(), &[]);
    assert_exit_code(&out, 1, "kbp simulate without credentials, cache or --catalog");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "one line and a hint: {err}");
    assert!(
        lines[0]
            .starts_with("error: cannot read the instance types of us-west-2 from AWS: no AWS credentials were found"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("  hint: ") && lines[1].contains("--catalog FILE") && lines[1].contains("AWS_PROFILE"),
        "{err}"
    );
    assert!(!err.contains("region EC2 serves") && !err.contains('{'), "not the region's fault, no dump: {err}");

    // Another region's catalog would leave every pod pending for no reason shown: it is refused.
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kbp"));
    credentials::without_aws_credentials(&mut cmd);
    let out = cmd
        .args(["simulate", "blueprints/spot-fallback.toml", "-w", "workloads/sample.yaml"])
        .args(["--catalog", "examples/catalog-us-west-2.json"])
        .current_dir(repo())
        .env("KBP_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    assert_exit_code(&out, 1, "a catalog of another region");
    let err = stderr(&out);
    assert!(err.contains("is the catalog of us-west-2, and the blueprint's cluster is in eu-central-1"), "{err}");
}
