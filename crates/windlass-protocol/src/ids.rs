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
    pub const FILE_SEARCH_CALL: &str = "fs";
    pub const VECTOR_STORE: &str = "vs";
    pub const FILE_BATCH: &str = "vsfb";
    /// Files are `file-...` (a dash, as OpenAI's): see [`new_file_id`](super::new_file_id).
    pub const FILE: &str = "file";
    pub const WEB_SEARCH_CALL: &str = "ws";
    pub const CODE_INTERPRETER_CALL: &str = "ci";
    pub const IMAGE_GENERATION_CALL: &str = "ig";
    pub const SHELL_CALL: &str = "sh";
    pub const SHELL_CALL_OUTPUT: &str = "sho";
    pub const LOCAL_SHELL_CALL: &str = "lsh";
    pub const LOCAL_SHELL_CALL_OUTPUT: &str = "lsho";
    pub const APPLY_PATCH_CALL: &str = "apc";
    pub const APPLY_PATCH_CALL_OUTPUT: &str = "apco";
    pub const COMPUTER_CALL: &str = "cu";
    pub const COMPUTER_CALL_OUTPUT: &str = "cuo";
    pub const CONTAINER: &str = "cntr";
    pub const CONTAINER_FILE: &str = "cfile";
    pub const PROMPT: &str = "pmpt";
}

/// A new random id with `prefix`, e.g. `resp_3f2a...`.
pub fn new_id(prefix: &str) -> String {
    new_id_sep(prefix, '_')
}

/// A new file id, `file-3f2a...`: OpenAI spells file ids with a dash.
pub fn new_file_id() -> String {
    new_id_sep(prefix::FILE, '-')
}

fn new_id_sep(prefix: &str, sep: char) -> String {
    let mut bytes = [0u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    let mut s = String::with_capacity(prefix.len() + 1 + 48);
    s.push_str(prefix);
    s.push(sep);
    for b in bytes {
        s.push(char::from(HEX[(b >> 4) as usize]));
        s.push(char::from(HEX[(b & 15) as usize]));
    }
    s
}

const HEX: &[u8; 16] = b"0123456789abcdef";
