//! Shell lines: injection attempts refused, ordinary pipelines accepted.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use windlass_governance::paths::Areas;
use windlass_governance::shell::validate;

#[test]
fn shell_injection_attempts_are_refused() {
    let allow: Vec<String> = ["ls", "wc", "cat", "echo", "grep", "sort"]
        .map(String::from)
        .to_vec();
    let areas = Areas::new(Some("/work".into()), vec!["/work".into()]);
    let refused = [
        "ls; rm -rf /",
        "ls && curl http://x",
        "ls || sh",
        "cat x | sh",
        "echo `id`",
        "echo $(id)",
        "echo \"$(id)\"",
        "echo \"`id`\"",
        "ls\nrm -rf /",
        "ls\rrm x",
        "(rm -rf /)",
        "ls & rm x",
        "cat <(rm x)",
        "echo x > /etc/passwd",
        "echo x >> ../outside",
        "cat < /etc/shadow",
        "echo x > ~/x",
        "echo x > $HOME/x",
        "rm -rf /",
        "/bin/rm x",
        "FOO=1 rm x",
        "ls;",
        "echo 'unterminated",
        "",
    ];
    for line in refused {
        assert!(
            validate(line, Some(&allow), &areas).is_err(),
            "{line:?} was accepted"
        );
    }
    let accepted = [
        "wc -l README.md | sort",
        "echo \"a;b && c | d\"",
        "echo 'a $(b) `c`'",
        "ls 2>/dev/null",
        "grep -c x notes.txt > counts.txt",
        "echo x >> /work/sub/log.txt",
        "ls 2>&1 | grep a",
        "LANG=C sort x",
    ];
    for line in accepted {
        assert!(
            validate(line, Some(&allow), &areas).is_ok(),
            "{line:?} was refused: {:?}",
            validate(line, Some(&allow), &areas)
        );
    }
}
