//! How a failed S3 call on the state reads: what failed, AWS's code and message on one line (the SDK's Debug
//! form never reaches the user), and what to do about it.

use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};

use crate::state::location::S3Location;

/// An S3 call that failed: HTTP status, AWS's code and message (one line: never the SDK's Debug form), and what
/// the SDK could not do before sending it, ready to be explained.
pub(super) struct Failure {
    pub operation: &'static str,
    pub status: Option<u16>,
    pub code: String,
    pub message: String,
    pub cause: Unsent,
}

/// Why a request never reached S3, when the SDK says: it has its own remedy.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Unsent {
    /// Sent, or not for another reason.
    No,
    /// The credential chain had none (or could not load them): why, in one line.
    Credentials(String),
}

impl Failure {
    /// The failure of `err`, read as every provider's AWS errors are ([`crate::aws::call_failure`]), with the
    /// HTTP status standing in for the code S3 leaves out of the answers to HEAD-like requests.
    pub(super) fn of<E>(operation: &'static str, err: SdkError<E>) -> Failure
    where
        E: ProvideErrorMetadata + std::error::Error + 'static,
    {
        let status = err.raw_response().map(|r| r.status().as_u16());
        let cause = crate::aws::credentials_failure(&err).map_or(Unsent::No, Unsent::Credentials);
        let aws = crate::aws::call_failure(&err);
        let code = match (aws.code.is_empty(), status) {
            (false, _) | (true, None) => aws.code,
            (true, Some(404)) => "NotFound".to_string(),
            (true, Some(403)) => "AccessDenied".to_string(),
            (true, Some(412)) => "PreconditionFailed".to_string(),
            (true, Some(s)) => format!("HTTP {s}"),
        };
        let message = match &cause {
            Unsent::Credentials(why) => why.clone(),
            _ => one_line(&aws.message),
        };
        Failure { operation, status, code, message, cause }
    }

    /// The object was there already (`If-None-Match: *`) or not as this run last saw it (`If-Match`).
    pub(super) fn is_precondition(&self) -> bool {
        matches!(self.status, Some(412) | Some(409))
            || self.code == "PreconditionFailed"
            || self.code == "ConditionalRequestConflict"
    }

    pub(super) fn is_missing_key(&self) -> bool {
        self.code == "NoSuchKey" || (self.status == Some(404) && self.code != "NoSuchBucket")
    }
}

/// `text` on one line: what an error's causes print over several (a list of attempts) joined with `; `.
pub(super) fn one_line(text: &str) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}

/// What to do about a failed call on the state at `s3`, made by a client with a region or without one (the
/// SDK's error for that is a type of a crate kbp does not use, so the client's configuration tells).
pub(super) fn hint(s3: &S3Location, f: &Failure, region_known: bool) -> String {
    let bucket = &s3.bucket;
    match (&f.cause, f.code.as_str()) {
        (Unsent::Credentials(_), _) => format!(
            "the state bucket needs AWS credentials: {}; or name a profile with `profile` in the blueprint's [state] \
             table or ?profile=NAME on the s3:// URL",
            crate::aws::NO_CREDENTIALS_HINT
        ),
        (Unsent::No, "") if !region_known => "S3 has no endpoint for the bucket without its region: set `region` \
             in the blueprint's [state] table, add ?region=REGION to the s3:// URL, or set AWS_REGION"
            .to_string(),
        (_, "NoSuchBucket") => format!(
            "create the bucket first, with versioning on so state keeps its history: `aws s3api create-bucket \
             --bucket {bucket}` (plus --create-bucket-configuration LocationConstraint=REGION outside us-east-1), \
             then `aws s3api put-bucket-versioning --bucket {bucket} --versioning-configuration Status=Enabled`"
        ),
        (_, "AccessDenied" | "AllAccessDisabled" | "InvalidAccessKeyId" | "SignatureDoesNotMatch") => format!(
            "the identity kbp runs as needs s3:GetObject, s3:PutObject and s3:DeleteObject on \
             arn:aws:s3:::{bucket}/{key} and {key}.lock, s3:ListBucket and s3:GetBucketVersioning on the bucket \
             (and kms:GenerateDataKey/kms:Decrypt on the state's KMS key), as docs/ci.md lists them; check \
             `aws sts get-caller-identity`",
            key = s3.key
        ),
        (_, "PermanentRedirect" | "AuthorizationHeaderMalformed" | "IllegalLocationConstraintException") => {
            "the bucket is in another region: set `region` in the blueprint's [state] table, or add \
             ?region=REGION to the s3:// URL"
                .to_string()
        }
        (_, "ExpiredToken" | "TokenRefreshRequired") => {
            "the AWS credentials have expired; refresh them (for SSO: `aws sso login`)".to_string()
        }
        (_, c) if c.starts_with("KMS.") || c.contains("KMS") => format!(
            "the state's KMS key ({}) cannot be used: check `kms_key_id` and the key policy",
            s3.kms_key_id.as_deref().unwrap_or("the bucket default")
        ),
        (_, "") => "S3 could not be reached: check the network, AWS_ENDPOINT_URL and the region".to_string(),
        _ => "see AWS's message above; nothing was overwritten".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use aws_credential_types::provider::error::CredentialsError;
    use aws_sdk_s3::operation::get_object::GetObjectError;
    use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
    use aws_smithy_runtime_api::client::result::ConnectorError;
    use aws_smithy_types::body::SdkBody;
    use aws_smithy_types::error::ErrorMetadata;

    use super::*;

    fn state() -> S3Location {
        match "s3://acme-state/kbp/prod.json".parse() {
            Ok(crate::state::Location::S3(s3)) => s3,
            other => panic!("an s3 location: {other:?}"),
        }
    }

    /// A request the SDK could not send, for `cause`.
    fn unsent(cause: impl std::error::Error + Send + Sync + 'static) -> SdkError<GetObjectError> {
        SdkError::dispatch_failure(ConnectorError::other(Box::new(cause), None))
    }

    fn answered(status: u16, code: &str, message: &str) -> SdkError<GetObjectError> {
        let meta = ErrorMetadata::builder().code(code).message(message).build();
        let raw = HttpResponse::new(status.try_into().unwrap(), SdkBody::empty());
        SdkError::service_error(GetObjectError::generic(meta), raw)
    }

    #[test]
    fn no_credentials_is_one_line_naming_what_to_set_without_the_sdks_debug_form() {
        let chain = "no credentials found in chain. Attempted:\n  Environment: not set\n  Profile: not enabled";
        let f = Failure::of("s3:PutObject", unsent(CredentialsError::not_loaded(chain)));
        assert_eq!(f.cause, Unsent::Credentials(f.message.clone()));
        assert!(f.message.starts_with("no AWS credentials were found"), "{}", f.message);
        assert!(!f.message.contains('\n') && !f.message.contains('{'), "{}", f.message);
        let hint = hint(&state(), &f, false);
        assert!(hint.contains("AWS_PROFILE") && hint.contains("?profile=NAME"), "{hint}");
    }

    #[test]
    fn other_unsent_requests_keep_their_causes_on_one_line() {
        let f = Failure::of("s3:GetObject", unsent(std::io::Error::other("connection refused\nby peer")));
        assert_eq!((f.cause.clone(), f.code.as_str()), (Unsent::No, ""));
        assert!(
            f.message.contains("connection refused; by peer") && !f.message.contains("ConnectorError"),
            "{}",
            f.message
        );
        assert!(hint(&state(), &f, true).starts_with("S3 could not be reached"));
        let no_region = hint(&state(), &f, false);
        assert!(no_region.contains("without its region") && no_region.contains("?region=REGION"), "{no_region}");
    }

    #[test]
    fn aws_answers_keep_their_code_and_get_the_hint_for_it() {
        let f = Failure::of("s3:GetObject", answered(404, "NoSuchBucket", "The specified bucket does not exist"));
        assert_eq!((f.code.as_str(), f.message.as_str()), ("NoSuchBucket", "The specified bucket does not exist"));
        assert!(!f.is_missing_key(), "a missing bucket is no missing state");
        assert!(hint(&state(), &f, true).contains("aws s3api create-bucket --bucket acme-state"));
        let f = Failure::of("s3:PutObject", answered(403, "AccessDenied", "Access Denied"));
        let h = hint(&state(), &f, true);
        assert!(h.contains("arn:aws:s3:::acme-state/kbp/prod.json") && h.contains("docs/ci.md"), "{h}");
        // S3 answers HEAD-like requests without a body: the status stands in for the code.
        let f = Failure::of("s3:GetObject", answered(404, "", ""));
        assert!(f.is_missing_key(), "{}", f.code);
        assert!(Failure::of("s3:PutObject", answered(412, "", "")).is_precondition());
    }
}
