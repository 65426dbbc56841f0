fn main() -> std::process::ExitCode {
    kbp::cli::main()
}
