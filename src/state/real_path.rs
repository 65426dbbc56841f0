//! Where a local state file really is. The path a user gives may pass through symlinks (a linked `.kbp/`, a
//! state file linked to a shared checkout); the lock, the writes and the backup must all name the one real
//! file, or a run through a link and a run through the real path would not lock each other out, and an atomic
//! rename would replace the link with a file. A state file that is itself a link is followed only within the
//! directory the link is in: whoever can make a link must not be able to send kbp's writes and lock elsewhere.

use std::fs;
use std::path::{Path, PathBuf};

use super::backend::StateError;
use crate::private_file::dir_of;

/// Symlinks followed before giving up, as the kernel does (`ELOOP`).
const MAX_LINKS: u32 = 40;

/// The real path of the state file `given`: its directories' symlinks resolved (a directory not made yet is
/// planned under its nearest existing parent), and, if the file itself is a symlink, where it leads, which
/// must be inside the directory the link is in.
pub(super) fn resolve(given: &Path) -> Result<PathBuf, StateError> {
    let io = |source| StateError::Io { action: "resolve", path: given.to_path_buf(), source };
    let Some(name) = given.file_name() else {
        return Err(StateError::Refused {
            message: format!("state path {} names a directory, not a file", given.display()),
            hint: "give a file path, such as .kbp/<cluster-name>.state.json".to_string(),
        });
    };
    let dir = real_or_planned(dir_of(given), 0).map_err(io)?;
    let here = dir.join(name);
    match fs::symlink_metadata(&here) {
        Ok(m) if m.file_type().is_symlink() => {
            let target = real_or_planned(&here, 0).map_err(io)?;
            if !target.starts_with(&dir) {
                return Err(StateError::Refused {
                    message: format!(
                        "state path {} is a symbolic link to {}, outside the directory the link is in ({})",
                        given.display(),
                        target.display(),
                        dir.display()
                    ),
                    hint: format!(
                        "kbp follows a state file link only within its own directory, so a link cannot send the \
                         state's writes and lock elsewhere: pass --state {} to use that file directly",
                        target.display()
                    ),
                });
            }
            Ok(target)
        }
        _ => Ok(here),
    }
}

/// `path` with every symlink resolved; where it does not exist (yet), its nearest existing ancestor resolved
/// with the rest joined on, following a dangling link to where it would lead.
fn real_or_planned(path: &Path, links: u32) -> std::io::Result<PathBuf> {
    let missing = match fs::canonicalize(path) {
        Ok(real) => return Ok(real),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => e,
        Err(e) => return Err(e),
    };
    if links > MAX_LINKS {
        return Err(std::io::Error::other(format!("{}: too many levels of symbolic links", path.display())));
    }
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let target = fs::read_link(path)?;
        return real_or_planned(&dir_of(path).join(target), links + 1);
    }
    // A path ending in `..` or `.` has no name to plan under its parent, and does not exist.
    let name = path.file_name().ok_or(missing)?;
    Ok(real_or_planned(dir_of(path), links)?.join(name))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_path_not_made_yet_is_planned_under_its_real_parents() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().canonicalize().unwrap();
        assert_eq!(resolve(&dir.path().join(".kbp/a/s.json")).unwrap(), real_dir.join(".kbp/a/s.json"));
        fs::create_dir(dir.path().join("real")).unwrap();
        symlink(dir.path().join("real"), dir.path().join(".kbp")).unwrap();
        assert_eq!(resolve(&dir.path().join(".kbp/s.json")).unwrap(), real_dir.join("real/s.json"), "a linked dir");
    }

    #[test]
    fn a_state_file_link_is_followed_within_its_directory_only() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().canonicalize().unwrap();
        fs::create_dir(dir.path().join("states")).unwrap();
        fs::write(dir.path().join("states/s.json"), "{}").unwrap();
        symlink("states/s.json", dir.path().join("in.json")).unwrap();
        assert_eq!(resolve(&dir.path().join("in.json")).unwrap(), real_dir.join("states/s.json"));
        // A dangling link inside the directory: the file it will be, once written.
        symlink("states/new.json", dir.path().join("new.json")).unwrap();
        assert_eq!(resolve(&dir.path().join("new.json")).unwrap(), real_dir.join("states/new.json"));

        symlink("../s.json", dir.path().join("states/up.json")).unwrap();
        let e = resolve(&dir.path().join("states/up.json")).unwrap_err();
        assert!(matches!(e, StateError::Refused { .. }), "{e}");
        symlink("/etc/passwd", dir.path().join("abs.json")).unwrap();
        assert!(resolve(&dir.path().join("abs.json")).unwrap_err().to_string().contains("outside the directory"));
    }

    #[test]
    fn a_link_loop_and_a_directory_are_errors_not_hangs() {
        let dir = tempfile::tempdir().unwrap();
        symlink("b.json", dir.path().join("a.json")).unwrap();
        symlink("a.json", dir.path().join("b.json")).unwrap();
        assert!(matches!(resolve(&dir.path().join("a.json")), Err(StateError::Io { .. })));
        let e = resolve(&dir.path().join("..")).unwrap_err().to_string();
        assert!(e.contains("names a directory"), "{e}");
    }
}
