//! The whole-patch form (`*** Begin Patch` ... `*** End Patch`) that Codex's
//! freeform `apply_patch` tool takes: a list of file operations, each an
//! `*** Add File:`, `*** Delete File:` or `*** Update File:` header (an
//! update optionally followed by `*** Move to:`) and its V4A diff lines.

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchOp {
    Add {
        path: String,
        diff: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        diff: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    #[error("the patch must start with '*** Begin Patch'")]
    NoBegin,
    #[error("the patch must end with '*** End Patch'")]
    NoEnd,
    #[error("line {line}: expected a file header (*** Add File:, *** Delete File:, *** Update File:), found {text:?}")]
    NoHeader { line: usize, text: String },
    #[error("line {line}: '*** Delete File:' takes no content lines")]
    DeleteWithBody { line: usize },
    #[error("the patch changes no file")]
    Empty,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";

/// A line that starts the next operation (not the hunk's end-of-file mark).
fn is_header(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("*** ") && line != "*** End of File"
}

/// The diff lines from `*i` to the next header, `*i` moved past them.
fn take_body(lines: &[&str], i: &mut usize, end: usize) -> String {
    let start = *i;
    while *i < end && !is_header(lines[*i]) {
        *i += 1;
    }
    let mut diff = lines[start..*i].join("\n");
    if !diff.is_empty() {
        diff.push('\n');
    }
    diff
}

/// Parses a whole patch. Marker lines may carry surrounding whitespace.
pub fn parse_patch(patch: &str) -> Result<Vec<PatchOp>, EnvelopeError> {
    let lines: Vec<&str> = patch
        .trim()
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if lines.first().map(|l| l.trim()) != Some(BEGIN) {
        return Err(EnvelopeError::NoBegin);
    }
    if lines.len() < 2 || lines.last().map(|l| l.trim()) != Some(END) {
        return Err(EnvelopeError::NoEnd);
    }
    let mut ops = Vec::new();
    let mut i = 1;
    let body_end = lines.len() - 1;
    while i < body_end {
        let header = lines[i].trim_start();
        let line = i + 1;
        i += 1;
        if let Some(path) = header.strip_prefix(ADD) {
            let diff = take_body(&lines, &mut i, body_end);
            ops.push(PatchOp::Add {
                path: path.trim().to_owned(),
                diff,
            });
        } else if let Some(path) = header.strip_prefix(DELETE) {
            if !take_body(&lines, &mut i, body_end).trim().is_empty() {
                return Err(EnvelopeError::DeleteWithBody { line });
            }
            ops.push(PatchOp::Delete {
                path: path.trim().to_owned(),
            });
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            let move_to = match lines.get(i).and_then(|l| l.trim_start().strip_prefix(MOVE)) {
                Some(to) if i < body_end => {
                    i += 1;
                    Some(to.trim().to_owned())
                }
                _ => None,
            };
            let diff = take_body(&lines, &mut i, body_end);
            ops.push(PatchOp::Update {
                path: path.trim().to_owned(),
                move_to,
                diff,
            });
        } else if header.trim().is_empty() {
            continue;
        } else {
            return Err(EnvelopeError::NoHeader {
                line,
                text: lines[line - 1].to_owned(),
            });
        }
    }
    if ops.is_empty() {
        return Err(EnvelopeError::Empty);
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_with_every_operation() {
        let patch = "*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n\
                     *** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n\
                     -print(\"Hi\")\n+print(\"Hello, world!\")\n*** Delete File: obsolete.txt\n\
                     *** End Patch\n";
        assert_eq!(
            parse_patch(patch).unwrap(),
            vec![
                PatchOp::Add {
                    path: "hello.txt".into(),
                    diff: "+Hello world\n".into()
                },
                PatchOp::Update {
                    path: "src/app.py".into(),
                    move_to: Some("src/main.py".into()),
                    diff: "@@ def greet():\n-print(\"Hi\")\n+print(\"Hello, world!\")\n".into()
                },
                PatchOp::Delete {
                    path: "obsolete.txt".into()
                },
            ]
        );
    }

    #[test]
    fn end_of_file_marker_stays_in_the_hunk() {
        let patch =
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End of File\n*** End Patch";
        let ops = parse_patch(patch).unwrap();
        assert!(
            matches!(&ops[0], PatchOp::Update { diff, .. } if diff.ends_with("*** End of File\n"))
        );
    }

    #[test]
    fn malformed_patches_are_refused() {
        assert_eq!(
            parse_patch("*** Add File: a\n+x\n"),
            Err(EnvelopeError::NoBegin)
        );
        assert_eq!(
            parse_patch("*** Begin Patch\n*** Add File: a\n+x\n"),
            Err(EnvelopeError::NoEnd)
        );
        assert_eq!(
            parse_patch("*** Begin Patch\n*** End Patch"),
            Err(EnvelopeError::Empty)
        );
        assert!(matches!(
            parse_patch("*** Begin Patch\n*** Frobnicate: a\n*** End Patch"),
            Err(EnvelopeError::NoHeader { line: 2, .. })
        ));
        assert_eq!(
            parse_patch("*** Begin Patch\n*** Delete File: a\n+x\n*** End Patch"),
            Err(EnvelopeError::DeleteWithBody { line: 2 })
        );
    }

    #[test]
    fn padded_markers_are_read() {
        let patch = "  *** Begin Patch  \n *** Add File: a.txt\n+x\n  *** End Patch \n";
        assert_eq!(parse_patch(patch).unwrap().len(), 1);
    }
}
