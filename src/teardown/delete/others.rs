//! Teardown's own deletes outside EC2: a KMS key found by its tags has no alias in state, so its aliases are
//! listed and removed here before the key is scheduled for deletion.

use crate::providers::attrs::{absent_if_gone, ok_if_gone};
use crate::providers::send::send;
use crate::providers::{Context, ProviderError};

/// The shortest window KMS allows: the key can still be recovered (CancelKeyDeletion) for a week.
pub const KEY_PENDING_WINDOW_DAYS: i32 = 7;

/// Deletes the key's aliases, then schedules the key's deletion. A key already pending deletion is done.
pub async fn schedule_key_deletion(cx: &Context, id: &str) -> Result<(), ProviderError> {
    let mut marker: Option<String> = None;
    loop {
        let r =
            send(cx, "kms:ListAliases", &[], || cx.kms().list_aliases().key_id(id).set_marker(marker.clone()).send())
                .await;
        let Some(page) = absent_if_gone(r)? else { return Ok(()) };
        for alias in page.aliases().iter().filter_map(|a| a.alias_name()) {
            let r = send(cx, "kms:DeleteAlias", &[], || cx.kms().delete_alias().alias_name(alias).send()).await;
            ok_if_gone(r.map(drop))?;
        }
        marker = page.next_marker().filter(|_| page.truncated()).map(str::to_string);
        if marker.is_none() {
            break;
        }
    }
    let r = send(cx, "kms:ScheduleKeyDeletion", &[], || {
        cx.kms().schedule_key_deletion().key_id(id).pending_window_in_days(KEY_PENDING_WINDOW_DAYS).send()
    })
    .await;
    match r {
        Err(e) if e.is("KMSInvalidStateException") => Ok(()),
        r => ok_if_gone(r.map(drop)),
    }
}
