//! The `kbp` command: everything it does is in the library ([`kbp::cli`]).

fn main() -> std::process::ExitCode {
    kbp::cli::main()
}
