//! The steps of a search both backends share: which attached files a query
//! may reach (filter evaluated in Rust, once, so both agree), which of them
//! have comparable embeddings, the fusion, and the hits built from rows.

use std::collections::HashMap;

use windlass_engine::{ChunkHit, ChunkQuery, SearchOutcome, Searched};
use windlass_protocol::{Attributes, SearchMode};

use super::fuse::{fuse, weights};
use super::terms::terms;

/// Why a search may not run, from the queried stores the tenant has (id,
/// expired) sorted by id: unknown when fewer than the `wanted` distinct ids
/// were found (another tenant's store is not found), else the first
/// expired one. `None`: search.
pub(crate) fn refusal(found: Vec<(String, bool)>, wanted: usize) -> Option<Searched> {
    if found.len() != wanted {
        return Some(Searched::UnknownStore);
    }
    found
        .into_iter()
        .find(|(_, expired)| *expired)
        .map(|(id, _)| Searched::Expired(id))
}

/// A completed attachment a search may reach.
#[derive(Debug, Clone)]
pub(crate) struct Reachable {
    pub seq: i64,
    pub vector_store_id: String,
    pub file_id: String,
    pub filename: String,
    pub attributes: Attributes,
    /// The store's embedding model.
    pub model: Option<String>,
}

/// A chunk row to build a hit from.
pub(crate) struct ChunkRow {
    pub id: i64,
    pub attachment: i64,
    pub position: i64,
    pub text: String,
}

/// The plan of one search: reachable attachments by key, the keyword
/// terms, and the attachments whose embeddings the query can be compared to.
pub(crate) struct Plan {
    pub reachable: HashMap<i64, Reachable>,
    pub terms: Vec<String>,
    pub embedded: Vec<i64>,
}

impl Plan {
    /// `attachments` are the completed files of the queried stores.
    pub(crate) fn new(query: &ChunkQuery, attachments: Vec<Reachable>) -> Plan {
        let reachable: HashMap<i64, Reachable> = attachments
            .into_iter()
            .filter(|a| {
                query
                    .filter
                    .as_ref()
                    .is_none_or(|f| f.matches(&a.attributes))
            })
            .map(|a| (a.seq, a))
            .collect();
        let embedded = match &query.embedding {
            Some(e) => reachable
                .values()
                .filter(|a| a.model.as_deref() == Some(e.model.as_str()))
                .map(|a| a.seq)
                .collect(),
            None => Vec::new(),
        };
        Plan {
            reachable,
            terms: terms(&query.text),
            embedded,
        }
    }

    /// The reachable keys, for the keyword query.
    pub(crate) fn keys(&self) -> Vec<i64> {
        let mut keys: Vec<i64> = self.reachable.keys().copied().collect();
        keys.sort_unstable();
        keys
    }

    /// The chunk keys to show, with scores, from the two rankings.
    pub(crate) fn fuse(
        &self,
        query: &ChunkQuery,
        keyword: &[i64],
        vector: Option<&[i64]>,
    ) -> Vec<(i64, f64)> {
        let (text_w, embed_w) = weights(query.weights);
        let mut rankings: Vec<(&[i64], f64)> = vec![(keyword, text_w)];
        if let Some(v) = vector {
            rankings.push((v, embed_w));
        }
        fuse(&rankings, query.limit, query.score_threshold)
    }

    /// The outcome from the fused keys and their rows (any order).
    pub(crate) fn outcome(
        &self,
        fused: &[(i64, f64)],
        rows: Vec<ChunkRow>,
        hybrid: bool,
    ) -> SearchOutcome {
        let mut by_id: HashMap<i64, ChunkRow> = rows.into_iter().map(|r| (r.id, r)).collect();
        let hits = fused
            .iter()
            .filter_map(|(id, score)| {
                let row = by_id.remove(id)?;
                let a = self.reachable.get(&row.attachment)?;
                Some(ChunkHit {
                    vector_store_id: a.vector_store_id.clone(),
                    file_id: a.file_id.clone(),
                    filename: a.filename.clone(),
                    chunk_index: u32::try_from(row.position).unwrap_or(u32::MAX),
                    text: row.text,
                    score: *score,
                    attributes: a.attributes.clone(),
                })
            })
            .collect();
        SearchOutcome {
            hits,
            mode: if hybrid {
                SearchMode::Hybrid
            } else {
                SearchMode::Keyword
            },
        }
    }
}
