//! `kbp graph`: the compiled resource graph as Graphviz dot or JSON.

use super::args::{Global, GraphArgs, GraphFormat};
use super::common;

pub(super) fn run(a: GraphArgs, g: &Global) -> u8 {
    let (_, graph) = match common::load(&a.bp, crate::color::enabled(g.no_color, crate::color::Stream::Stderr)) {
        Ok(x) => x,
        Err(code) => return code,
    };
    match a.format {
        GraphFormat::Dot => print!("{}", crate::graph::to_dot(&graph)),
        GraphFormat::Json => println!("{:#}", crate::graph::to_json(&graph)),
    }
    0
}
