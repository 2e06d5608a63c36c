//! Result rows, the readable table and the JSON document.

use serde::Serialize;
use serde_json::Value;

/// One line of the result table.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub scenario: &'static str,
    pub metric: String,
    pub unit: &'static str,
    /// The same upstream reached directly (the limit).
    pub direct: Option<f64>,
    /// Through Windlass (or Windlass's own figure for single-value rows).
    pub windlass: Option<f64>,
    /// `windlass - direct` (or the derived overhead for single-value rows).
    pub added: Option<f64>,
    /// `windlass / direct`.
    pub ratio: Option<f64>,
    /// e.g. `added <= 0.5`
    pub target: Option<String>,
    pub met: Option<bool>,
}

impl Row {
    /// direct vs Windlass, with the difference and the ratio.
    pub(crate) fn compare(
        scenario: &'static str,
        metric: &str,
        unit: &'static str,
        d: f64,
        w: f64,
    ) -> Row {
        Row {
            scenario,
            metric: metric.to_owned(),
            unit,
            direct: Some(d),
            windlass: Some(w),
            added: Some(w - d),
            ratio: if d != 0.0 { Some(w / d) } else { None },
            target: None,
            met: None,
        }
    }

    /// direct vs Windlass, no difference (e.g. throughput, counts).
    pub(crate) fn side_by_side(
        scenario: &'static str,
        metric: &str,
        unit: &'static str,
        d: f64,
        w: f64,
    ) -> Row {
        let mut r = Row::compare(scenario, metric, unit, d, w);
        r.added = None;
        r
    }

    /// A figure that only exists for Windlass (an overhead, a CPU cost),
    /// shown in the `added` column.
    pub(crate) fn overhead(
        scenario: &'static str,
        metric: &str,
        unit: &'static str,
        v: f64,
    ) -> Row {
        Row {
            scenario,
            metric: metric.to_owned(),
            unit,
            direct: None,
            windlass: None,
            added: Some(v),
            ratio: None,
            target: None,
            met: None,
        }
    }

    /// A plain Windlass figure, shown in the `windlass` column.
    pub(crate) fn value(scenario: &'static str, metric: &str, unit: &'static str, v: f64) -> Row {
        Row {
            scenario,
            metric: metric.to_owned(),
            unit,
            direct: None,
            windlass: Some(v),
            added: None,
            ratio: None,
            target: None,
            met: None,
        }
    }

    /// Target `column <= limit` on the `added` column, or on `windlass`
    /// when there is no `added`.
    pub(crate) fn target_max(mut self, limit: f64) -> Row {
        let v = self.added.or(self.windlass);
        let col = if self.added.is_some() {
            "added"
        } else {
            "value"
        };
        self.target = Some(format!("{col} <= {}", fmt_num(limit)));
        self.met = v.map(|v| v.is_finite() && v <= limit);
        self
    }
}

fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn fmt_opt(v: Option<f64>, signed: bool) -> String {
    match v {
        None => String::new(),
        Some(v) if signed && v.is_finite() && v >= 0.0 => format!("+{}", fmt_num(v)),
        Some(v) => fmt_num(v),
    }
}

/// The readable table.
pub(crate) fn table(header: &str, rows: &[Row]) -> String {
    let titles = [
        "scenario", "metric", "unit", "direct", "windlass", "added", "ratio", "target", "",
    ];
    let cells: Vec<[String; 9]> = rows
        .iter()
        .map(|r| {
            [
                r.scenario.to_owned(),
                r.metric.clone(),
                r.unit.to_owned(),
                fmt_opt(r.direct, false),
                fmt_opt(r.windlass, false),
                fmt_opt(r.added, true),
                r.ratio.map(|x| format!("{x:.3}x")).unwrap_or_default(),
                r.target.clone().unwrap_or_default(),
                match r.met {
                    Some(true) => "ok".into(),
                    Some(false) => "MISSED".into(),
                    None => String::new(),
                },
            ]
        })
        .collect();
    let mut width = titles.map(str::len);
    for c in &cells {
        for (i, s) in c.iter().enumerate() {
            width[i] = width[i].max(s.chars().count());
        }
    }
    let line = |c: &[String]| {
        let mut s = String::new();
        for (i, cell) in c.iter().enumerate() {
            let pad = width[i].saturating_sub(cell.chars().count());
            // Text columns left-aligned, numbers right-aligned.
            if (3..=6).contains(&i) {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            } else {
                s.push_str(cell);
                s.push_str(&" ".repeat(pad));
            }
            s.push_str("  ");
        }
        s.trim_end().to_owned() + "\n"
    };
    let mut out = String::new();
    out.push_str(header);
    out.push('\n');
    out.push_str(&line(&titles.map(str::to_owned)));
    let total: usize = width.iter().sum::<usize>() + 2 * (width.len() - 1);
    out.push_str(&"-".repeat(total));
    out.push('\n');
    let mut last = "";
    for (r, c) in rows.iter().zip(&cells) {
        if !last.is_empty() && last != r.scenario {
            out.push('\n');
        }
        last = r.scenario;
        out.push_str(&line(c));
    }
    out
}

/// One line under the table: stored JSON and stored streamed p99 over the
/// direct upstream's (the tail a user feels), and the save commits that took
/// 2 ms or more; printed by every run, the CI smoke run included (reported,
/// never asserted).
pub(crate) fn tail_summary(rows: &[Row]) -> String {
    let find = |scenario: &str, metric: &str| {
        rows.iter()
            .find(|r| r.scenario == scenario && r.metric == metric)
    };
    let added = |scenario: &str, metric: &str| match find(scenario, metric) {
        Some(Row {
            direct: Some(d),
            windlass: Some(w),
            ..
        }) => format!(
            "{} ms ({} vs {} ms)",
            fmt_opt(Some(w - d), true),
            fmt_num(*w),
            fmt_num(*d)
        ),
        _ => "not run".to_owned(),
    };
    let value = |scenario: &str, metric: &str| {
        find(scenario, metric)
            .and_then(|r| r.windlass)
            .map_or_else(|| "-".to_owned(), fmt_num)
    };
    let mut out = format!(
        "\ntail, p99 over direct: stored JSON {}; stored stream, last byte {}\n",
        added("json", "latency p99"),
        added("stream", "time to last byte p99"),
    );
    for scenario in ["json", "stream"] {
        if find(scenario, "save: commits >= 2 ms").is_some() {
            out.push_str(&format!(
                "  {scenario}: save commits >= 2 ms: {} (rewinding the WAL: {}), commit p99 {} ms\n",
                value(scenario, "save: commits >= 2 ms"),
                value(scenario, "save:   of them rewinding the WAL"),
                value(scenario, "save: group commit p99"),
            ));
        }
    }
    out
}

/// The whole run as one JSON document.
pub(crate) fn json(meta: Value, rows: &[Row], details: Value) -> Value {
    serde_json::json!({
        "meta": meta,
        "rows": rows,
        "details": details,
    })
}

/// Progress line on stderr.
pub(crate) fn progress(msg: impl AsRef<str>) {
    eprintln!("[windlass-bench] {}", msg.as_ref());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_judge_the_added_column_or_the_value() {
        let r = Row::compare("json", "latency p50", "ms", 20.0, 20.4).target_max(0.5);
        assert_eq!(r.met, Some(true));
        let r = Row::overhead("json", "cpu", "us", 250.0).target_max(200.0);
        assert_eq!(r.met, Some(false));
        let r = Row::value("chain", "load", "ms", 1.0).target_max(10.0);
        assert_eq!(r.met, Some(true));
        assert_eq!(r.target.as_deref(), Some("value <= 10.00"));
    }

    #[test]
    fn the_tail_line_gives_both_p99s_over_direct() {
        let rows = vec![
            Row::compare("json", "latency p99", "ms", 23.0, 25.5),
            Row::compare("stream", "time to last byte p99", "ms", 600.0, 610.0),
            Row::value("json", "save: commits >= 2 ms", "count", 3.0),
        ];
        let line = tail_summary(&rows);
        assert!(
            line.contains("stored JSON +2.50 ms (25.50 vs 23.00 ms)"),
            "{line}"
        );
        assert!(
            line.contains("stored stream, last byte +10.00 ms"),
            "{line}"
        );
        assert!(line.contains("json: save commits >= 2 ms: 3.00"), "{line}");
        let none = tail_summary(&[]);
        assert!(none.contains("stored JSON not run"), "{none}");
    }

    #[test]
    fn table_has_one_line_per_row() {
        let rows = vec![
            Row::compare("a", "m1", "ms", 1.0, 2.0),
            Row::value("b", "m2", "ms", 3.0),
        ];
        let t = table("header", &rows);
        assert!(t.contains("+1.00"));
        assert!(t.contains("2.000x"));
        // header, titles, rule, 2 rows, 1 blank line between scenarios
        assert_eq!(t.lines().count(), 6);
    }
}
