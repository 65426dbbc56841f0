//! The plan's "Cost" block as text: each fixed item with its monthly figure and how it was reached, each
//! NodePool's worst case at its limits (or that it is unbounded), the totals, and which catalog priced the
//! instances. The figures themselves are [`crate::simulate::cost`]'s; this only lays them out, and gives the
//! rows to the Markdown plan, which lays them out as a table.

use std::fmt::Write;

use super::Style;
use crate::simulate::cost::{usd, StackCost};

/// One line of the block: what, how much a month, and how that was reached.
pub(crate) struct Row {
    pub item: String,
    pub amount: String,
    pub detail: String,
}

/// Which catalog priced the instances, or that none did.
pub(crate) fn source(cost: &StackCost) -> String {
    match &cost.catalog {
        Some(c) => {
            let date = c.fetched_at.get(..10).unwrap_or(&c.fetched_at);
            format!("instances priced from the {} catalog read {date}", c.region)
        }
        None => format!("no instance-type catalog cached for {}: instance prices unknown", cost.region),
    }
}

/// The fixed items, their sum (`Fixed`), each NodePool at its limits, and the total (`At most`).
pub(crate) fn rows(cost: &StackCost) -> Vec<Row> {
    let row = |item: String, amount: String, detail: String| Row { item, amount, detail };
    let mut rows = Vec::new();
    for f in &cost.fixed {
        rows.push(row(f.item.clone(), money(f.monthly_usd, "unknown"), f.detail.clone()));
    }
    let fixed_note = if cost.fixed.iter().any(|f| f.monthly_usd.is_none()) { "at least, " } else { "" };
    rows.push(row("Fixed".into(), usd(cost.fixed_monthly_usd), format!("{fixed_note}a month before any workload")));
    for p in &cost.node_pools {
        let amount = match (p.worst_case_monthly_usd, p.bound_by.as_str()) {
            (Some(v), _) => usd(v),
            (None, "no limits") => "unbounded".into(),
            (None, _) => "unknown".into(),
        };
        rows.push(row(format!("NodePool {} at its limits", p.name), amount, p.detail.clone()));
    }
    let why = if cost.unpriced.is_empty() {
        "the fixed items plus every NodePool at its limits".to_string()
    } else {
        format!("no figure for {}", cost.unpriced.join(", "))
    };
    rows.push(row(TOTAL.into(), money(cost.worst_case_monthly_usd, "unknown"), why));
    rows
}

/// The label of the last row, the stack's most a month.
pub(crate) const TOTAL: &str = "At most";

pub(crate) fn block(cost: &StackCost, style: &Style) -> String {
    let rows = rows(cost);
    let label = rows.iter().map(|r| r.item.chars().count()).max().unwrap_or(0);
    let amount = rows.iter().map(|r| r.amount.len()).max().unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(out, "\n{} (USD a month, AWS list prices; {}):", style.paint("1", "Cost"), source(cost));
    for Row { item, amount: figure, detail } in rows {
        let padded = format!("{item:label$}  {figure:>amount$}");
        let shown = if item == TOTAL || item == "Fixed" { style.paint("1", &padded) } else { padded };
        let _ = writeln!(out, "  {shown}  {}", style.paint("2", &detail));
    }
    let _ = writeln!(out, "  Not counted: {}.", cost.not_counted);
    out
}

fn money(v: Option<f64>, otherwise: &str) -> String {
    v.map_or_else(|| otherwise.to_string(), usd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::cost::stack_cost;
    use crate::simulate::testing;

    #[test]
    fn the_block_lists_items_pools_and_totals_with_the_catalogs_date() {
        let text =
            "[cluster]\nname = \"c\"\nregion = \"us-west-2\"\n[node_classes.default]\nami_alias = \"al2023@latest\"\n\
                    [node_pools.capped]\nnode_class = \"default\"\nlimits = { cpu = 16 }\n\
                    [node_pools.open]\nnode_class = \"default\"\n";
        let bp = crate::blueprint::load_str("bp.toml", text, &[]).unwrap_or_else(|d| panic!("{d:?}"));
        let style = Style { color: false };
        let priced = block(&stack_cost(&bp, Some(&testing::catalog())), &style);
        assert!(priced.contains("instances priced from the us-west-2 catalog read 2026-12-05"), "{priced}");
        assert!(
            priced.contains("  EKS control plane                 $73.00  standard support at $0.10/h\n"),
            "{priced}"
        );
        assert!(
            priced.contains("  Controller node group            $140.16  2 × m5.large on demand at $0.096/h\n"),
            "{priced}"
        );
        assert!(
            priced.contains(
                "  NodePool capped at its limits  $2,937.52  4 × g5.xlarge on-demand at $1.006/h, capped by cpu 16\n"
            ),
            "{priced}"
        );
        assert!(priced.contains("  NodePool open at its limits    unbounded  unbounded: it has no limits"), "{priced}");
        assert!(
            priced.contains("  At most                          unknown  no figure for NodePool open\n"),
            "{priced}"
        );
        assert!(priced.ends_with("  Not counted: data transfer, NAT data processing, control-plane logs, API requests, and the volumes of Karpenter's nodes.\n"), "{priced}");

        let unpriced = block(&stack_cost(&bp, None), &style);
        assert!(
            unpriced.contains("no instance-type catalog cached for us-west-2: instance prices unknown"),
            "{unpriced}"
        );
        assert!(
            unpriced.contains("  Controller node group            unknown  2 × m5.large: price unknown"),
            "{unpriced}"
        );
        assert!(unpriced.contains("at least, a month before any workload"), "{unpriced}");
    }
}
