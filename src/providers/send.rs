//! Sending one AWS request the way every provider does: under the retry policy, with the operation named in
//! the error. Works for every service's SDK, since they share the smithy error types.

use std::future::Future;

use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};

use super::attrs::{absent_if_gone, ok_if_gone};
use super::retry::RetryPolicy;
use super::{Context, ProviderError};
use crate::providers::Result;

/// Sends one request (`request` builds and sends it) under `cx.retry`, retrying throttling and the `transient`
/// codes, and names the operation `op` in the error:
/// `send(cx, "ec2:DescribeVpcs", &[], || cx.ec2().describe_vpcs().vpc_ids(id).send())`.
pub async fn send<O, E, F, Fut>(cx: &Context, op: &str, transient: &[&str], mut request: F) -> Result<O>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<O, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    cx.retry
        .run(transient, || {
            let sent = request();
            async move { sent.await.map_err(|e| ProviderError::from_sdk(op, e)) }
        })
        .await
}

/// [`send`] for a removal (a delete, a detach, a revoke): one whose target is already gone succeeds, so a
/// teardown that was interrupted can run again. `transient` lists codes AWS answers until something else
/// settles, such as IAM's `DeleteConflict`.
pub async fn remove<O, E, F, Fut>(cx: &Context, op: &str, transient: &[&str], request: F) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<O, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    ok_if_gone(send(cx, op, transient, request).await)
}

/// The resource `id`, read with a Describe call that asks for it by ID (`request`): the item of the answer's
/// list (`items`) whose ID (`id_of`) is `id`, or `None` when AWS answers "not found" or lists something else
/// (some implementations ignore the ID and list everything).
pub async fn describe_one<O, E, T, F, Fut>(
    cx: &Context,
    op: &str,
    transient: &[&str],
    id: &str,
    request: F,
    items: fn(&O) -> &[T],
    id_of: fn(&T) -> Option<&str>,
) -> Result<Option<T>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<O, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + 'static,
    T: Clone,
{
    let answer = absent_if_gone(send(cx, op, transient, request).await)?;
    Ok(answer.and_then(|out| items(&out).iter().find(|item| id_of(item) == Some(id)).cloned()))
}

/// Every item of a paged AWS list call. `page(token)` sends one request for the page after `token` (with
/// [`send`]) and returns its items and the next token or marker; an empty token ends the list too.
pub async fn all_pages<T, F, Fut>(mut page: F) -> Result<Vec<T>>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>)>>,
{
    let mut out = Vec::new();
    let mut token = None;
    loop {
        let (items, next) = page(token).await?;
        out.extend(items);
        token = next.filter(|t| !t.is_empty());
        if token.is_none() {
            return Ok(out);
        }
    }
}

/// Every item of a paged list call, each page sent with [`send`]: `request(token)` sends the request for the
/// page after `token` (a next token or marker; `None` for the first page), and `split(page)` takes a page
/// apart into its items and the token of the page after it.
pub async fn send_pages<O, E, T, F, Fut, S>(cx: &Context, op: &str, request: F, split: S) -> Result<Vec<T>>
where
    F: Fn(Option<String>) -> Fut,
    Fut: Future<Output = Result<O, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + 'static,
    S: Fn(O) -> (Vec<T>, Option<String>),
{
    let (request, split) = (&request, &split);
    all_pages(|token| async move {
        let page = send(cx, op, &[], || request(token.clone())).await?;
        Ok(split(page))
    })
    .await
}

/// Sends a create that AWS would carry out twice if it arrived twice (no client token, no unique name:
/// CreateVpc, AllocateAddress, kms:CreateKey…). `request` must turn the SDK's own retries off for the call
/// (`.customize().config_override(…retry_config(RetryConfig::disabled()))`, see each service's `once()`): a retry
/// after a lost answer would make a second resource. Only throttling and the `refused` codes (eventual consistency
/// such as a VPC not visible yet) are retried here — AWS refused the request, so nothing was made; any other
/// failure is returned, marked [`ProviderError::outcome_unknown`] when AWS may have
/// carried it out, for [`super::create`] to look for what it made before sending it again.
pub async fn send_unretried<O, E, F, Fut>(cx: &Context, op: &str, refused: &[&str], mut request: F) -> Result<O>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<O, SdkError<E>>>,
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let codes: Vec<&str> = super::retry::THROTTLING.iter().chain(refused).copied().collect();
    let throttled = RetryPolicy { max_attempts: crate::aws::MAX_ATTEMPTS, ..cx.retry.clone() };
    throttled
        .run(&codes, || {
            let sent = request();
            async move { sent.await.map_err(|e| ProviderError::from_sdk(op, e)) }
        })
        .await
}
