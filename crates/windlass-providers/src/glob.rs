//! Model-name globs: `*` matches any run of characters, `?` one character.

/// Whether `name` matches `pattern` (the whole name; no escapes).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Greedy with one backtrack point: the last `*` seen.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("gpt-*", "gpt-4o"));
        assert!(glob_match("*", ""));
        assert!(glob_match("claude-*-4-?", "claude-sonnet-4-5"));
        assert!(glob_match("qwen2.5-1.5b", "qwen2.5-1.5b"));
        assert!(!glob_match("qwen2.5-1.5b", "qwen2.5-1.5"));
        assert!(!glob_match("gpt-*", "claude-3"));
        assert!(glob_match("*-mini", "o4-mini"));
        assert!(!glob_match("*-mini", "o4-mini-high"));
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(!glob_match("a*b*c", "axxbyy"));
    }
}
