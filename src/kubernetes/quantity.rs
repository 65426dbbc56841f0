//! The API machinery's quantity (`k8s.io/apimachinery/pkg/api/resource`): `500m`, `2`, `1Gi`, `1e3`. The one
//! check of its syntax in kbp, for rendered manifests (`builtin`) and blueprint values (`blueprint::rules::k8s`).
//! Written here because k8s-openapi's `Quantity` is the unparsed string, and a syntax check is a few lines.

/// Whether `s` is a quantity as the API server parses it, the pattern the CRDs also write out:
/// `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
pub(crate) fn is_quantity(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    number_len(unsigned).is_some_and(|n| {
        let suffix = &unsigned[n..];
        match suffix {
            "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => true,
            _ => suffix
                .strip_prefix(['e', 'E'])
                .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e))
                .is_some_and(|e| number_len(e) == Some(e.len())),
        }
    })
}

/// The amount a quantity stands for (`500m` → 0.5, `1Gi` → 1073741824, `2e3` → 2000), or `None` when `s` is
/// not a quantity. An `f64` is exact for every request and limit a cluster writes (integers below 2^53).
pub(crate) fn value(s: &str) -> Option<f64> {
    let s = s.trim();
    if !is_quantity(s) {
        return None;
    }
    let (sign, unsigned) = match s.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, s.strip_prefix('+').unwrap_or(s)),
    };
    let n = number_len(unsigned)?;
    let number: f64 = unsigned[..n].parse().ok()?;
    let suffix = &unsigned[n..];
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exponent => 10f64.powf(exponent[1..].parse().ok()?),
    };
    Some(sign * number * scale)
}

/// `(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))`: the length of the number at the start of `s`, if any.
fn number_len(s: &str) -> Option<usize> {
    let int = s.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &s[int..];
    let frac = rest.strip_prefix('.').map_or(0, |f| 1 + f.bytes().take_while(u8::is_ascii_digit).count());
    (int > 0 || frac > 1).then_some(int + frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quantity_stands_for_its_amount() {
        assert_eq!(value("500m"), Some(0.5));
        assert_eq!(value("2"), Some(2.0));
        assert_eq!(value("1Gi"), Some(1073741824.0));
        assert_eq!(value("1.5G"), Some(1.5e9));
        assert_eq!(value("2e3"), Some(2000.0));
        assert_eq!(value("-1k"), Some(-1000.0));
        assert_eq!(value("100Mi"), Some(104857600.0));
        assert_eq!(value("1GB"), None, "GB is not a quantity suffix");
        assert_eq!(value(""), None);
    }
}
