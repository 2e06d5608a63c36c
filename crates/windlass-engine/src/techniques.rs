//! The loop's task-success techniques: switches an operator sets per server
//! (`[loop]`), a request per response (`metadata.windlass_techniques`), an
//! SDK program per agent and `windlass run` per run.
//!
//! Each is a step of the one loop (the completion check's turn, a decision
//! on a call before it runs), never a branch for one surface.

use std::fmt;

/// `metadata` key naming the techniques of one response: a comma-separated
/// list of names ([`Techniques::NAMES`]), each optionally prefixed with `-`
/// to turn it off, applied over the server's set; `all` and `none` start
/// from everything or nothing.
pub const META_TECHNIQUES: &str = "windlass_techniques";

/// Which techniques a response uses. The default is what Windlass ships:
/// `stall_stop` and `value_check` on (together they lifted the 47-task set
/// on the rig's 1.5B model from 16 to 30 passed, losing none; see
/// docs/task-success.md), everything else off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Techniques {
    /// After the first text-only answer of a response that used tools, one
    /// more turn asks the model to check its work (`[loop]
    /// completion_check`). The client sees one final answer either way.
    pub completion_check: bool,
    /// The check's prompt restates the request and the tool results so far
    /// and asks for the missing steps, instead of asking for a yes. Turns
    /// the check on.
    pub restate_check: bool,
    /// A call identical to an earlier one of the response (same tool, same
    /// arguments) is not run again: its output is the result the model
    /// already has, with a nudge to go on.
    pub repeat_guard: bool,
    /// Arguments are checked against the tool's JSON schema before a server
    /// tool runs; a mismatch is an error output naming the field.
    pub schema_check: bool,
    /// When the check's answer says a step is still missing (or writes a
    /// call as text), one more turn with `tool_choice: "required"`.
    pub require_after_check: bool,
    /// A server tool's call that repeats an earlier one, or applies the
    /// previous step again to its own result, is not run; its output lists
    /// the work so far and the next turn is asked for the answer
    /// (`tool_choice: "none"`). See `crate::stall`.
    pub stall_stop: bool,
    /// A text-only answer after a successful call is withdrawn while a
    /// number the request mentions is in no call's arguments nor result:
    /// a nudge naming it goes upstream and the next turn must call a tool
    /// (at most twice per response). Only when a tool takes a number. See
    /// `crate::values`.
    pub value_check: bool,
}

/// A technique name nobody knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown technique '{0}' (known: all, none, {names})", names = Techniques::NAMES.join(", "))]
pub struct UnknownTechnique(pub String);

impl Techniques {
    /// The names, as config, metadata and flags spell them.
    pub const NAMES: [&'static str; 7] = [
        "completion_check",
        "restate_check",
        "repeat_guard",
        "schema_check",
        "require_after_check",
        "stall_stop",
        "value_check",
    ];

    /// No technique: the plain loop.
    pub fn none() -> Techniques {
        Techniques {
            completion_check: false,
            restate_check: false,
            repeat_guard: false,
            schema_check: false,
            require_after_check: false,
            stall_stop: false,
            value_check: false,
        }
    }

    /// Every technique on.
    pub fn all() -> Techniques {
        Techniques {
            completion_check: true,
            restate_check: true,
            repeat_guard: true,
            schema_check: true,
            require_after_check: true,
            stall_stop: true,
            value_check: true,
        }
    }

    /// Whether the completion check runs (the restating prompt implies it).
    pub fn checks(&self) -> bool {
        self.completion_check || self.restate_check
    }

    fn slot(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "completion_check" => &mut self.completion_check,
            "restate_check" => &mut self.restate_check,
            "repeat_guard" => &mut self.repeat_guard,
            "schema_check" => &mut self.schema_check,
            "require_after_check" => &mut self.require_after_check,
            "stall_stop" => &mut self.stall_stop,
            "value_check" => &mut self.value_check,
            _ => return None,
        })
    }

    /// Sets one technique by name (`-` before `-`/`_` spellings alike).
    pub fn set(&mut self, name: &str, on: bool) -> Result<(), UnknownTechnique> {
        let key = name.trim().replace('-', "_");
        match self.slot(&key) {
            Some(slot) => {
                *slot = on;
                Ok(())
            }
            None => Err(UnknownTechnique(name.trim().to_owned())),
        }
    }

    /// `self` changed by a list such as `restate_check,-repeat_guard` or
    /// `none,repeat_guard` (empty entries are ignored).
    pub fn apply(mut self, list: &str) -> Result<Techniques, UnknownTechnique> {
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            match entry {
                "all" => self = Techniques::all(),
                "none" => self = Techniques::none(),
                _ => match entry.strip_prefix('-') {
                    Some(name) => self.set(name, false)?,
                    None => self.set(entry, true)?,
                },
            }
        }
        Ok(self)
    }
}

impl Default for Techniques {
    fn default() -> Self {
        Techniques {
            stall_stop: true,
            value_check: true,
            ..Techniques::none()
        }
    }
}

impl fmt::Display for Techniques {
    /// The names of the techniques on, comma-separated (`none` for none).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut copy = *self;
        let on: Vec<&str> = Techniques::NAMES
            .into_iter()
            .filter(|n| copy.slot(n).is_some_and(|s| *s))
            .collect();
        if on.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&on.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_applies_over_the_servers_set() {
        let server = Techniques {
            completion_check: true,
            ..Techniques::none()
        };
        let t = server.apply("repeat-guard, -completion_check").unwrap();
        assert!(t.repeat_guard && !t.completion_check && !t.schema_check);
        assert_eq!(server.apply("none").unwrap(), Techniques::none());
        assert_eq!(
            server.apply("all,-schema_check").unwrap().to_string(),
            "completion_check,restate_check,repeat_guard,require_after_check,stall_stop,value_check"
        );
        assert_eq!(server.apply("").unwrap(), server);
    }

    #[test]
    fn an_unknown_name_is_refused_and_named() {
        let err = Techniques::none().apply("repeat_guard,plan").unwrap_err();
        assert_eq!(err, UnknownTechnique("plan".into()));
        assert!(err.to_string().contains("repeat_guard"));
    }

    #[test]
    fn the_restating_prompt_turns_the_check_on() {
        let t = Techniques::none().apply("restate_check").unwrap();
        assert!(t.checks());
        assert!(!Techniques::none().checks());
        assert_eq!(Techniques::none().to_string(), "none");
        // What Windlass ships.
        assert_eq!(Techniques::default().to_string(), "stall_stop,value_check");
        let t = Techniques::default().apply("value-check").unwrap();
        assert!(t.value_check && t.stall_stop && !t.checks());
        assert_eq!(t.to_string(), "stall_stop,value_check");
    }
}
