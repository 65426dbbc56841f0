//! A rule's targets. PutTargets and RemoveTargets answer 200 even when an entry fails, reporting it only in
//! `FailedEntryCount`, so every call here checks that count.

use aws_sdk_eventbridge::types::Target;

use crate::providers::attrs::absent_if_gone;
use crate::providers::send::{send, send_pages};
use crate::providers::{Context, ProviderError, Result};

/// RemoveTargets takes at most this many IDs per call.
const REMOVE_BATCH: usize = 100;

/// Every target of `rule`; `None` when the rule is gone.
pub(super) async fn list(cx: &Context, rule: &str) -> Result<Option<Vec<Target>>> {
    let targets = send_pages(
        cx,
        "events:ListTargetsByRule",
        |token| cx.eventbridge().list_targets_by_rule().rule(rule).set_next_token(token).send(),
        |page| (page.targets.unwrap_or_default(), page.next_token),
    );
    absent_if_gone(targets.await)
}

/// The names of the rules (on the default bus) with a target `arn`: one call for many rules where
/// [`list`] takes one per rule.
pub(super) async fn rules_targeting(cx: &Context, arn: &str) -> Result<Vec<String>> {
    send_pages(
        cx,
        "events:ListRuleNamesByTarget",
        |token| cx.eventbridge().list_rule_names_by_target().target_arn(arn).set_next_token(token).send(),
        |page| (page.rule_names.unwrap_or_default(), page.next_token),
    )
    .await
}

/// Adds (or, for an existing `id`, repoints) the target `id` → `arn`.
pub(super) async fn put(cx: &Context, rule: &str, id: &str, arn: &str) -> Result<()> {
    let op = "events:PutTargets";
    let target = Target::builder().id(id).arn(arn).build().map_err(|e| {
        ProviderError::new(op, "", format!("could not build target `{id}`: {e}"))
            .with_hint("this is a bug in kbp's compiler; please report it with the blueprint")
    })?;
    let out = send(cx, op, &[], || cx.eventbridge().put_targets().rule(rule).targets(target.clone()).send()).await?;
    let failed = out.failed_entries().iter().map(|f| (f.target_id(), f.error_code(), f.error_message()));
    check(op, rule, out.failed_entry_count(), failed)
}

/// Removes the targets `ids` from `rule`; a rule already gone has none left.
pub(super) async fn remove(cx: &Context, rule: &str, ids: &[String]) -> Result<()> {
    let op = "events:RemoveTargets";
    for batch in ids.chunks(REMOVE_BATCH) {
        let batch = Some(batch.to_vec());
        let r = send(cx, op, &[], || cx.eventbridge().remove_targets().rule(rule).set_ids(batch.clone()).send());
        let Some(out) = absent_if_gone(r.await)? else { return Ok(()) };
        let failed = out.failed_entries().iter().map(|f| (f.target_id(), f.error_code(), f.error_message()));
        check(op, rule, out.failed_entry_count(), failed)?;
    }
    Ok(())
}

/// An error naming each failed entry, when `count` says some failed.
fn check<'a>(
    op: &str,
    rule: &str,
    count: i32,
    failed: impl Iterator<Item = (Option<&'a str>, Option<&'a str>, Option<&'a str>)>,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let entries: Vec<(&str, &str, &str)> =
        failed.map(|(id, code, message)| (id.unwrap_or("?"), code.unwrap_or(""), message.unwrap_or(""))).collect();
    let code = entries.first().map_or("", |e| e.1);
    let detail: Vec<String> = entries.iter().map(|(id, code, msg)| format!("target {id}: {code} {msg}")).collect();
    Err(ProviderError::new(op, code, format!("{count} target(s) of rule {rule} failed: {}", detail.join("; ")))
        .with_hint("check that the target ARN exists in this region and account, then run kbp again"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_failed_entries_is_success() {
        assert!(check("events:PutTargets", "r", 0, std::iter::empty()).is_ok());
    }

    #[test]
    fn failed_entries_become_one_error_with_the_first_code() {
        let failed = [(Some("q"), Some("ConcurrentModificationException"), Some("busy"))];
        let e = check("events:PutTargets", "r", 1, failed.into_iter()).unwrap_err();
        assert_eq!(e.code, "ConcurrentModificationException");
        assert!(e.message.contains("target q") && e.message.contains("rule r"), "{e}");
    }
}
