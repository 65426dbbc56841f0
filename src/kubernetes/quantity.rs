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

/// `(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))`: the length of the number at the start of `s`, if any.
fn number_len(s: &str) -> Option<usize> {
    let int = s.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &s[int..];
    let frac = rest.strip_prefix('.').map_or(0, |f| 1 + f.bytes().take_while(u8::is_ascii_digit).count());
    (int > 0 || frac > 1).then_some(int + frac)
}
