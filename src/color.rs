//! Whether kbp colours what it writes: the one decision for every command, its output and its errors alike.
//! Never with `--no-color` or `NO_COLOR` (set and not empty, as no-color.org asks); otherwise only when the stream
//! is a terminal, since escape codes in a CI log or a file are noise.

use std::io::IsTerminal;

/// Where the text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output: results (plans, tables, the `--json` stream).
    Stdout,
    /// Standard error: progress, logs and errors.
    Stderr,
}

/// Whether text written to `stream` is coloured; `no_color` is the `--no-color` flag.
pub fn enabled(no_color: bool, stream: Stream) -> bool {
    let terminal = match stream {
        Stream::Stdout => std::io::stdout().is_terminal(),
        Stream::Stderr => std::io::stderr().is_terminal(),
    };
    wanted(no_color, std::env::var_os("NO_COLOR").as_deref()) && terminal
}

/// Whether the flag and `NO_COLOR`'s value leave colour on.
fn wanted(no_color: bool, env: Option<&std::ffi::OsStr>) -> bool {
    !no_color && env.is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_or_any_non_empty_no_color_turns_colour_off() {
        assert!(wanted(false, None));
        assert!(!wanted(true, None));
        assert!(!wanted(false, Some("1".as_ref())));
        assert!(!wanted(false, Some("false".as_ref())), "whatever its value");
        assert!(wanted(false, Some("".as_ref())), "an empty NO_COLOR is unset");
    }
}
