//! Files only their owner may read, which kbp writes beside the user's own: state, its lock and backup, saved
//! plans (they hold ARNs, endpoints and CA data). Owns how such a file is written whole (an exclusive temp file,
//! fsync, rename), how a lock file is opened, and how kbp makes the directories it needs. Modes are set
//! explicitly after creation, so a permissive umask (`umask 000`) does not widen them.
//!
//! Nothing here follows a symbolic link planted where kbp creates a file: a temp file is created with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` under a name no one can guess, and the lock file is opened with `O_NOFOLLOW`.
//! Which path a state file really lives at (symlinks the user made on purpose) is decided by the caller before.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Mode of every file kbp writes for itself.
pub const FILE_MODE: u32 = 0o600;
/// Mode of a directory kbp creates (never of one that was already there).
pub const DIR_MODE: u32 = 0o700;

/// Replaces `path` with `bytes` atomically: a reader (or a crash) sees the old file or the new one, never half
/// of one. The new file has mode 0600 whatever the umask. A symlink *at* `path` is replaced, not followed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_name(path);
    let mut f = create_new(&tmp)?;
    let written = f.write_all(bytes).and_then(|_| f.sync_all());
    drop(f);
    if let Err(e) = written.and_then(|_| fs::rename(&tmp, path)) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    // The rename is durable only once the directory entry is.
    if let Ok(d) = File::open(dir_of(path)) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Creates `path` for writing, mode 0600; fails if anything (a file, a symlink, even a dangling one) is already
/// there, rather than write through it.
pub fn create_new(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    private_no_follow(&mut o);
    let f = o.open(path).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => io::Error::new(
            e.kind(),
            format!(
                "{} already exists, and kbp only writes a temp file it has just created itself (the name is \
                 random, so something else put it there): look at it, remove it and run again",
                path.display()
            ),
        ),
        _ => e,
    })?;
    set_mode(&f, FILE_MODE)?;
    Ok(f)
}

/// Opens the lock file at `path` for reading and writing, creating it (mode 0600) if it is missing. A symlink
/// there is refused, not followed: the lock file is written to, and its place is kbp's own.
pub fn open_lock_file(path: &Path) -> io::Result<File> {
    match create_new_readable(path) {
        Ok(f) => {
            set_mode(&f, FILE_MODE)?;
            Ok(f)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let mut o = OpenOptions::new();
            o.read(true).write(true);
            private_no_follow(&mut o);
            o.open(path).map_err(|e| {
                if is_symlink_refusal(&e) {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "{} is a symbolic link; kbp does not follow one to its lock file: remove the link \
                             and run again",
                            path.display()
                        ),
                    )
                } else {
                    e
                }
            })
        }
        Err(e) => Err(e),
    }
}

/// Creates `dir` and any missing parents. The ones kbp creates get mode 0700 (the state directory holds only
/// kbp's private files); a directory that was already there is left as its owner made it.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut d = dir;
    while !d.as_os_str().is_empty() && fs::symlink_metadata(d).is_err() {
        missing.push(d);
        match d.parent() {
            Some(p) => d = p,
            None => break,
        }
    }
    for d in missing.into_iter().rev() {
        match fs::create_dir(d) {
            Ok(()) => set_dir_mode(d)?,
            // Made by a concurrent run between our look and our create: it is not ours to chmod.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The directory `path` is in (`.` for a bare file name).
pub fn dir_of(path: &Path) -> &Path {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// `<path><suffix>`, such as `s.json.lock`.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p: OsString = path.as_os_str().to_owned();
    p.push(suffix);
    p.into()
}

/// `<path>.tmp.<pid>.<random>`: the pid says who left it (after a crash), the random part makes it impossible
/// to plant a file or link there in advance.
fn temp_name(path: &Path) -> PathBuf {
    with_suffix(path, &format!(".tmp.{}.{:016x}", std::process::id(), rand::random::<u64>()))
}

fn create_new_readable(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create_new(true);
    private_no_follow(&mut o);
    o.open(path)
}

/// Mode 0600 at creation (narrowed by the umask; [`set_mode`] then sets it exactly), and `O_NOFOLLOW`: a
/// symlink as the last component of the path fails the open.
#[cfg(unix)]
fn private_no_follow(o: &mut OpenOptions) {
    use std::os::unix::fs::OpenOptionsExt;
    o.mode(FILE_MODE).custom_flags(libc::O_NOFOLLOW);
}

#[cfg(not(unix))]
fn private_no_follow(_: &mut OpenOptions) {}

/// What `open(O_NOFOLLOW)` reports for a symlink: ELOOP on Linux and macOS, EMLINK on FreeBSD.
#[cfg(unix)]
fn is_symlink_refusal(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EMLINK))
}

#[cfg(not(unix))]
fn is_symlink_refusal(_: &io::Error) -> bool {
    false
}

#[cfg(unix)]
fn set_mode(f: &File, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_: &File, _: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn set_dir_mode(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(dir, fs::Permissions::from_mode(DIR_MODE))
}

#[cfg(not(unix))]
fn set_dir_mode(_: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn mode(p: &Path) -> u32 {
        fs::symlink_metadata(p).expect("the file's metadata").permissions().mode() & 0o777
    }

    /// Runs `f` with the process umask at 000, restoring it after. nextest runs each test in its own
    /// process, so no other test sees the changed umask.
    fn with_umask_000<T>(f: impl FnOnce() -> T) -> T {
        let old = rustix::process::umask(rustix::fs::Mode::empty());
        let out = f();
        rustix::process::umask(old);
        out
    }

    #[test]
    fn files_and_directories_kbp_creates_are_private_under_umask_000() {
        let dir = tempfile::tempdir().unwrap();
        let state_dir = dir.path().join("work/.kbp");
        with_umask_000(|| {
            create_dir_all(&state_dir).unwrap();
            write_atomically(&state_dir.join("s.json"), b"{}").unwrap();
            drop(open_lock_file(&state_dir.join("s.json.lock")).unwrap());
        });
        assert_eq!(mode(&state_dir), 0o700);
        assert_eq!(mode(&dir.path().join("work")), 0o700, "every directory kbp made");
        assert_eq!(mode(&state_dir.join("s.json")), 0o600);
        assert_eq!(mode(&state_dir.join("s.json.lock")), 0o600);
        assert_eq!(fs::read_dir(&state_dir).unwrap().count(), 2, "no temp file is left behind");
    }

    #[test]
    fn an_existing_directory_keeps_its_owners_mode() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine");
        fs::create_dir(&mine).unwrap();
        fs::set_permissions(&mine, fs::Permissions::from_mode(0o755)).unwrap();
        create_dir_all(&mine.join(".kbp")).unwrap();
        assert_eq!(mode(&mine), 0o755);
        assert_eq!(mode(&mine.join(".kbp")), 0o700);
    }

    #[test]
    fn a_symlink_planted_at_a_temp_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let planted = dir.path().join("s.json.tmp.planted");
        symlink(&victim, &planted).unwrap();
        let err = create_new(&planted).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert!(err.to_string().contains("remove it"), "{err}");
        // A dangling link too: O_EXCL refuses any entry, so a link to a file not there yet is not created.
        let dangling = dir.path().join("s.json.tmp.dangling");
        symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(create_new(&dangling).is_err());
        assert!(!dir.path().join("nowhere").exists());

        // The name kbp used before (`<path>.tmp.<pid>`) is guessable; a link planted there is never touched.
        let old_name = dir.path().join(format!("s.json.tmp.{}", std::process::id()));
        symlink(&victim, &old_name).unwrap();
        write_atomically(&dir.path().join("s.json"), b"new").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_to_string(dir.path().join("s.json")).unwrap(), "new");
    }

    #[test]
    fn a_symlinked_lock_file_is_refused_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let before = mode(&victim);
        let lock = dir.path().join("s.json.lock");
        symlink(&victim, &lock).unwrap();
        let err = open_lock_file(&lock).unwrap_err();
        assert!(err.to_string().contains("symbolic link") && err.to_string().contains("remove"), "{err}");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(mode(&victim), before, "its mode is untouched");
    }

    #[test]
    fn an_existing_lock_file_is_reopened() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("s.json.lock");
        fs::write(&lock, "holder").unwrap();
        let mut text = String::new();
        io::Read::read_to_string(&mut open_lock_file(&lock).unwrap(), &mut text).unwrap();
        assert_eq!(text, "holder");
    }
}
