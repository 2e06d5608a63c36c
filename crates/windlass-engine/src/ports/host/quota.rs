//! Called by the server around a run (admit, charge), never the loop; a port so Postgres can count.
//!
//! The quota port: request and token budgets per minute, per API key and
//! per tenant, counted where every replica sees them (in process for one
//! server, in Postgres for several).
//!
//! Each subject has two token buckets refilled continuously: requests per
//! minute and tokens per minute. A request is admitted when every subject it
//! names has a whole request left and is not in token debt; the tokens a
//! response used are charged after it ends, which may put the subject in
//! debt, so the NEXT request is refused until the debt is repaid.

use std::time::Duration;

/// One bucket pair, e.g. `QuotaSubject::tenant("acme")`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QuotaSubject(String);

impl QuotaSubject {
    /// The budgets of a tenant.
    pub fn tenant(name: &str) -> QuotaSubject {
        QuotaSubject(format!("tenant:{name}"))
    }

    /// The budgets of one API key (by its name).
    pub fn key(name: &str) -> QuotaSubject {
        QuotaSubject(format!("key:{name}"))
    }

    /// The stable text form (a primary key in a shared table).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The limits of one subject; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuotaLimits {
    /// Requests per minute.
    pub requests_per_minute: Option<u64>,
    /// Input and output tokens per minute.
    pub tokens_per_minute: Option<u64>,
}

impl QuotaLimits {
    /// Whether neither budget is set.
    pub fn is_unlimited(&self) -> bool {
        self.requests_per_minute.is_none() && self.tokens_per_minute.is_none()
    }
}

/// Which budget refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuotaKind {
    /// Requests per minute.
    Requests,
    /// Tokens per minute.
    Tokens,
}

/// The answer to [`QuotaCounter::admit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuotaVerdict {
    /// Admitted; one request was taken from every subject.
    Allowed,
    /// Nothing was taken; `retry_after` is when the subject's bucket will
    /// allow a request again (at least one second).
    Refused {
        /// The subject whose budget refused.
        subject: QuotaSubject,
        /// Which of its budgets refused.
        kind: QuotaKind,
        /// That budget's limit per minute.
        limit: u64,
        /// When a request will be allowed again.
        retry_after: Duration,
    },
}

/// The quota backend failed; the message says how.
#[derive(Debug, thiserror::Error)]
#[error("quota counter failed: {0}")]
pub struct QuotaError(pub String);

/// Shared request/token counters.
#[async_trait::async_trait]
pub trait QuotaCounter: Send + Sync {
    /// Admits one request against every subject, all or nothing: when one
    /// refuses, no subject's bucket is touched.
    async fn admit(
        &self,
        subjects: &[(QuotaSubject, QuotaLimits)],
    ) -> Result<QuotaVerdict, QuotaError>;

    /// Charges the tokens a response used to every subject (never refuses;
    /// a subject over its budget is refused on its next `admit`).
    async fn charge(
        &self,
        subjects: &[(QuotaSubject, QuotaLimits)],
        tokens: u64,
    ) -> Result<(), QuotaError>;
}
