//! The on-disk cache of catalogs: one JSON file per region, `<cache root>/catalog/<region>.json`, written whole
//! (temp file and rename) so a reader never sees half of one. A catalog is used while it is younger than the
//! maximum age by the `fetched_at` it records, not by the file's time, so a copied or restored file does not
//! pass for fresh.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::simulate::catalog::Catalog;

/// How long a cached catalog is used: instance types and list prices change every few weeks, Spot prices
/// daily, and a simulation is a comparison, not an invoice.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// Overrides [`DEFAULT_MAX_AGE`] (humantime: `1day`, `12h`; `0s` never uses the cache).
pub const MAX_AGE_VAR: &str = "KBP_CATALOG_MAX_AGE";

/// Where catalogs are cached and how long each is used.
#[derive(Debug, Clone)]
pub struct CatalogCache {
    dir: PathBuf,
    max_age: Duration,
}

/// What the cache holds for a region.
#[derive(Debug)]
pub(super) enum Cached {
    Fresh(Catalog),
    /// Missing, too old, or for another region.
    Stale,
    /// There but unreadable: why.
    Unusable(String),
}

impl CatalogCache {
    /// `catalog/` under kbp's cache root ([`crate::cache_dir::cache_root`]), with the age from
    /// `KBP_CATALOG_MAX_AGE` or 7 days; `None` when there is no cache root.
    pub fn default_location() -> Option<Self> {
        let max_age = crate::aws::duration_env(MAX_AGE_VAR, DEFAULT_MAX_AGE);
        crate::cache_dir::cache_root().map(|root| Self::at(root.join("catalog"), max_age))
    }

    /// A cache keeping its files directly under `dir`.
    pub fn at(dir: impl Into<PathBuf>, max_age: Duration) -> Self {
        CatalogCache { dir: dir.into(), max_age }
    }

    /// The file of `region`'s catalog. The region is a checked name (letters, digits, `-`), so it stays a file
    /// name inside the directory.
    pub fn path(&self, region: &str) -> PathBuf {
        self.dir.join(format!("{region}.json"))
    }

    pub(super) fn read(&self, region: &str, now: OffsetDateTime) -> Cached {
        match self.read_any_age(region) {
            Ok(Some(catalog)) if is_fresh(&catalog, region, now, self.max_age) => Cached::Fresh(catalog),
            Ok(_) => Cached::Stale,
            Err(why) => Cached::Unusable(why),
        }
    }

    /// The catalog cached for `region` whatever its age, without any AWS call: for what only shows prices
    /// (`kbp plan`'s cost), where a month-old price beats a plan that calls AWS by default. `Ok(None)` when
    /// nothing is cached for the region; `Err` says why a file that is there cannot be used.
    pub fn read_any_age(&self, region: &str) -> Result<Option<Catalog>, String> {
        let path = self.path(region);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let catalog: Catalog = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{} is not a catalog kbp can read: {e}", path.display()))?;
        Ok((catalog.region == region).then_some(catalog))
    }

    pub(super) fn write(&self, catalog: &Catalog) -> io::Result<PathBuf> {
        let path = self.path(&catalog.region);
        let json = serde_json::to_vec(catalog).map_err(io::Error::other)?;
        crate::private_file::create_dir_all(&self.dir)?;
        crate::private_file::write_atomically(&path, &json)?;
        Ok(path)
    }
}

/// Whether a cached catalog may stand in for AWS: it is `region`'s, and it was read less than `max_age` ago.
/// A `fetched_at` in the future (a clock set back since) or unreadable counts as stale.
fn is_fresh(catalog: &Catalog, region: &str, now: OffsetDateTime, max_age: Duration) -> bool {
    let Ok(fetched) = OffsetDateTime::parse(&catalog.fetched_at, &Rfc3339) else { return false };
    let age = now - fetched;
    catalog.region == region && !age.is_negative() && age < max_age
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn catalog(region: &str, fetched_at: &str) -> Catalog {
        Catalog { region: region.into(), fetched_at: fetched_at.into(), types: vec![] }
    }

    #[test]
    fn a_catalog_is_fresh_for_its_region_until_it_is_max_age_old() {
        let now = datetime!(2026-03-10 12:00 UTC);
        let week = DEFAULT_MAX_AGE;
        assert!(is_fresh(&catalog("us-west-2", "2026-03-04T12:00:00Z"), "us-west-2", now, week));
        assert!(!is_fresh(&catalog("us-west-2", "2026-03-03T12:00:00Z"), "us-west-2", now, week), "exactly 7 days");
        assert!(!is_fresh(&catalog("us-east-1", "2026-03-09T12:00:00Z"), "us-west-2", now, week), "another region");
        assert!(!is_fresh(&catalog("us-west-2", "2026-03-11T12:00:00Z"), "us-west-2", now, week), "from the future");
        assert!(!is_fresh(&catalog("us-west-2", "yesterday"), "us-west-2", now, week));
        assert!(!is_fresh(&catalog("us-west-2", "2026-03-10T11:59:00Z"), "us-west-2", now, Duration::ZERO));
    }

    #[test]
    fn catalogs_are_one_file_per_region_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CatalogCache::at(dir.path().join("catalog"), DEFAULT_MAX_AGE);
        assert_eq!(cache.path("eu-central-1"), dir.path().join("catalog/eu-central-1.json"));
        let now = OffsetDateTime::now_utc();
        assert!(matches!(cache.read("us-west-2", now), Cached::Stale), "nothing cached yet");
        let fetched_at = now.format(&Rfc3339).unwrap();
        cache.write(&catalog("us-west-2", &fetched_at)).unwrap();
        assert!(matches!(cache.read("us-west-2", now), Cached::Fresh(c) if c.fetched_at == fetched_at));
        cache.write(&catalog("us-west-2", "2020-01-01T00:00:00Z")).unwrap();
        assert!(matches!(cache.read("us-west-2", now), Cached::Stale), "years old");
        let old = cache.read_any_age("us-west-2").unwrap().expect("any age will do");
        assert_eq!(old.fetched_at, "2020-01-01T00:00:00Z");
        assert_eq!(cache.read_any_age("eu-central-1"), Ok(None), "nothing cached for that region");
        std::fs::write(cache.path("us-west-2"), "{").unwrap();
        assert!(matches!(cache.read("us-west-2", now), Cached::Unusable(why) if why.contains("us-west-2.json")));
        assert!(cache.read_any_age("us-west-2").is_err());
    }
}
