//! The one error type of every provider: which AWS call failed, AWS's code and message, and what to do.

use std::fmt;

use aws_smithy_types::error::metadata::ProvideErrorMetadata;

/// What every provider call returns.
pub type Result<T, E = ProviderError> = std::result::Result<T, E>;

/// A failed provider operation as a user reads it: one line (operation, code, message), and a hint.
#[derive(Debug, Clone)]
pub struct ProviderError {
    /// The AWS operation, such as `ec2:CreateSubnet`.
    pub operation: String,
    /// The AWS error code, such as `DependencyViolation`; empty for transport or kbp-side errors.
    pub code: String,
    /// What went wrong, as AWS or kbp says it.
    pub message: String,
    /// What the user can do about it.
    pub hint: Option<String>,
    /// AWS may or may not have carried the request out: the connection failed or timed out after it was sent,
    /// or AWS answered with a server error. A create that fails so must be looked for before it is sent again.
    pub outcome_unknown: bool,
}

impl ProviderError {
    /// An error of `operation` with the AWS error code `code` (empty when AWS gave none) and `message`.
    pub fn new(operation: &str, code: &str, message: impl Into<String>) -> Self {
        ProviderError {
            operation: operation.to_string(),
            code: code.to_string(),
            message: message.into(),
            hint: None,
            outcome_unknown: false,
        }
    }

    /// The error with `hint`, what the user can do about it.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Wraps an AWS SDK error, keeping its code and message.
    pub fn from_sdk<E>(operation: &str, err: aws_sdk_ec2::error::SdkError<E>) -> Self
    where
        E: ProvideErrorMetadata + std::error::Error + 'static,
    {
        let crate::aws::CallFailure { code, message, outcome_unknown: unknown } = crate::aws::call_failure(&err);
        let mut e = ProviderError::new(operation, &code, message);
        e.hint = default_hint(&e.code);
        e.outcome_unknown = unknown;
        e
    }

    /// A create refused because the resource (by its unique name) exists: perhaps this stack's own, made by an
    /// earlier attempt whose answer was lost.
    pub fn is_already_exists(&self) -> bool {
        let c = self.code.as_str();
        c.ends_with("AlreadyExists")
            || c.ends_with("AlreadyExistsException")
            || c.ends_with(".Duplicate")
            || c == "ResourceInUseException"
            || c == "Resource.AlreadyAssociated"
    }

    /// Whether AWS answered with the error code `code`.
    pub fn is(&self, code: &str) -> bool {
        self.code == code
    }

    /// A resource that is not there (any service's spelling of it).
    pub fn is_not_found(&self) -> bool {
        self.code.ends_with("NotFound")
            || self.code.ends_with(".NotFound")
            || self.code == "NoSuchEntity"
            || self.code.ends_with("NotFoundException")
            || self.code.ends_with("NonExistentQueue")
            // SQS's JSON protocol, when AWS sends no query-compatible code.
            || self.code == "QueueDoesNotExist"
    }
}

/// An error and its causes on one line ([`crate::aws::causes`]).
pub use crate::aws::causes;

fn default_hint(code: &str) -> Option<String> {
    let h = match code {
        "UnauthorizedOperation" | "AccessDenied" | "AccessDeniedException" => {
            "the identity kbp runs as lacks this permission; check `aws sts get-caller-identity` and its policies"
        }
        "ExpiredToken" | "ExpiredTokenException" | "RequestExpired" => {
            "the AWS credentials have expired; refresh them (for SSO: `aws sso login`)"
        }
        "InvalidClientTokenId" | "UnrecognizedClientException" | "AuthFailure" => {
            "AWS does not recognise the credentials; check AWS_PROFILE / AWS_ACCESS_KEY_ID and the region"
        }
        c if c.ends_with("LimitExceeded") => "an AWS quota is reached; raise it in Service Quotas or free some",
        _ => return None,
    };
    Some(h.to_string())
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.operation)?;
        if !self.code.is_empty() {
            write!(f, ": {}", self.code)?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ProviderError {}
