//! The names the model sees for tools: the character set chat-completions
//! servers accept, and the `label__tool` form of MCP and namespaced tools.

/// The character set chat-completions servers accept for function names.
pub fn valid_name(name: &str) -> bool {
    name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The model-visible name of an MCP server's tool: `label__tool`, in the
/// character set chat-completions servers accept, at most 64 characters
/// (a long name keeps its start and gets a hash of the whole as suffix).
pub fn mcp_tool_name(server_label: &str, tool: &str) -> String {
    let full = format!("{server_label}__{tool}");
    let mut name: String = full
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.len() > 64 {
        // FNV-1a: stable across runs and builds, unlike the std hasher.
        let hash = full.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        name.truncate(55);
        name.push_str(&format!("_{:08x}", hash as u32));
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names_fit_what_models_accept() {
        assert_eq!(mcp_tool_name("calc", "add"), "calc__add");
        assert_eq!(mcp_tool_name("fs", "read.file/v2"), "fs__read_file_v2");
        let long = mcp_tool_name("server", &"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert_ne!(long, mcp_tool_name("server", &"x".repeat(101)));
    }

    #[test]
    fn valid_names_are_what_chat_completions_accepts() {
        assert!(valid_name("get_weather-2"));
        assert!(!valid_name("get weather"));
        assert!(!valid_name("ns.tool"));
        assert!(!valid_name(&"x".repeat(65)));
    }
}
