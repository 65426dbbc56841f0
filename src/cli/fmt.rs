//! `kbp fmt`: rewrites blueprints in canonical form (`blueprint::format` decides it), or with `--check` only
//! says which are not; `--diff` shows the changes.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::args::{FmtArgs, Global};
use super::common::FAILED;
use crate::blueprint::format::{self, Formatted};

/// Exit 0 when every file is (now) canonical; 1 when one could not be read, parsed or written, or, under
/// `--check`, is not canonical.
pub(super) fn run(a: FmtArgs, g: &Global) -> u8 {
    let color = crate::color::enabled(g.no_color, crate::color::Stream::Stderr);
    let mut failed = false;
    let mut not_canonical = 0;
    for path in &a.files {
        let f = match format::format_file(path) {
            Ok(f) => f,
            Err(d) => {
                eprint!("{}", d.render(color));
                failed = true;
                continue;
            }
        };
        if !f.changed() {
            continue;
        }
        not_canonical += 1;
        if !a.check {
            if let Err(e) = write_user_file(path, f.canonical.as_bytes()) {
                eprintln!(
                    "error: cannot write {}: {e}\n  hint: kbp fmt writes a temp file beside it and renames it \
                     over it, so its directory must be writable",
                    path.display()
                );
                failed = true;
                continue;
            }
        }
        if a.diff {
            print!("{}", unified_diff(path, &f));
        } else {
            println!("{}", path.display());
        }
    }
    if a.check && not_canonical > 0 {
        let (verb, them) = if not_canonical == 1 { ("is", "it") } else { ("are", "them") };
        let noun = if a.files.len() == 1 { "file" } else { "files" };
        eprintln!(
            "error: {not_canonical} of {} {noun} {verb} not in canonical form\n  hint: `kbp fmt` without --check \
             rewrites {them}",
            a.files.len()
        );
        failed = true;
    }
    if failed {
        FAILED
    } else {
        0
    }
}

/// The change as a unified diff, both sides named by the path as given (`patch -p0` applies it).
fn unified_diff(path: &Path, f: &Formatted) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(&f.original, &f.canonical).unified_diff().header(&name, &name).to_string()
}

/// Replaces one of the user's files (a blueprint, a saved schema) whole and atomically, the way state is
/// written ([`crate::private_file::write_atomically`]), then gives it back the permissions it had, or 0644 for
/// a new one: it is the user's file, not one of kbp's private ones. A symlink is followed, so the file it leads
/// to is rewritten and the link stays a link.
pub(super) fn write_user_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = match fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) if e.kind() == io::ErrorKind::NotFound => PathBuf::from(path),
        Err(e) => return Err(e),
    };
    let permissions =
        fs::metadata(&target).map(|m| m.permissions()).unwrap_or_else(|_| fs::Permissions::from_mode(0o644));
    crate::private_file::write_atomically(&target, bytes)?;
    fs::set_permissions(&target, permissions)
}
