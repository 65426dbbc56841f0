//! Records the commit kbp is built from (`kbp --version`): `KBP_COMMIT`, the short hash with `-dirty` for
//! uncommitted changes to tracked files when it was built, or `unknown` outside a git checkout (a source tarball).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    println!("cargo:rustc-env=KBP_COMMIT={commit}{}", if dirty { "-dirty" } else { "" });
    // A new commit or checkout changes HEAD or the branch it names.
    if let Some(head) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={head}/HEAD");
        if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={head}/{reference}");
        }
    }
}
