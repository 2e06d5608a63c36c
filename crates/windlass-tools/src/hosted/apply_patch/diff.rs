//! V4A diffs, the file-level format of OpenAI's `apply_patch`: the content
//! of a new file as `+` lines, or hunks that change an existing file.
//!
//! A hunk starts with `@@`, optionally followed by an anchor (a line of the
//! file, such as `def greet():`, that the change comes after); several
//! `@@ anchor` lines narrow down step by step. Then come ` ` context, `-`
//! removed and `+` added lines, and optionally `*** End of File` when the
//! hunk must match the end of the file. Hunks apply in order, each after the
//! previous one. Context is found exactly first, then ignoring trailing
//! whitespace, then ignoring surrounding whitespace; a blank line without
//! its leading space counts as blank context.

/// Why a diff cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    #[error("line {line} of the diff is not a hunk line (' ', '-', '+' or '@@'): {text:?}")]
    BadLine { line: usize, text: String },
    #[error("line {line} of a new file's diff does not start with '+': {text:?}")]
    NotAnAddition { line: usize, text: String },
    #[error("the diff has no changes")]
    Empty,
    #[error("anchor {0:?} was not found in the file")]
    AnchorNotFound(String),
    #[error("the lines to change were not found in the file (expected {0:?})")]
    ContextNotFound(String),
}

const END_OF_FILE: &str = "*** End of File";

/// A line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    Context(String),
    Removed(String),
    Added(String),
}

/// One hunk: where it goes and what it changes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Hunk {
    anchors: Vec<String>,
    lines: Vec<Line>,
    /// Context and removed lines, in file order: what must be found.
    old: Vec<String>,
    at_end: bool,
}

impl Hunk {
    fn changes(&self) -> bool {
        self.lines.iter().any(|l| !matches!(l, Line::Context(_)))
    }

    /// The lines replacing `found` (the file's lines the hunk matched):
    /// context keeps the file's own text (which fuzzy matching may differ
    /// from the diff's in whitespace), added lines come from the diff.
    fn replacement(&self, found: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(self.lines.len());
        let mut j = 0;
        for line in &self.lines {
            match line {
                Line::Context(_) => {
                    out.push(found[j].clone());
                    j += 1;
                }
                Line::Removed(_) => j += 1,
                Line::Added(s) => out.push(s.clone()),
            }
        }
        out
    }
}

fn lines_of(diff: &str) -> impl Iterator<Item = (usize, &str)> {
    let trimmed = diff.strip_suffix('\n').unwrap_or(diff);
    trimmed
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !(trimmed.is_empty() && l.is_empty()))
}

/// The content of a new file: every line of `diff` without its `+`.
pub fn created_content(diff: &str) -> Result<String, DiffError> {
    let mut out = String::new();
    for (line, text) in lines_of(diff) {
        let Some(body) = text.strip_prefix('+') else {
            return Err(DiffError::NotAnAddition {
                line,
                text: text.to_owned(),
            });
        };
        out.push_str(body);
        out.push('\n');
    }
    Ok(out)
}

fn parse_hunks(diff: &str) -> Result<Vec<Hunk>, DiffError> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current = Hunk::default();
    // Anchor lines belong to the hunk whose body follows them.
    let mut in_body = false;
    for (line, text) in lines_of(diff) {
        if let Some(rest) = text.strip_prefix("@@") {
            if in_body {
                hunks.push(std::mem::take(&mut current));
                in_body = false;
            }
            let anchor = rest.trim();
            if !anchor.is_empty() {
                current.anchors.push(anchor.to_owned());
            }
            continue;
        }
        if text.trim() == END_OF_FILE {
            current.at_end = true;
            continue;
        }
        in_body = true;
        let (kind, body) = match text.chars().next() {
            None => (' ', ""),
            Some(c @ (' ' | '-' | '+')) => (c, &text[1..]),
            Some(_) => {
                return Err(DiffError::BadLine {
                    line,
                    text: text.to_owned(),
                })
            }
        };
        let body = body.to_owned();
        match kind {
            ' ' => {
                current.old.push(body.clone());
                current.lines.push(Line::Context(body));
            }
            '-' => {
                current.old.push(body.clone());
                current.lines.push(Line::Removed(body));
            }
            _ => current.lines.push(Line::Added(body)),
        }
    }
    if in_body || !current.anchors.is_empty() {
        hunks.push(current);
    }
    if !hunks.iter().any(Hunk::changes) {
        return Err(DiffError::Empty);
    }
    Ok(hunks)
}

/// Where `needle` starts at or after `from`, trying exact, then
/// trailing-whitespace-insensitive, then whitespace-insensitive matching.
fn seek(lines: &[String], needle: &[String], from: usize, at_end: bool) -> Option<usize> {
    if needle.len() > lines.len() {
        return None;
    }
    let last = lines.len() - needle.len();
    let starts: Vec<usize> = match at_end {
        true if last >= from => vec![last],
        true => vec![],
        false => (from..=last).collect(),
    };
    let same = |norm: fn(&str) -> &str| {
        starts.iter().copied().find(|&s| {
            needle
                .iter()
                .zip(&lines[s..])
                .all(|(a, b)| norm(a) == norm(b))
        })
    };
    same(|s| s)
        .or_else(|| same(str::trim_end))
        .or_else(|| same(str::trim))
}

fn find_anchor(lines: &[String], anchor: &str, from: usize) -> Option<usize> {
    let hit =
        |norm: fn(&str) -> &str| (from..lines.len()).find(|&i| norm(&lines[i]) == norm(anchor));
    hit(str::trim_end).or_else(|| hit(str::trim))
}

/// `original` with `diff`'s hunks applied. Line endings follow the
/// original (CRLF stays CRLF); the result ends with a newline.
pub fn updated_content(original: &str, diff: &str) -> Result<String, DiffError> {
    let hunks = parse_hunks(diff)?;
    let crlf = original.contains("\r\n");
    let body = original.strip_suffix('\n').unwrap_or(original);
    let mut lines: Vec<String> = match body.is_empty() && original.len() <= 1 {
        true => Vec::new(),
        false => body
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
            .collect(),
    };
    let mut pos = 0;
    for hunk in &hunks {
        for anchor in &hunk.anchors {
            let at = find_anchor(&lines, anchor, pos)
                .ok_or_else(|| DiffError::AnchorNotFound(anchor.clone()))?;
            pos = at + 1;
        }
        let start = if hunk.old.is_empty() {
            // A pure addition goes after its anchor, or at the end.
            match hunk.anchors.is_empty() || hunk.at_end {
                true => lines.len(),
                false => pos,
            }
        } else {
            seek(&lines, &hunk.old, pos, hunk.at_end)
                .ok_or_else(|| DiffError::ContextNotFound(hunk.old.join("\n")))?
        };
        let end = start + hunk.old.len();
        let new = hunk.replacement(&lines[start..end]);
        pos = start + new.len();
        lines.splice(start..end, new);
    }
    let newline = if crlf { "\r\n" } else { "\n" };
    let mut out = lines.join(newline);
    out.push_str(newline);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_file_content_is_the_plus_lines() {
        assert_eq!(created_content("+a\n+b\n").unwrap(), "a\nb\n");
        assert_eq!(created_content("+a\n+\n+  c").unwrap(), "a\n\n  c\n");
        assert_eq!(created_content("").unwrap(), "");
        assert!(matches!(
            created_content("+a\nb\n"),
            Err(DiffError::NotAnAddition { line: 2, .. })
        ));
    }

    #[test]
    fn a_hunk_replaces_its_lines_in_place() {
        let file = "def greet():\n    print(\"Hi\")\n    return 1\n";
        let diff = "@@ def greet():\n-    print(\"Hi\")\n+    print(\"Hello\")\n     return 1\n";
        assert_eq!(
            updated_content(file, diff).unwrap(),
            "def greet():\n    print(\"Hello\")\n    return 1\n"
        );
    }

    #[test]
    fn hunks_apply_in_order_and_anchors_narrow_down() {
        let file = "class A:\n  def f():\n    x = 1\nclass B:\n  def f():\n    x = 1\n";
        let diff = "@@ class B:\n@@   def f():\n-    x = 1\n+    x = 2\n";
        assert_eq!(
            updated_content(file, diff).unwrap(),
            "class A:\n  def f():\n    x = 1\nclass B:\n  def f():\n    x = 2\n"
        );
        let two = "@@\n a\n-b\n+B\n@@\n c\n-d\n+D\n";
        assert_eq!(
            updated_content("a\nb\nc\nd\n", two).unwrap(),
            "a\nB\nc\nD\n"
        );
        // The second hunk is looked for after the first.
        let back = "@@\n c\n-d\n+D\n@@\n a\n-b\n+B\n";
        assert!(matches!(
            updated_content("a\nb\nc\nd\n", back),
            Err(DiffError::ContextNotFound(_))
        ));
    }

    #[test]
    fn context_mismatch_and_missing_anchor_are_errors() {
        let err = updated_content("one\ntwo\n", "@@\n one\n-three\n+3\n").unwrap_err();
        assert!(
            matches!(&err, DiffError::ContextNotFound(c) if c.contains("three")),
            "{err}"
        );
        let err = updated_content("one\n", "@@ fn nope()\n-one\n+1\n").unwrap_err();
        assert_eq!(err, DiffError::AnchorNotFound("fn nope()".into()));
        assert!(matches!(
            updated_content("a\n", "@@\n a\nxyz\n"),
            Err(DiffError::BadLine { line: 3, .. })
        ));
        assert_eq!(updated_content("a\n", "@@\n a\n"), Err(DiffError::Empty));
    }

    #[test]
    fn whitespace_fuzz_and_blank_context() {
        // The model dropped trailing spaces and the blank line's space.
        let file = "fn a() {  \n\n    old();\n}\n";
        let diff = "@@\n fn a() {\n\n-    old();\n+    new();\n }\n";
        assert_eq!(
            updated_content(file, diff).unwrap(),
            "fn a() {  \n\n    new();\n}\n"
        );
        let indented = "@@\n-old();\n+new();\n";
        assert_eq!(
            updated_content("    old();\n", indented).unwrap(),
            "new();\n"
        );
    }

    #[test]
    fn end_of_file_pure_additions_and_deletions() {
        let file = "x\ny\nx\n";
        let eof = "@@\n-x\n+z\n*** End of File\n";
        assert_eq!(updated_content(file, eof).unwrap(), "x\ny\nz\n");
        assert_eq!(updated_content("a\n", "@@\n+b\n").unwrap(), "a\nb\n");
        assert_eq!(
            updated_content("a\nc\n", "@@ a\n+b\n").unwrap(),
            "a\nb\nc\n"
        );
        assert_eq!(
            updated_content("a\nb\nc\n", "@@\n a\n-b\n").unwrap(),
            "a\nc\n"
        );
        // No trailing newline in the original: one is added.
        assert_eq!(updated_content("a", "@@\n-a\n+b\n").unwrap(), "b\n");
        // CRLF files stay CRLF.
        assert_eq!(
            updated_content("a\r\nb\r\n", "@@\n a\n-b\n+c\n").unwrap(),
            "a\r\nc\r\n"
        );
    }

    #[test]
    fn unicode_lines_match() {
        let file = "naïve = \"café\"\n";
        let diff = "@@\n-naïve = \"café\"\n+naïve = \"thé\"\n";
        assert_eq!(updated_content(file, diff).unwrap(), "naïve = \"thé\"\n");
    }
}
