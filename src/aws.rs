//! How kbp configures the AWS SDK, once for every client: the standard credential chain and `AWS_ENDPOINT_URL`,
//! the retry policy (the SDK's standard mode — jittered exponential backoff within a retry budget — with more
//! attempts than its default and one budget per AWS service for the run), timeouts so an endpoint that never
//! answers fails in bounded time, and a count of calls and retries for `-v` and the JSON summary.
//!
//! Not the SDK's adaptive mode: its client-side rate limiter starts from 0.5 requests a second after the first
//! throttle and shares one limiter per retry partition, so under a throttling burst a run of a few hundred
//! concurrent calls waits ~20 s per retry (measured through the fault proxy: a plan went from 1.7 s to 50 s at
//! 30 % throttling). Standard backoff with a bounded budget recovers in seconds and still backs off under a storm.
//!
//! kbp's own retries ([`crate::providers::retry`]) are only about AWS semantics (eventual consistency, a create
//! whose outcome is unknown); everything a plain retry fixes — throttling, 5xx, dropped connections — is the
//! SDK's.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_ec2::config::retry::{RetryPartition, TokenBucket};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeSerializationInterceptorContextRef, BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};

/// Attempts per call, the first included. Under a 25 % throttling storm, 10 attempts fail a call with
/// probability 0.25^10 ≈ 1e-6.
pub const MAX_ATTEMPTS: u32 = 10;
const INITIAL_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(20);
/// Retry tokens per service for the whole run. The SDK's default bucket (500) is sized for one client in a
/// long-lived service; a kbp run makes a few thousand calls in bursts and must not stop retrying half-way.
const RETRY_BUDGET: usize = 20_000;

/// Connect timeout (`KBP_AWS_CONNECT_TIMEOUT`), per-attempt timeout (`KBP_AWS_ATTEMPT_TIMEOUT`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(60);

/// The duration in variable `name` (humantime: `90s`, `7days`), else `default`; an unreadable value counts as
/// unset.
pub(crate) fn duration_env(name: &str, default: Duration) -> Duration {
    std::env::var(name).ok().and_then(|v| humantime::parse_duration(&v).ok()).unwrap_or(default)
}

/// kbp's retry policy for every client: SDK standard mode, [`MAX_ATTEMPTS`] attempts, backoff from 200 ms to 20 s.
pub fn retry_config() -> RetryConfig {
    RetryConfig::standard()
        .with_max_attempts(MAX_ATTEMPTS)
        .with_initial_backoff(INITIAL_BACKOFF)
        .with_max_backoff(MAX_BACKOFF)
}

/// kbp's timeouts for every client: connect 10 s, each attempt 60 s, or as `KBP_AWS_*_TIMEOUT` set them.
pub fn timeout_config() -> TimeoutConfig {
    timeouts().build()
}

/// How long the first call of a command (who is calling) may take, its retries included
/// (`KBP_AWS_PREFLIGHT_TIMEOUT`): throttling still gets its retries, an endpoint that refuses or never answers
/// fails within it.
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(15);

/// The timeouts of the preflight's first call: as [`timeout_config`], plus a 15 s cap on the whole call.
pub fn preflight_timeout_config() -> TimeoutConfig {
    timeouts().operation_timeout(duration_env("KBP_AWS_PREFLIGHT_TIMEOUT", PREFLIGHT_TIMEOUT)).build()
}

fn timeouts() -> aws_config::timeout::TimeoutConfigBuilder {
    TimeoutConfig::builder()
        .connect_timeout(duration_env("KBP_AWS_CONNECT_TIMEOUT", CONNECT_TIMEOUT))
        .operation_attempt_timeout(duration_env("KBP_AWS_ATTEMPT_TIMEOUT", ATTEMPT_TIMEOUT))
}

/// The AWS configuration of the standard chain (env, profiles, SSO, IMDS), in `region` when given (else the
/// chain's), with `profile` when given, and kbp's retry and timeout settings.
pub async fn load(region: Option<&str>, profile: Option<&str>) -> SdkConfig {
    let mut loader =
        aws_config::defaults(BehaviorVersion::latest()).retry_config(retry_config()).timeout_config(timeout_config());
    if let Some(region) = region {
        loader = loader.region(Region::new(region.to_string()));
    }
    if let Some(profile) = profile {
        loader = loader.profile_name(profile);
    }
    loader.load().await
}

/// What to do when the credential chain gave no credentials.
pub const NO_CREDENTIALS_HINT: &str = "set AWS_PROFILE (after `aws sso login` for SSO), or AWS_ACCESS_KEY_ID and \
     AWS_SECRET_ACCESS_KEY, or run where instance metadata provides a role";

/// The first cause of `e` (itself included) of type `T`: how a failed call is told apart by what failed (the
/// SDK's own error types), not by its wording.
pub fn cause<'a, T: std::error::Error + 'static>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a T> {
    let mut next = Some(e);
    while let Some(err) = next {
        if let Some(found) = err.downcast_ref::<T>() {
            return Some(found);
        }
        next = err.source();
    }
    None
}

/// Why a failed AWS call (or the credential chain itself) had no credentials to sign with, in one line; `None`
/// when it failed for another reason. The chain's own error lists every provider it tried, over several lines:
/// the user needs to know that none had credentials, and what to set.
pub fn credentials_failure(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    use aws_credential_types::provider::error::CredentialsError;
    match cause::<CredentialsError>(e)? {
        CredentialsError::CredentialsNotLoaded(_) => Some(
            "no AWS credentials were found (environment, profile, web identity, container or instance metadata)"
                .to_string(),
        ),
        other => {
            let mut why = Vec::new();
            let mut next: Option<&(dyn std::error::Error + 'static)> = Some(other);
            while let Some(err) = next {
                why.push(err.to_string());
                next = err.source();
            }
            let why = why.join(": ");
            Some(format!("the AWS credentials could not be loaded: {}", why.lines().next().unwrap_or_default()))
        }
    }
}

/// Why `sdk`'s credential chain has no credentials, asked before any call: for a command that can do without
/// AWS (`kbp simulate --catalog`) and should say so rather than make calls that cannot be signed.
pub async fn missing_credentials(sdk: &SdkConfig) -> Option<String> {
    use aws_credential_types::provider::ProvideCredentials;
    let Some(provider) = sdk.credentials_provider() else {
        return Some("no AWS credential provider is configured".to_string());
    };
    match provider.provide_credentials().await {
        Ok(_) => None,
        Err(e) => credentials_failure(&e),
    }
}

/// The retry budget of the run for `service` (AWS throttles each service on its own), shared by its clients.
pub fn retry_partition(service: &'static str) -> RetryPartition {
    static PARTITIONS: OnceLock<Mutex<BTreeMap<&'static str, RetryPartition>>> = OnceLock::new();
    let mut partitions = PARTITIONS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    partitions
        .entry(service)
        .or_insert_with(|| {
            RetryPartition::custom(format!("kbp-{service}"))
                .token_bucket(TokenBucket::builder().capacity(RETRY_BUDGET).build())
                .build()
        })
        .clone()
}

/// A client of service `$svc` (a crate such as `aws_sdk_ec2`) from `sdk`, with the run's retry budget and call
/// counter; `aws_client!(svc, sdk, region = "us-east-1")` for a service AWS serves from a few regions only
/// (the Price List API), whatever the run's region.
#[macro_export]
macro_rules! aws_client {
    ($svc:ident, $sdk:expr) => {
        $svc::Client::from_conf(
            $svc::config::Builder::from($sdk)
                .retry_partition($crate::aws::retry_partition(stringify!($svc)))
                .interceptor($crate::aws::CallCounter)
                .build(),
        )
    };
    ($svc:ident, $sdk:expr, region = $region:expr) => {
        $svc::Client::from_conf(
            $svc::config::Builder::from($sdk)
                .region(::aws_config::Region::new($region))
                .retry_partition($crate::aws::retry_partition(stringify!($svc)))
                .interceptor($crate::aws::CallCounter)
                .build(),
        )
    };
}

/// Calls and attempts per operation (`ec2:CreateVpc`), for the whole process.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct CallStats {
    /// Calls made (each counted once, whatever its attempts).
    pub calls: u64,
    /// Attempts beyond each call's first.
    pub retries: u64,
}

fn stats() -> std::sync::MutexGuard<'static, BTreeMap<String, CallStats>> {
    static STATS: Mutex<BTreeMap<String, CallStats>> = Mutex::new(BTreeMap::new());
    STATS.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the AWS calls of this run cost so far, per operation.
pub fn call_stats() -> BTreeMap<String, CallStats> {
    stats().clone()
}

/// (calls, retries) over every operation.
pub fn call_totals() -> (u64, u64) {
    stats().values().fold((0, 0), |(c, r), s| (c + s.calls, r + s.retries))
}

/// Counts calls and their retries, and logs each call (`-v`) with its duration and attempts.
#[derive(Debug, Clone, Copy)]
pub struct CallCounter;

/// When the call started and how many attempts it made, kept in the call's config bag.
#[derive(Debug, Clone)]
struct CallStart {
    at: Instant,
    attempts: u32,
}

impl Storable for CallStart {
    type Storer = StoreReplace<Self>;
}

fn operation(cfg: &ConfigBag) -> String {
    match cfg.load::<Metadata>() {
        Some(m) => format!("{}:{}", m.service().to_ascii_lowercase(), m.name()),
        None => "aws:unknown".to_string(),
    }
}

impl Intercept for CallCounter {
    fn name(&self) -> &'static str {
        "kbp::aws::CallCounter"
    }

    fn read_before_execution(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        cfg.interceptor_state().store_put(CallStart { at: Instant::now(), attempts: 0 });
        Ok(())
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let mut start = cfg.load::<CallStart>().cloned().unwrap_or(CallStart { at: Instant::now(), attempts: 0 });
        start.attempts += 1;
        if start.attempts > 1 {
            stats().entry(operation(cfg)).or_default().retries += 1;
        }
        cfg.interceptor_state().store_put(start);
        Ok(())
    }

    fn read_after_execution(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let op = operation(cfg);
        stats().entry(op.clone()).or_default().calls += 1;
        let (elapsed, attempts) = cfg.load::<CallStart>().map_or((Duration::ZERO, 0), |s| (s.at.elapsed(), s.attempts));
        let status = context.response().map(|r| r.status().as_u16());
        tracing::info!(target: "kbp::aws", operation = %op, ?elapsed, attempts, status, "aws call");
        Ok(())
    }
}

/// What a failed AWS SDK call says, read the same way for every service and every caller (providers, the S3
/// state): AWS's error code (empty when the request got no answer), the message on one line of Display text
/// (never the SDK's Debug form), and whether AWS may have carried the request out (the connection failed or
/// timed out after sending, or AWS answered with a server error).
pub struct CallFailure {
    /// AWS's error code, such as `ThrottlingException`; empty when no answer came back.
    pub code: String,
    /// The error message (or the causes, when no answer came) on one line.
    pub message: String,
    /// Whether AWS may have carried the request out: a server error, or a failure or timeout after sending.
    pub outcome_unknown: bool,
}

/// Reads a failed SDK call of any service (their `SdkError`s share one type) into a [`CallFailure`].
pub fn call_failure<E>(err: &aws_sdk_ec2::error::SdkError<E>) -> CallFailure
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    use aws_sdk_ec2::error::SdkError;
    use aws_smithy_types::error::metadata::ProvideErrorMetadata;
    let (code, message, outcome_unknown) = match err {
        SdkError::ServiceError(se) => {
            let e = se.err();
            let code = e.code().unwrap_or("").to_string();
            let unknown = se.raw().status().is_server_error() || SERVER_ERRORS.contains(&code.as_str());
            (code, e.message().unwrap_or("").to_string(), unknown)
        }
        // Not sent at all: nothing was carried out.
        SdkError::ConstructionFailure(_) => (String::new(), causes(err), false),
        SdkError::DispatchFailure(d) if d.is_user() => {
            (String::new(), format!("could not send the request: {}", causes(err)), false)
        }
        SdkError::DispatchFailure(_) => (String::new(), format!("could not reach AWS: {}", causes(err)), true),
        SdkError::TimeoutError(_) => (String::new(), "the request timed out".to_string(), true),
        other => (other.code().unwrap_or("").to_string(), causes(other), true),
    };
    CallFailure { code, message, outcome_unknown }
}

/// An error and its causes on one line, each by its Display (never a Debug dump), repeats left out.
pub fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        let text = err.to_string();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = err.source();
    }
    parts.join(": ")
}

/// Server-side failures by code, whatever the HTTP status says: AWS may have carried the request out.
const SERVER_ERRORS: &[&str] =
    &["InternalError", "InternalFailure", "ServiceUnavailable", "InternalServerError", "ServerException"];
