//! Running kbp with its stdout and stderr on a terminal (a pseudo-terminal), where it colours its output unless
//! told not to: what tests of `NO_COLOR` and `--no-color` need to show that colour was on to begin with.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, ExitStatus, Stdio};

/// Runs `cmd` with stdout and stderr on one new terminal, and returns its status and everything it wrote there
/// (line ends as the terminal makes them, `\r\n`).
pub fn output_on_terminal(mut cmd: Command) -> (ExitStatus, String) {
    let (mut controller, mut terminal) = (0, 0);
    // SAFETY: openpty writes the two descriptors it opens; no name, settings or size are passed.
    let opened = unsafe {
        libc::openpty(&mut controller, &mut terminal, std::ptr::null_mut(), std::ptr::null(), std::ptr::null())
    };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned by nothing else.
    let (controller, terminal) = unsafe { (OwnedFd::from_raw_fd(controller), OwnedFd::from_raw_fd(terminal)) };
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
