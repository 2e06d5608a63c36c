//! Cursor paging over `seq`-ordered rows, the same on both backends: the
//! cursors (`after`, `before`, public ids) become `seq` bounds, and a page
//! before a cursor is read backwards from it and turned around.

use windlass_engine::{ListRequest, Page, SortOrder};

/// The `seq` range and scan direction of one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// Exclusive bounds.
    pub above: Option<i64>,
    pub below: Option<i64>,
    /// Scan `seq` ascending (else descending).
    pub ascending: bool,
    /// Rows come back in the opposite of list order (a `before` page).
    reversed: bool,
    /// Rows to fetch: one more than the page, to tell `has_more`.
    pub fetch: i64,
    limit: usize,
}

impl Window {
    /// `after`/`before` are the cursors' `seq`, already resolved.
    pub(crate) fn new(page: &ListRequest, after: Option<i64>, before: Option<i64>) -> Window {
        let asc = page.order == SortOrder::Asc;
        // In list order, `after` bounds the start and `before` the end.
        let (above, below) = if asc {
            (after, before)
        } else {
            (before, after)
        };
        // Only `before`: read back from it, closest first.
        let reversed = after.is_none() && before.is_some();
        Window {
            above,
            below,
            ascending: asc != reversed,
            reversed,
            fetch: i64::try_from(page.limit.saturating_add(1)).unwrap_or(i64::MAX),
            limit: page.limit,
        }
    }

    /// `ORDER BY` direction of the scan.
    pub(crate) fn direction(&self) -> &'static str {
        if self.ascending {
            "ASC"
        } else {
            "DESC"
        }
    }

    /// The page of scanned `rows` (at most `fetch` of them), in list order.
    pub(crate) fn page<T>(&self, mut rows: Vec<T>) -> Page<T> {
        let has_more = rows.len() > self.limit;
        rows.truncate(self.limit);
        if self.reversed {
            rows.reverse();
        }
        Page {
            data: rows,
            has_more,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(order: SortOrder, limit: usize) -> ListRequest {
        ListRequest::first(limit, order)
    }

    /// Applies a window to seqs 1..=10 the way the SQL does.
    fn run(w: Window) -> Page<i64> {
        let mut rows: Vec<i64> = (1..=10)
            .filter(|s| w.above.is_none_or(|a| *s > a) && w.below.is_none_or(|b| *s < b))
            .collect();
        if !w.ascending {
            rows.reverse();
        }
        rows.truncate(usize::try_from(w.fetch).unwrap());
        w.page(rows)
    }

    #[test]
    fn pages_in_both_orders() {
        let p = run(Window::new(&req(SortOrder::Asc, 3), None, None));
        assert_eq!((p.data, p.has_more), (vec![1, 2, 3], true));
        let p = run(Window::new(&req(SortOrder::Asc, 3), Some(8), None));
        assert_eq!((p.data, p.has_more), (vec![9, 10], false));
        let p = run(Window::new(&req(SortOrder::Desc, 3), None, None));
        assert_eq!((p.data, p.has_more), (vec![10, 9, 8], true));
        let p = run(Window::new(&req(SortOrder::Desc, 3), Some(8), None));
        assert_eq!((p.data, p.has_more), (vec![7, 6, 5], true));
    }

    #[test]
    fn before_reads_back_from_the_cursor() {
        let p = run(Window::new(&req(SortOrder::Asc, 3), None, Some(8)));
        assert_eq!((p.data, p.has_more), (vec![5, 6, 7], true));
        let p = run(Window::new(&req(SortOrder::Desc, 3), None, Some(3)));
        assert_eq!((p.data, p.has_more), (vec![6, 5, 4], true));
        let p = run(Window::new(&req(SortOrder::Asc, 5), Some(2), Some(6)));
        assert_eq!((p.data, p.has_more), (vec![3, 4, 5], false));
    }
}
