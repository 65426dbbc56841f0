//! The region's instance-type catalog for `kbp simulate`, read from AWS and cached on disk. Owns the four reads
//! (`ec2`: DescribeInstanceTypes, DescribeInstanceTypeOfferings, DescribeSpotPriceHistory; `pricing`: the Price
//! List API's GetProducts), run at once, and the cache (`cache`: one file per region, a week by default).
//! The catalog's type and what Karpenter derives from it live in [`crate::simulate::catalog`]; `simulate`
//! stays pure and never calls AWS.
//!
//! Prices are a convenience, not a requirement: a price read AWS refuses (no `pricing:GetProducts`, say) leaves
//! the prices out and says so in a [`Warning`], and such an incomplete catalog is not cached, so the next run
//! tries again. Without the types or their zones there is nothing to simulate: that is an error.

mod cache;
mod ec2;
mod pricing;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use aws_config::SdkConfig;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use self::cache::Cached;
pub use self::cache::{CatalogCache, DEFAULT_MAX_AGE, MAX_AGE_VAR};
use self::ec2::Described;
use crate::providers::ProviderError;
use crate::simulate::catalog::{Catalog, CatalogType};

/// Why no catalog could be had for the region; each message ends with a hint.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The region name is not one AWS has the form of.
    #[error("`{region}` is not an AWS region name\n  hint: name a region like `us-west-2` (cluster.region, --region or AWS_REGION)")]
    Region {
        /// The region as given.
        region: String,
    },
    /// Reading the instance types or their zones from EC2 failed.
    #[error("cannot read the instance types of {region}: {error}\n  hint: {hint}")]
    Aws {
        /// The region read.
        region: String,
        // `error`, not `source`: as a source it would be printed again after the hint.
        /// The AWS call and its error.
        error: ProviderError,
        /// The AWS error's own hint (a permission to grant), else to check the region and the network.
        hint: String,
    },
    /// Asked before any call: without credentials every read would fail, each saying so at length.
    #[error(
        "cannot read the instance types of {region} from AWS: {why}\n  hint: give an instance-type catalog file \
         instead, `kbp simulate --catalog FILE` (examples/catalog-us-west-2.json is a sample), or {}",
        crate::aws::NO_CREDENTIALS_HINT
    )]
    NoCredentials {
        /// The region that would have been read.
        region: String,
        /// Why the credential chain has none.
        why: String,
    },
}

/// Something the catalog lacks that the user can fix, with how.
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    /// What the catalog lacks or what went wrong, such as on-demand prices left out.
    pub message: String,
    /// How to get the rest: a permission to grant, a setting to change.
    pub hint: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n  hint: {}", self.message, self.hint)
    }
}

/// A catalog and how it was had.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The region's instance types, zones and prices.
    pub catalog: Catalog,
    /// What it lacks (prices AWS would not give) or could not do (write the cache); empty when all went well.
    pub warnings: Vec<Warning>,
    /// Read from the cache, without any AWS call.
    pub from_cache: bool,
    /// The cache file it was read from or written to; `None` when it is not cached.
    pub path: Option<PathBuf>,
}

/// The catalog of `region`: from kbp's cache when it holds one younger than its maximum age (7 days,
/// `KBP_CATALOG_MAX_AGE`) and `refresh` is false; else read from AWS with `sdk`'s credentials and endpoint, and
/// cached when complete.
pub async fn load(sdk: &SdkConfig, region: &str, refresh: bool) -> Result<Loaded, CatalogError> {
    load_with(sdk, region, refresh, CatalogCache::default_location().as_ref()).await
}

/// [`load`] with the cache given (`None`: no cache at all).
pub async fn load_with(
    sdk: &SdkConfig,
    region: &str,
    refresh: bool,
    cache: Option<&CatalogCache>,
) -> Result<Loaded, CatalogError> {
    if region.is_empty() || !region.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        return Err(CatalogError::Region { region: region.to_string() });
    }
    let now = OffsetDateTime::now_utc();
    if let (false, Some(cache)) = (refresh, cache) {
        match cache.read(region, now) {
            Cached::Fresh(catalog) => {
                tracing::debug!(region, path = %cache.path(region).display(), "instance-type catalog from the cache");
                return Ok(Loaded { catalog, warnings: vec![], from_cache: true, path: Some(cache.path(region)) });
            }
            Cached::Stale => {}
            Cached::Unusable(why) => {
                tracing::warn!("the cached instance-type catalog is unusable ({why}); reading it again")
            }
        }
    }
    if let Some(why) = crate::aws::missing_credentials(sdk).await {
        return Err(CatalogError::NoCredentials { region: region.to_string(), why });
    }
    let (catalog, mut warnings) = read_aws(sdk, region, now).await?;
    let mut path = None;
    match cache {
        // Cached only when complete: prices missing today may be readable on the next run.
        Some(_) if !warnings.is_empty() => {}
        Some(cache) => match cache.write(&catalog) {
            Ok(written) => path = Some(written),
            Err(e) => warnings.push(Warning {
                message: format!("cannot cache the instance-type catalog at {}: {e}", cache.path(region).display()),
                hint: "set KBP_CACHE_DIR to a writable directory; until then every run reads the catalog from AWS"
                    .to_string(),
            }),
        },
        None => warnings.push(Warning {
            message: "the instance-type catalog is not cached: none of KBP_CACHE_DIR, XDG_CACHE_HOME and HOME is set"
                .to_string(),
            hint: "set KBP_CACHE_DIR to a writable directory; until then every run reads the catalog from AWS"
                .to_string(),
        }),
    }
    Ok(Loaded { catalog, warnings, from_cache: false, path })
}

/// The four reads at once; the types and their zones must succeed, the prices may fail with a warning.
async fn read_aws(sdk: &SdkConfig, region: &str, now: OffsetDateTime) -> Result<(Catalog, Vec<Warning>), CatalogError> {
    let ec2_client = crate::aws_client!(aws_sdk_ec2, sdk, region = region.to_string());
    let pricing_client = crate::aws_client!(aws_sdk_pricing, sdk, region = pricing::PRICING_REGION);
    let (types, zones, spot, on_demand) = tokio::join!(
        ec2::instance_types(&ec2_client),
        ec2::zones(&ec2_client),
        ec2::spot_prices(&ec2_client),
        pricing::on_demand_prices(&pricing_client, region),
    );
    let fatal = |error: ProviderError| {
        let hint = error.hint.clone().unwrap_or_else(|| {
            format!("check that {region} is a region EC2 serves and that it can be reached from here")
        });
        CatalogError::Aws { region: region.to_string(), error, hint }
    };
    let (types, zones) = (types.map_err(fatal)?, zones.map_err(fatal)?);
    let mut warnings = Vec::new();
    let on_demand = priced(on_demand, region, "on-demand prices", &mut warnings);
    let spot = priced(spot, region, "Spot prices", &mut warnings);
    let fetched_at = now.format(&Rfc3339).unwrap_or_default();
    Ok((assemble(region, fetched_at, types, &zones, &on_demand, &spot), warnings))
}

/// The prices read, or none and a warning saying why.
fn priced<T: Default>(read: Result<T, ProviderError>, region: &str, what: &str, warnings: &mut Vec<Warning>) -> T {
    read.unwrap_or_else(|e| {
        let hint = e.hint.clone().unwrap_or_else(|| "check the network path to AWS and retry".to_string());
        warnings.push(Warning {
            message: format!("{region}'s catalog has no {what}: {e}"),
            hint: format!("{hint}; `kbp simulate` still places pods, without costs"),
        });
        T::default()
    })
}

/// The catalog of the types offered in at least one zone, by name, each with its prices in the zones that
/// offer it.
fn assemble(
    region: &str,
    fetched_at: String,
    types: Vec<Described>,
    zones: &BTreeMap<String, BTreeSet<String>>,
    on_demand: &BTreeMap<String, f64>,
    spot: &BTreeMap<String, BTreeMap<String, f64>>,
) -> Catalog {
    let mut out: Vec<CatalogType> = types
        .into_iter()
        .filter_map(|d| {
            let name = d.instance_type.name.as_str();
            let offered = zones.get(name).filter(|z| !z.is_empty())?;
            let spot_prices = match (d.spot, spot.get(name)) {
                (true, Some(prices)) => {
                    prices.iter().filter(|(zone, _)| offered.contains(*zone)).map(|(z, p)| (z.clone(), *p)).collect()
                }
                _ => BTreeMap::new(),
            };
            Some(CatalogType {
                on_demand_price: on_demand.get(name).copied(),
                spot_prices,
                zones: offered.iter().cloned().collect(),
                max_network_interfaces: d.max_network_interfaces,
                ipv4_per_interface: d.ipv4_per_interface,
                spot: d.spot,
                instance_type: d.instance_type,
            })
        })
        .collect();
    out.sort_by(|a, b| a.instance_type.name.cmp(&b.instance_type.name));
    Catalog { region: region.to_string(), fetched_at, types: out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::catalog::InstanceType;

    fn described(name: &str, spot: bool) -> Described {
        let instance_type =
            InstanceType { name: name.into(), architecture: "x86_64".into(), vcpus: 2, memory_mib: 8192, gpu: None };
        Described { instance_type, max_network_interfaces: 3, ipv4_per_interface: 10, spot }
    }

    #[test]
    fn types_offered_nowhere_are_dropped_and_prices_kept_for_offered_zones() {
        let zones: BTreeMap<String, BTreeSet<String>> = [
            ("m5.large".to_string(), ["us-west-2a", "us-west-2b"].map(String::from).into()),
            ("t2.nano".to_string(), ["us-west-2a"].map(String::from).into()),
        ]
        .into();
        let on_demand = [("m5.large".to_string(), 0.096)].into();
        let spot_zones = [("us-west-2a", 0.03), ("us-west-2b", 0.031), ("us-west-2z", 0.01)];
        let spot = [
            ("m5.large".to_string(), spot_zones.iter().map(|(z, p)| (z.to_string(), *p)).collect()),
            ("t2.nano".to_string(), [("us-west-2a".to_string(), 0.001)].into()),
        ]
        .into();
        let types = vec![described("x9.huge", true), described("t2.nano", false), described("m5.large", true)];
        let c = assemble("us-west-2", "2026-03-10T12:00:00Z".into(), types, &zones, &on_demand, &spot);
        let names: Vec<&str> = c.types.iter().map(|t| t.instance_type.name.as_str()).collect();
        assert_eq!(names, ["m5.large", "t2.nano"], "sorted, and x9.huge is offered in no zone");
        let m5 = &c.types[0];
        assert_eq!(m5.zones, ["us-west-2a", "us-west-2b"]);
        assert_eq!(m5.on_demand_price, Some(0.096));
        assert_eq!(m5.spot_prices.keys().collect::<Vec<_>>(), ["us-west-2a", "us-west-2b"], "not a zone it lacks");
        assert!(c.types[1].spot_prices.is_empty(), "a type not sold as Spot has no Spot price");
        assert_eq!(c.types[1].on_demand_price, None);
    }

    #[test]
    fn errors_and_warnings_read_as_one_line_and_a_hint() {
        let e = CatalogError::Aws {
            region: "us-west-2".into(),
            error: ProviderError::new("ec2:DescribeInstanceTypes", "UnauthorizedOperation", "not allowed"),
            hint: "grant it".into(),
        };
        assert_eq!(
            e.to_string(),
            "cannot read the instance types of us-west-2: ec2:DescribeInstanceTypes: UnauthorizedOperation: not allowed\n  hint: grant it"
        );
        let w = Warning { message: "no prices".into(), hint: "grant pricing:GetProducts".into() };
        assert_eq!(w.to_string(), "no prices\n  hint: grant pricing:GetProducts");
    }

    #[tokio::test]
    async fn a_region_that_is_no_file_name_is_refused_before_any_call() {
        let sdk = SdkConfig::builder().build();
        let err = load_with(&sdk, "../etc", false, None).await.unwrap_err();
        assert!(matches!(err, CatalogError::Region { .. }), "{err}");
    }
}
