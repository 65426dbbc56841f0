//! AWS's published list prices for the parts of a stack the instance-type catalog does not price, as written
//! here by hand (USD, Linux, no discounts): the one place to update when AWS changes them.
//!
//! Per region only what differs by region (a NAT gateway's hour, a GB-month of gp3), for the regions the
//! shipped blueprints use and a few neighbours; any other region takes us-east-1's figures, and the line priced
//! with them says so. What is the same in every commercial region (EKS, KMS, a public IPv4 address) is a
//! constant. Figures as of 2026; `kbp plan` shows them as list prices, not as a bill.

/// EKS control plane, standard support (a Kubernetes version in extended support costs $0.60/h).
pub const EKS_CONTROL_PLANE_HOURLY: f64 = 0.10;
/// A public IPv4 address, in use or idle (every NAT gateway holds one Elastic IP).
pub const PUBLIC_IPV4_HOURLY: f64 = 0.005;
/// A customer managed KMS key, a month (requests are usage-based).
pub const KMS_KEY_MONTHLY: f64 = 1.0;

/// What differs by region.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegionPrices {
    /// The region these figures are for (us-east-1 in [`FALLBACK`]).
    pub region: &'static str,
    /// A NAT gateway, an hour (data processed is charged per GB on top).
    pub nat_gateway_hourly: f64,
    /// A GB-month of General Purpose SSD (gp3) storage.
    pub gp3_gb_month: f64,
}

/// The region every other falls back to.
pub const FALLBACK: RegionPrices = RegionPrices { region: "us-east-1", nat_gateway_hourly: 0.045, gp3_gb_month: 0.08 };

const REGIONS: &[RegionPrices] = &[
    FALLBACK,
    RegionPrices { region: "us-east-2", nat_gateway_hourly: 0.045, gp3_gb_month: 0.08 },
    RegionPrices { region: "us-west-2", nat_gateway_hourly: 0.045, gp3_gb_month: 0.08 },
    RegionPrices { region: "eu-west-1", nat_gateway_hourly: 0.048, gp3_gb_month: 0.088 },
    RegionPrices { region: "eu-central-1", nat_gateway_hourly: 0.052, gp3_gb_month: 0.0952 },
];

/// `region`'s prices, or [`FALLBACK`]'s when this table does not list it (then `.region` is not `region`).
pub fn for_region(region: &str) -> RegionPrices {
    REGIONS.iter().copied().find(|p| p.region == region).unwrap_or(FALLBACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_blueprints_regions_are_listed_and_others_fall_back() {
        for region in ["us-east-1", "us-west-2", "eu-central-1"] {
            assert_eq!(for_region(region).region, region);
        }
        assert_eq!(for_region("eu-central-1").nat_gateway_hourly, 0.052);
        assert_eq!(for_region("ap-south-2"), FALLBACK);
    }
}
