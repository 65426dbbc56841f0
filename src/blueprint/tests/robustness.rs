//! Mangled blueprints must come back as diagnostics (or, by luck, a blueprint), never as a panic, and quickly:
//! every prefix of each shipped blueprint, and many variants with characters deleted or inserted by a
//! fixed-seed generator.

use std::time::{Duration, Instant};

use super::{check_str, shipped, SHIPPED};

/// xorshift64*: small, deterministic, good enough to pick positions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A single load must never take long: a pathological case (say, quadratic recovery) shows up here.
const PER_LOAD: Duration = Duration::from_secs(2);

fn load_survives(name: &str, text: &str, sets: &[String], render: bool) {
    let started = Instant::now();
    let result = check_str(name, text, sets);
    assert!(started.elapsed() < PER_LOAD, "loading took {:?}:\n{text}", started.elapsed());
    if let Err(d) = result {
        assert!(d.has_errors(), "Err without an error:\n{text}");
        for item in d.items() {
            let (Some(source), Some(p)) = (item.source, &item.position) else {
                continue;
            };
            assert!(p.span.end <= d.source(source).text.len(), "span past the end:\n{text}");
            assert!(p.line >= 1 && p.column >= 1);
        }
        if render {
            assert!(!d.render(false).is_empty());
        }
    }
}

#[test]
fn every_prefix_of_every_shipped_blueprint() {
    for name in SHIPPED {
        let text = std::fs::read_to_string(shipped(name)).expect("readable");
        for (n, (i, _)) in text.char_indices().enumerate() {
            load_survives(name, &text[..i], &[], n % 97 == 0);
        }
    }
}

#[test]
fn random_deletions_and_insertions() {
    const NOISE: [&str; 16] = ["[", "]", "[[", "\"", "'", "=", "{", "}", ",", "\n", ".", "0", "-1", "é", "#", "\"\"\""];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for name in SHIPPED {
        let text = std::fs::read_to_string(shipped(name)).expect("readable");
        for round in 0..300 {
            let mut chars: Vec<char> = text.chars().collect();
            for _ in 0..1 + rng.below(6) {
                let at = rng.below(chars.len());
                if rng.below(2) == 0 && !chars.is_empty() {
                    let len = (1 + rng.below(8)).min(chars.len() - at);
                    chars.drain(at..at + len);
                } else {
                    let noise = NOISE[rng.below(NOISE.len())];
                    chars.splice(at..at, noise.chars());
                }
            }
            let mangled: String = chars.into_iter().collect();
            load_survives(name, &mangled, &[], round % 50 == 0);
        }
    }
}

#[test]
fn odd_overrides() {
    let text = std::fs::read_to_string(shipped("karpenter-mng.toml")).expect("readable");
    let sets = [
        "=",
        "=1",
        "a=",
        ".=1",
        "cluster=1",
        "cluster.name.more=1",
        "node_pools=[]",
        "node_pools.default=3",
        "node_pools.default.requirements=[{}]",
        "node_pools.default.requirements.x=1",
        "vpc.azs=0",
        "vpc.azs=[]",
        "vpc.cidr=10.0.0.0/24",
        "vpc.cidr=10.0.0.0/21",
        "\"unterminated=1",
        "a.'b'.\"c\"=[1, [2], {x=3}]",
        "karpenter=\u{0}",
        "cluster.name=é",
        "addons.UPPER.enabled=false",
        "node_classes={}",
    ];
    for s in sets {
        load_survives("k.toml", &text, &[s.to_string()], true);
    }
    load_survives("k.toml", &text, &sets.map(String::from), true);
}
