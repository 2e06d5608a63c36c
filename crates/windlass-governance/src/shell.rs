//! Validation of a `shell` command line (seed 004 1.3 step 4): the line is
//! split into segments on `;`, `&&`, `||` and `|` (outside quotes); each
//! segment's command must be on the allowlist; subshells, command
//! substitution, process substitution, background jobs, newlines and
//! redirections to paths outside the allowed areas are refused.

use crate::paths::Areas;

/// Why a line is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellRefusal {
    #[error("the command line is empty")]
    Empty,
    #[error("newlines are not allowed in a command line; chain commands with ';' or '&&'")]
    Newline,
    #[error("command substitution ({0}) is not allowed")]
    Substitution(&'static str),
    #[error("subshells and grouping with '(' ')' are not allowed")]
    Subshell,
    #[error("background jobs ('&') are not allowed")]
    Background,
    #[error("unterminated quote in the command line")]
    Quote,
    #[error("a segment of the command line is empty")]
    EmptySegment,
    #[error("command '{0}' is not on the allowlist")]
    NotAllowed(String),
    #[error("redirection to '{0}' is outside the allowed paths")]
    Redirect(String),
    #[error("redirection without a target")]
    RedirectTarget,
}

/// One checked segment: its words and the files it redirects to.
#[derive(Debug, Default)]
struct Segment {
    text: String,
    redirects: Vec<String>,
}

/// Checks `line`. `commands`: the allowlist (`None`: any command);
/// `areas`: where redirections may write or read.
pub fn validate(
    line: &str,
    commands: Option<&[String]>,
    areas: &Areas,
) -> Result<usize, ShellRefusal> {
    let segments = split(line)?;
    for seg in &segments {
        let words = shell_words::split(&seg.text).map_err(|_| ShellRefusal::Quote)?;
        // Leading `NAME=value` words set the environment; the command follows.
        let command = words
            .iter()
            .find(|w| !is_assignment(w))
            .ok_or(ShellRefusal::EmptySegment)?;
        if let Some(list) = commands {
            if !list.iter().any(|c| c == command) {
                return Err(ShellRefusal::NotAllowed(command.clone()));
            }
        }
        for target in &seg.redirects {
            if target != "/dev/null" && !areas.allows(target) {
                return Err(ShellRefusal::Redirect(target.clone()));
            }
        }
    }
    Ok(segments.len())
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !name.as_bytes()[0].is_ascii_digit()
        }
        None => false,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Splits on control operators outside quotes and pulls out redirections.
fn split(line: &str) -> Result<Vec<Segment>, ShellRefusal> {
    if line.contains(['\n', '\r']) {
        return Err(ShellRefusal::Newline);
    }
    let chars: Vec<char> = line.chars().collect();
    let mut segments = Vec::new();
    let mut cur = Segment::default();
    let mut quote = Quote::None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match quote {
            Quote::Single => {
                if c == '\'' {
                    quote = Quote::None;
                }
                cur.text.push(c);
                i += 1;
                continue;
            }
            Quote::Double => {
                match c {
                    '"' => quote = Quote::None,
                    '\\' => {
                        cur.text.push(c);
                        if let Some(n) = next {
                            cur.text.push(n);
                        }
                        i += 2;
                        continue;
                    }
                    '`' => return Err(ShellRefusal::Substitution("`...`")),
                    '$' if next == Some('(') => return Err(ShellRefusal::Substitution("$(...)")),
                    _ => {}
                }
                cur.text.push(c);
                i += 1;
                continue;
            }
            Quote::None => {}
        }
        match c {
            '\\' => {
                cur.text.push(c);
                if let Some(n) = next {
                    cur.text.push(n);
                }
                i += 2;
            }
            '\'' => {
                quote = Quote::Single;
                cur.text.push(c);
                i += 1;
            }
            '"' => {
                quote = Quote::Double;
                cur.text.push(c);
                i += 1;
            }
            '`' => return Err(ShellRefusal::Substitution("`...`")),
            '$' if next == Some('(') => return Err(ShellRefusal::Substitution("$(...)")),
            '(' | ')' => return Err(ShellRefusal::Subshell),
            ';' => {
                segments.push(std::mem::take(&mut cur));
                i += 1;
            }
            '|' => {
                // `|`, `||` and `|&` all end a segment.
                segments.push(std::mem::take(&mut cur));
                i += if matches!(next, Some('|' | '&')) {
                    2
                } else {
                    1
                };
            }
            '&' if next == Some('&') => {
                segments.push(std::mem::take(&mut cur));
                i += 2;
            }
            '&' if next == Some('>') => {
                i = redirect(&chars, i + 2, &mut cur)?;
            }
            '&' => return Err(ShellRefusal::Background),
            '<' | '>' => {
                if next == Some('(') {
                    return Err(ShellRefusal::Substitution("<(...)"));
                }
                // A file-descriptor number written right before belongs to
                // the redirection (`2>file`); it stays in the text harmlessly.
                let mut j = i + 1;
                if c == '<' && next == Some('<') {
                    // Here-documents need newlines, refused above; a
                    // here-string (`<<<`) carries its word inline.
                    j += 1;
                    if chars.get(j) == Some(&'<') {
                        j += 1;
                        cur.text.push(' ');
                        i = j;
                        continue;
                    }
                }
                match chars.get(j) {
                    Some('>' | '|') if c == '>' => j += 1,
                    Some('&') => {
                        // `>&2`, `<&0`: duplicating a descriptor, no file.
                        j += 1;
                        let digits = chars[j..]
                            .iter()
                            .take_while(|d| d.is_ascii_digit() || **d == '-')
                            .count();
                        if digits > 0 {
                            cur.text.push(' ');
                            i = j + digits;
                            continue;
                        }
                    }
                    _ => {}
                }
                i = redirect(&chars, j, &mut cur)?;
            }
            _ => {
                cur.text.push(c);
                i += 1;
            }
        }
    }
    if quote != Quote::None {
        return Err(ShellRefusal::Quote);
    }
    segments.push(cur);
    if segments.len() == 1 && segments[0].text.trim().is_empty() {
        return Err(ShellRefusal::Empty);
    }
    if segments.iter().any(|s| s.text.trim().is_empty()) {
        return Err(ShellRefusal::EmptySegment);
    }
    Ok(segments)
}

/// Reads the target word of a redirection starting at `from`; returns the
/// index after it.
fn redirect(chars: &[char], from: usize, cur: &mut Segment) -> Result<usize, ShellRefusal> {
    let mut j = from;
    while chars.get(j).is_some_and(|c| c.is_whitespace()) {
        j += 1;
    }
    let start = j;
    let mut quote = Quote::None;
    let mut word = String::new();
    while let Some(&c) = chars.get(j) {
        match (quote, c) {
            (Quote::None, c) if c.is_whitespace() || ";|&<>()".contains(c) => break,
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            (Quote::None | Quote::Double, '`') => return Err(ShellRefusal::Substitution("`...`")),
            (Quote::None | Quote::Double, '$') => {
                // A target computed at run time cannot be checked here.
                return Err(ShellRefusal::Redirect(chars[start..].iter().collect()));
            }
            _ => word.push(c),
        }
        j += 1;
    }
    if quote != Quote::None {
        return Err(ShellRefusal::Quote);
    }
    if word.is_empty() {
        return Err(ShellRefusal::RedirectTarget);
    }
    if word.starts_with('~') {
        // Expanded by the shell to a home directory: not checkable here.
        return Err(ShellRefusal::Redirect(word));
    }
    cur.redirects.push(word);
    cur.text.push(' ');
    Ok(j)
}
