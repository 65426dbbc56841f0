//! On-demand prices from the AWS Price List API (`pricing:GetProducts`): Linux, shared tenancy, no
//! pre-installed software, capacity actually used (not a reservation's), bought on demand: the same filters
//! Karpenter prices instance types with. The API is served from a few regions only (us-east-1, eu-central-1,
//! ap-south-1), whatever region the prices are for; kbp asks us-east-1.
//!
//! Each product comes back as a JSON document in a string; only the instance type and the on-demand term's USD
//! price are read from it. Bare-metal types are priced under dedicated tenancy in the list, so they have no
//! price here.

use std::collections::BTreeMap;

use aws_sdk_pricing::types::{Filter, FilterType};
use serde::Deserialize;

use crate::providers::ProviderError;

const OP: &str = "pricing:GetProducts";
/// The region kbp asks the Price List API in.
pub(super) const PRICING_REGION: &str = "us-east-1";
/// AWS's maximum page size for GetProducts.
const PAGE: i32 = 100;

/// USD an hour on demand per instance type in `region`.
pub(super) async fn on_demand_prices(
    pricing: &aws_sdk_pricing::Client,
    region: &str,
) -> Result<BTreeMap<String, f64>, ProviderError> {
    let filters = [
        ("regionCode", region),
        ("operatingSystem", "Linux"),
        ("tenancy", "Shared"),
        ("preInstalledSw", "NA"),
        ("capacitystatus", "Used"),
        ("marketoption", "OnDemand"),
    ]
    .into_iter()
    .map(|(field, value)| Filter::builder().r#type(FilterType::TermMatch).field(field).value(value).build())
    .collect::<Result<Vec<_>, _>>()
    .map_err(|e| ProviderError::new(OP, "", format!("cannot build the request: {e}")))?;
    let request = pricing.get_products().service_code("AmazonEC2").set_filters(Some(filters));
    let products = request
        .into_paginator()
        .page_size(PAGE)
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .map_err(|e| ProviderError::from_sdk(OP, e))?;
    let mut prices = BTreeMap::new();
    for product in &products {
        match on_demand_price(product) {
            Ok(Some((instance_type, price))) => {
                prices.insert(instance_type, price);
            }
            Ok(None) => {}
            // One product AWS describes in a shape kbp does not know costs that type its price, not the list.
            Err(e) => tracing::debug!("skipping a Price List product kbp cannot read: {e}"),
        }
    }
    Ok(prices)
}

/// The part of a Price List product kbp reads.
#[derive(Deserialize)]
struct Product {
    product: ProductInfo,
    #[serde(default)]
    terms: Terms,
}

#[derive(Deserialize)]
struct ProductInfo {
    #[serde(default)]
    attributes: Attributes,
}

#[derive(Deserialize, Default)]
struct Attributes {
    #[serde(rename = "instanceType")]
    instance_type: Option<String>,
}

#[derive(Deserialize, Default)]
struct Terms {
    #[serde(rename = "OnDemand", default)]
    on_demand: BTreeMap<String, Term>,
}

#[derive(Deserialize)]
struct Term {
    #[serde(rename = "priceDimensions", default)]
    price_dimensions: BTreeMap<String, PriceDimension>,
}

#[derive(Deserialize)]
struct PriceDimension {
    #[serde(rename = "pricePerUnit", default)]
    price_per_unit: BTreeMap<String, String>,
}

/// The instance type and its USD on-demand price of one Price List product (a JSON document), or `None` when it
/// is no instance type or has no non-zero USD price (AWS lists some products at 0: capacity it does not charge
/// on demand for).
fn on_demand_price(product: &str) -> Result<Option<(String, f64)>, serde_json::Error> {
    let product: Product = serde_json::from_str(product)?;
    let Some(instance_type) = product.product.attributes.instance_type.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let price = product
        .terms
        .on_demand
        .values()
        .flat_map(|term| term.price_dimensions.values())
        .filter_map(|d| d.price_per_unit.get("USD")?.parse::<f64>().ok())
        .find(|p| *p > 0.0);
    Ok(price.map(|p| (instance_type, p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A product as GetProducts lists it (trimmed: AWS sends some forty attributes and the Reserved terms too).
    const M5_LARGE: &str = r#"{
        "product": {
            "productFamily": "Compute Instance",
            "attributes": {"instanceType": "m5.large", "regionCode": "us-west-2", "operatingSystem": "Linux",
                           "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used"},
            "sku": "8KTQAHWA58GUHDGC"
        },
        "serviceCode": "AmazonEC2",
        "terms": {
            "OnDemand": {"8KTQAHWA58GUHDGC.JRTCKXETXF": {
                "priceDimensions": {"8KTQAHWA58GUHDGC.JRTCKXETXF.6YS6EN2CT7": {
                    "unit": "Hrs", "pricePerUnit": {"USD": "0.0960000000"},
                    "description": "$0.096 per On Demand Linux m5.large Instance Hour"}},
                "offerTermCode": "JRTCKXETXF"}},
            "Reserved": {"8KTQAHWA58GUHDGC.4NA7Y494T4": {
                "priceDimensions": {"x": {"unit": "Hrs", "pricePerUnit": {"USD": "0.0600000000"}}}}}
        },
        "version": "20240101000000",
        "publicationDate": "2024-01-01T00:00:00Z"
    }"#;

    #[test]
    fn the_on_demand_usd_price_is_read_not_the_reserved_one() {
        assert_eq!(on_demand_price(M5_LARGE).unwrap(), Some(("m5.large".to_string(), 0.096)));
    }

    #[test]
    fn products_without_a_type_or_a_price_are_skipped() {
        let no_type = r#"{"product": {"attributes": {"usagetype": "USW2-DataTransfer"}}, "terms": {}}"#;
        assert_eq!(on_demand_price(no_type).unwrap(), None);
        let zero = M5_LARGE.replace("0.0960000000", "0.0000000000");
        assert_eq!(on_demand_price(&zero).unwrap(), None, "a zero price is no price");
        let no_terms = r#"{"product": {"attributes": {"instanceType": "m5.large"}}}"#;
        assert_eq!(on_demand_price(no_terms).unwrap(), None);
        assert!(on_demand_price("not json").is_err());
    }
}
