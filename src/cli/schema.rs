//! `kbp schema`: the blueprint's JSON Schema (`blueprint::json_schema`), on stdout or into a file, for editors
//! that complete and check TOML against one.

use super::args::SchemaArgs;
use super::common::FAILED;

pub(super) fn run(a: SchemaArgs) -> u8 {
    let text = format!("{:#}\n", crate::blueprint::json_schema());
    let Some(path) = &a.out else {
        print!("{text}");
        return 0;
    };
    match super::fmt::write_user_file(path, text.as_bytes()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: cannot write {}: {e}\n  hint: its directory must exist and be writable", path.display());
            FAILED
        }
    }
}
