//! Identifiers in the OpenAI style: a type prefix and 48 hex digits.

use rand::RngCore;

/// Prefixes for each kind of object Windlass creates.
pub mod prefix {
    pub const RESPONSE: &str = "resp";
    pub const MESSAGE: &str = "msg";
    pub const FUNCTION_CALL: &str = "fc";
    pub const FUNCTION_CALL_OUTPUT: &str = "fco";
    pub const CUSTOM_TOOL_CALL: &str = "ctc";
    pub const CUSTOM_TOOL_CALL_OUTPUT: &str = "ctco";
    pub const REASONING: &str = "rs";
    pub const CALL: &str = "call";
    pub const MCP_LIST_TOOLS: &str = "mcpl";
    pub const MCP_CALL: &str = "mcp";
    pub const MCP_APPROVAL_REQUEST: &str = "mcpr";
    pub const MCP_APPROVAL_RESPONSE: &str = "mcpa";
    pub const COMPACTION: &str = "cmp";
    pub const PROMPT: &str = "pmpt";
}

/// A new random id with `prefix`, e.g. `resp_3f2a...`.
pub fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    let mut s = String::with_capacity(prefix.len() + 1 + 48);
    s.push_str(prefix);
    s.push('_');
    for b in bytes {
        s.push(char::from(HEX[(b >> 4) as usize]));
        s.push(char::from(HEX[(b & 15) as usize]));
    }
    s
}

const HEX: &[u8; 16] = b"0123456789abcdef";
