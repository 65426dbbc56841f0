//! Where kbp keeps what it can fetch again: one root for every cache (chart archives, parsed CRDs, instance-type
//! catalogs), each under a folder of its own. Only the root is decided here; what each cache holds and when it is
//! stale is its owner's business (`kubernetes::oci`, `catalog`).

use std::ffi::OsString;
use std::path::PathBuf;

/// `$KBP_CACHE_DIR`, else `$XDG_CACHE_HOME/kbp`, else `$HOME/.cache/kbp`; `None` when none of them is set.
pub fn cache_root() -> Option<PathBuf> {
    cache_root_from(|name| std::env::var_os(name))
}

/// [`cache_root`] with the environment given as a lookup, for tests.
fn cache_root_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let dir = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    dir("KBP_CACHE_DIR")
        // The XDG base directory spec says to ignore relative paths.
        .or_else(|| dir("XDG_CACHE_HOME").filter(|d| d.is_absolute()).map(|d| d.join("kbp")))
        .or_else(|| dir("HOME").map(|d| d.join(".cache").join("kbp")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_lives_under_kbp_cache_dir_then_xdg_then_home() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
        };
        let all = env(&[("KBP_CACHE_DIR", "/k"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(cache_root_from(all), Some(PathBuf::from("/k")));
        let empty_kbp = env(&[("KBP_CACHE_DIR", ""), ("XDG_CACHE_HOME", "/x")]);
        assert_eq!(cache_root_from(empty_kbp), Some(PathBuf::from("/x/kbp")));
        let relative_xdg = env(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/h")]);
        assert_eq!(cache_root_from(relative_xdg), Some(PathBuf::from("/h/.cache/kbp")));
        assert_eq!(cache_root_from(env(&[])), None);
    }
}
