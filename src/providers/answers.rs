//! AWS answers that several kinds read from in one refresh: the route tables that hold a stack's route tables,
//! routes and subnet associations; IAM's account authorization details, which hold roles, their inline and
//! attached policies and the account's own managed policies. The first kind to ask sends the call; the others
//! that ask for the same (at the same moment or later) wait for and share its answer, so each such call is sent
//! once per refresh rather than once per kind.
//!
//! Only [`super::Provider::read_many`] asks here, and only refresh calls it, once per command (each command
//! builds its own [`super::Context`]): an answer is never used after the refresh it was sent for. `read`,
//! creates, updates and waits always ask AWS.

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use super::Result;

type Answer = Arc<dyn Any + Send + Sync>;

/// One answer per request, by a key that names the request (its operation and parameters).
#[derive(Default)]
pub struct Answers {
    by_request: Mutex<HashMap<String, Arc<OnceCell<Answer>>>>,
}

impl Answers {
    /// The answer to the request `key` names: sent with `send` by the first to ask, shared with the rest. A
    /// failed call is not kept, so the next to ask sends it again.
    pub async fn get<T, F, Fut>(&self, key: &str, send: F) -> Result<Arc<T>>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        // The type is part of the key, so one key never holds two types of answer.
        let key = format!("{} {key}", std::any::type_name::<T>());
        let cell = self
            .by_request
            .lock()
            .expect("invariant: the answers mutex is never poisoned")
            .entry(key)
            .or_default()
            .clone();
        let answer = cell.get_or_try_init(|| async { Ok::<Answer, _>(Arc::new(send().await?)) }).await?.clone();
        Ok(answer.downcast::<T>().expect("invariant: a key names its answer's type"))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::providers::ProviderError;

    #[tokio::test]
    async fn a_request_is_sent_once_however_many_ask_and_a_failure_is_not_kept() {
        let answers = Answers::default();
        let sent = AtomicUsize::new(0);
        let send = || async {
            sent.fetch_add(1, Ordering::SeqCst);
            Ok(vec!["rtb-1".to_string()])
        };
        let (a, b) = tokio::join!(answers.get("tables rtb-1", send), answers.get("tables rtb-1", send));
        assert_eq!(
            (a.unwrap(), b.unwrap()),
            (Arc::new(vec!["rtb-1".to_string()]), Arc::new(vec!["rtb-1".to_string()]))
        );
        assert_eq!(sent.load(Ordering::SeqCst), 1, "asked twice at once, sent once");
        answers.get("tables rtb-2", send).await.unwrap();
        assert_eq!(sent.load(Ordering::SeqCst), 2, "another request is sent");

        let failing =
            || async { Err::<Vec<String>, _>(ProviderError::new("ec2:DescribeRouteTables", "Throttling", "")) };
        assert!(answers.get("tables rtb-3", failing).await.is_err());
        answers.get("tables rtb-3", send).await.unwrap();
        assert_eq!(sent.load(Ordering::SeqCst), 3, "a failed request is sent again");
    }
}
