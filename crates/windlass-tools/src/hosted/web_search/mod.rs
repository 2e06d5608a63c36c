//! `web_search`: OpenAI's hosted search, served by a search backend the
//! operator runs or subscribes to — SearXNG's JSON API (self-hosted), Brave
//! or Tavily — behind one trait, [`SearchBackend`].
//!
//! The model sees a `web_search` function: a `query` searches; a `url`
//! opens a result page (through the guarded fetch of the `web_fetch`
//! built-in: no private addresses, no redirects followed); a `url` with a
//! `pattern` finds that text in the page. Each call becomes one
//! `web_search_call` item (`search`, `open_page` or `find_in_page`).
//!
//! What the request's tool asks for, per backend:
//! - `filters.allowed_domains`: every backend's results are filtered by
//!   host (sub-domains included); Tavily also gets `include_domains`, and
//!   SearXNG and Brave a `site:` operator when there is one domain.
//! - `search_context_size`: results and snippet length (low 3 × 300
//!   characters, medium 5 × 600, high 10 × 1200); Tavily searches
//!   `advanced` for high.
//! - `user_location.country`: Brave's `country`; SearXNG and Tavily have no
//!   country parameter, so it is not used there.

mod backends;
mod config;
mod executor;
mod hosted_executor;
mod http;
mod render;
mod search;

pub use backends::{Brave, Searxng, Tavily};
pub use config::{WebSearchConfig, WebSearchConfigError, WebSearchProvider};
pub use executor::{replay_arguments, WebSearch, WebSearchArgs};
pub use render::{citations, render};
pub use search::{
    context_budget, domain_allowed, shape, SearchBackend, SearchError, SearchHit, SearchQuery,
};
