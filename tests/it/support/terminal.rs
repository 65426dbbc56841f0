//! Running kbp with its stdout and stderr on a terminal (a pseudo-terminal), where it colours its output unless
//! told not to: what tests of `NO_COLOR` and `--no-color` need to show that colour was on to begin with.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Command, ExitStatus, Stdio};

/// Runs `cmd` with stdout and stderr on one new terminal, and returns its status and everything it wrote there
/// (line ends as the terminal makes them, `\r\n`).
pub(crate) fn output_on_terminal(mut cmd: Command) -> (ExitStatus, String) {
    let flags = rustix::pty::OpenptFlags::RDWR | rustix::pty::OpenptFlags::NOCTTY;
    let controller = rustix::pty::openpt(flags).expect("open a pseudo-terminal");
    rustix::pty::grantpt(&controller).expect("grantpt");
    rustix::pty::unlockpt(&controller).expect("unlockpt");
    let name = rustix::pty::ptsname(&controller, Vec::new()).expect("the terminal's name");
    let path = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(name.as_bytes()));
    let mut open = std::fs::OpenOptions::new();
    open.read(true).write(true).custom_flags(libc::O_NOCTTY);
    let terminal: OwnedFd = open.open(&path).expect("open the terminal's end").into();
    cmd.stdin(Stdio::null()).stdout(terminal.try_clone().expect("dup the terminal")).stderr(terminal);
    let mut child = cmd.spawn().expect("run kbp on a terminal");
    // The command holds this process's copies of the terminal's end: without them, reading ends when kbp exits.
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut from = std::fs::File::from(controller);
        let mut chunk = [0u8; 8192];
        // Linux answers EIO once no process holds the terminal's end any more.
        while let Ok(n @ 1..) = from.read(&mut chunk) {
            out.extend_from_slice(&chunk[..n]);
        }
        out
    });
    let status = child.wait().expect("wait for kbp");
    let out = reader.join().expect("read the terminal");
    (status, String::from_utf8_lossy(&out).into_owned())
}
