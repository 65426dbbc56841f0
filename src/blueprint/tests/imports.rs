//! `[[import]]` tables: the schema checks their shape, and [`Loaded::imports`] their `to` against the addresses
//! the blueprint compiles to, each problem at its line and column.

use super::*;

fn loaded(imports: &str) -> Result<Loaded, Diagnostics> {
    check_str("bp.toml", &format!("{HEADER}{imports}"), &[])
}

#[test]
fn import_tables_load_in_order() {
    let l = loaded("[[import]]\nto = \"eks_cluster.main\"\nid = \"sbx\"\n\n[[import]]\nto = \"eks_addon.main[\\\"coredns\\\"]\"\nid = \"sbx:coredns\"\n").unwrap();
    let got: Vec<(&str, &str)> = l.blueprint.import.iter().map(|i| (i.to.as_str(), i.id.as_str())).collect();
    assert_eq!(got, [("eks_cluster.main", "sbx"), ("eks_addon.main[\"coredns\"]", "sbx:coredns")]);
    assert!(l.imports(&["eks_cluster.main".into(), "eks_addon.main[\"coredns\"]".into()]).is_ok());
}

#[test]
fn a_malformed_or_incomplete_import_is_refused_by_the_schema() {
    let d = loaded("[[import]]\nto = \"not an address\"\n").unwrap_err();
    let e = errors(&d);
    assert!(e.iter().any(|(l, _, m)| *l == 5 && m.contains("not a resource address")), "{e:?}");
    assert!(e.iter().any(|(_, _, m)| m.contains("id")), "the missing id is reported too: {e:?}");
}

#[test]
fn a_to_the_blueprint_does_not_compile_to_is_reported_at_its_place_with_the_closest_address() {
    let l = loaded("[[import]]\nto = \"eks_cluster.mian\"\nid = \"sbx\"\n").unwrap();
    let d = l.imports(&["eks_cluster.main".into(), "iam_role.cluster".into()]).unwrap_err();
    assert_eq!(errors(&d), [(5, 6, "`eks_cluster.mian` is not an address of this blueprint".to_string())]);
    let item = &d.items()[0];
    assert_eq!(item.path.as_deref(), Some("import[0].to"));
    assert!(item.hint.as_deref().is_some_and(|h| h.contains("did you mean `eks_cluster.main`")), "{item:?}");
}
