//! Records the commit kbp is built from (`kbp --version`): `KBP_COMMIT`, the short hash with `-dirty` for
//! uncommitted changes to tracked files when it was built. Outside its own git checkout (a crate from crates.io,
//! a source tarball) it is the commit `cargo package` recorded in `.cargo_vcs_info.json`, else `unknown`.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The `sha1` of the `git` table cargo writes into a package: `{"git": {"sha1": "…", "dirty": true}, …}`. Read
/// by hand so the build script needs no JSON parser of its own.
fn packaged_commit(dir: &Path) -> Option<String> {
    let info = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let sha = info.split("\"sha1\"").nth(1)?.split('"').nth(1)?;
    let short = sha.get(..12)?;
    let dirty = info.contains("\"dirty\": true") || info.contains("\"dirty\":true");
    Some(format!("{short}{}", if dirty { "-dirty" } else { "" }))
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    // Only kbp's own checkout counts: an unpacked crate may sit inside some other repository (a home directory
    // kept in git, a vendored tree), whose commit says nothing about kbp.
    let own_checkout = git(&dir, &["rev-parse", "--show-toplevel"])
        .is_some_and(|top| Path::new(&top).canonicalize().ok() == dir.canonicalize().ok());
    let commit = if own_checkout {
        let commit = git(&dir, &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
        let dirty = git(&dir, &["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        format!("{commit}{}", if dirty { "-dirty" } else { "" })
    } else {
        packaged_commit(&dir).unwrap_or_else(|| "unknown".to_string())
    };
    println!("cargo:rustc-env=KBP_COMMIT={commit}");
    // A new commit or checkout changes HEAD or the branch it names (`--git-path`: in a worktree, HEAD is the
    // worktree's own and the branch is in the repository's common directory).
    if own_checkout {
        let git_path = |name: &str| git(&dir, &["rev-parse", "--path-format=absolute", "--git-path", name]);
        let mut watched: Vec<String> = git_path("HEAD").into_iter().collect();
        if let Some(branch) = git(&dir, &["symbolic-ref", "-q", "HEAD"]).and_then(|b| git_path(&b)) {
            // A branch not written since `git gc` lives in packed-refs; a path that does not exist would make
            // cargo rerun this script on every build.
            if Path::new(&branch).exists() {
                watched.push(branch);
            } else {
                watched.extend(git_path("packed-refs"));
            }
        }
        for path in watched {
            println!("cargo:rerun-if-changed={path}");
        }
    } else if dir.join(".cargo_vcs_info.json").exists() {
        println!("cargo:rerun-if-changed=.cargo_vcs_info.json");
    } else {
        // Without this line cargo would rerun the script on every change to any file of the package.
        println!("cargo:rerun-if-changed=build.rs");
    }
}
