//! Quotas at the door: a create is admitted against its key's and its
//! tenant's budgets before anything runs (429 with `Retry-After` when over),
//! and the tokens its response used are charged when it ends.

use std::sync::Arc;

use axum::http::StatusCode;
use windlass_engine::{QuotaCounter, QuotaKind, QuotaLimits, QuotaSubject, QuotaVerdict};
use windlass_protocol::ResponseResource;

use crate::error::ApiError;
use crate::guard::keys::AuthedKey;
use crate::state::AppState;

/// What to charge once the response has ended.
pub(crate) struct Charge {
    counter: Arc<dyn QuotaCounter>,
    subjects: Vec<(QuotaSubject, QuotaLimits)>,
}

impl Charge {
    /// Charges the response's total tokens; a counter failure is logged (the
    /// response is already out).
    pub(crate) async fn usage(self, response: &ResponseResource) {
        let tokens = response.usage.as_ref().map_or(0, |u| u.total_tokens);
        self.tokens(tokens).await;
    }

    /// Charges `tokens` (a compaction pass's usage, which is no response).
    pub(crate) async fn tokens(self, tokens: u64) {
        if self.subjects.is_empty() || tokens == 0 {
            return;
        }
        if let Err(e) = self.counter.charge(&self.subjects, tokens).await {
            tracing::warn!(error = %e, "could not charge token usage");
        }
    }
}

/// Admits one create for `key` (or the unauthenticated caller) of `tenant`.
pub(crate) async fn admit(
    app: &AppState,
    key: Option<&AuthedKey>,
    tenant: &str,
) -> Result<Charge, ApiError> {
    let mut subjects = Vec::new();
    if let Some(k) = key.filter(|k| !k.limits.is_unlimited()) {
        subjects.push((QuotaSubject::key(&k.name), k.limits));
    }
    if let Some(t) = app.config.tenants.get(tenant).filter(|t| !t.is_unlimited()) {
        subjects.push((QuotaSubject::tenant(tenant), *t));
    }
    let charge = Charge {
        counter: app.quota.clone(),
        subjects,
    };
    if charge.subjects.is_empty() {
        return Ok(charge);
    }
    let verdict = app.quota.admit(&charge.subjects).await.map_err(|e| {
        tracing::error!(error = %e, "quota counter failed");
        ApiError::internal("the quota counter is unavailable").code("quota_unavailable")
    })?;
    match verdict {
        QuotaVerdict::Allowed => Ok(charge),
        QuotaVerdict::Refused {
            subject,
            kind,
            limit,
            retry_after,
        } => {
            let secs = retry_after.as_secs().max(1);
            tracing::debug!(
                subject = subject.as_str(),
                ?kind,
                limit,
                secs,
                "rate limited"
            );
            Err(rate_limited(&subject, kind, limit, secs))
        }
    }
}

/// OpenAI's rate-limit answer: type `requests` or `tokens`, code
/// `rate_limit_exceeded`.
fn rate_limited(subject: &QuotaSubject, kind: QuotaKind, limit: u64, secs: u64) -> ApiError {
    let (kind, unit) = match kind {
        QuotaKind::Requests => ("requests", "requests per minute (RPM)"),
        QuotaKind::Tokens => ("tokens", "tokens per minute (TPM)"),
    };
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        kind,
        format!(
            "Rate limit reached for {} on {unit}: Limit {limit}. Please try again in {secs}s.",
            subject.as_str()
        ),
    )
    .code("rate_limit_exceeded")
    .retry_after(secs)
}
