//! Identifiers in the OpenAI style: a type prefix and 48 hex digits.
//!
//! The first 16 digits are the creation time (microseconds since the Unix
//! epoch), the other 32 are random (128 bits, so ids stay unguessable).
//! Time first, as OpenAI's own ids are: stores index responses and items
//! by id, and ids that grow with time are inserted at the end of those
//! indexes instead of at a random page. With random ids every save dirtied
//! a random leaf of four indexes, which a group commit could not share and
//! the page cache could not keep once the database outgrew it.

use std::time::{SystemTime, UNIX_EPOCH};

use rand::RngCore;

/// Prefixes for each kind of object Windlass creates.
pub mod prefix {
    /// Ids of responses.
    pub const RESPONSE: &str = "resp";
    /// Ids of `message` items.
    pub const MESSAGE: &str = "msg";
    /// Ids of `function_call` items.
    pub const FUNCTION_CALL: &str = "fc";
    /// Ids of `function_call_output` items.
    pub const FUNCTION_CALL_OUTPUT: &str = "fco";
    /// Ids of `custom_tool_call` items.
    pub const CUSTOM_TOOL_CALL: &str = "ctc";
    /// Ids of `custom_tool_call_output` items.
    pub const CUSTOM_TOOL_CALL_OUTPUT: &str = "ctco";
    /// Ids of `reasoning` items.
    pub const REASONING: &str = "rs";
    /// `call_id`s the gateway mints when the model sent none.
    pub const CALL: &str = "call";
    /// Ids of `mcp_list_tools` items.
    pub const MCP_LIST_TOOLS: &str = "mcpl";
    /// Ids of `mcp_call` items.
    pub const MCP_CALL: &str = "mcp";
    /// Ids of `mcp_approval_request` items.
    pub const MCP_APPROVAL_REQUEST: &str = "mcpr";
    /// Ids of `mcp_approval_response` items.
    pub const MCP_APPROVAL_RESPONSE: &str = "mcpa";
    /// Ids of `compaction` items.
    pub const COMPACTION: &str = "cmp";
    /// Ids of `file_search_call` items.
    pub const FILE_SEARCH_CALL: &str = "fs";
    /// Ids of vector stores.
    pub const VECTOR_STORE: &str = "vs";
    /// Ids of vector store file batches.
    pub const FILE_BATCH: &str = "vsfb";
    /// Files are `file-...` (a dash, as OpenAI's): see [`new_file_id`](super::new_file_id).
    pub const FILE: &str = "file";
    /// Ids of `web_search_call` items.
    pub const WEB_SEARCH_CALL: &str = "ws";
    /// Ids of `code_interpreter_call` items.
    pub const CODE_INTERPRETER_CALL: &str = "ci";
    /// Ids of `image_generation_call` items.
    pub const IMAGE_GENERATION_CALL: &str = "ig";
    /// Ids of `shell_call` items.
    pub const SHELL_CALL: &str = "sh";
    /// Ids of `shell_call_output` items.
    pub const SHELL_CALL_OUTPUT: &str = "sho";
    /// Ids of `local_shell_call` items.
    pub const LOCAL_SHELL_CALL: &str = "lsh";
    /// Ids of `local_shell_call_output` items.
    pub const LOCAL_SHELL_CALL_OUTPUT: &str = "lsho";
    /// Ids of `apply_patch_call` items.
    pub const APPLY_PATCH_CALL: &str = "apc";
    /// Ids of `apply_patch_call_output` items.
    pub const APPLY_PATCH_CALL_OUTPUT: &str = "apco";
    /// Ids of `computer_call` items.
    pub const COMPUTER_CALL: &str = "cu";
    /// Ids of `computer_call_output` items.
    pub const COMPUTER_CALL_OUTPUT: &str = "cuo";
    /// Ids of containers.
    pub const CONTAINER: &str = "cntr";
    /// Ids of container files.
    pub const CONTAINER_FILE: &str = "cfile";
    /// Ids of stored prompts.
    pub const PROMPT: &str = "pmpt";
}

/// A new id with `prefix`, e.g. `resp_00064a1c...`: time first, then random.
pub fn new_id(prefix: &str) -> String {
    new_id_sep(prefix, '_')
}

/// A new file id, `file-3f2a...`: OpenAI spells file ids with a dash.
pub fn new_file_id() -> String {
    new_id_sep(prefix::FILE, '-')
}

fn new_id_sep(prefix: &str, sep: char) -> String {
    let mut bytes = [0u8; 24];
    // A clock before 1970 gives 0: the id is still unique, only unordered.
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    bytes[..8].copy_from_slice(&micros.to_be_bytes());
    rand::rng().fill_bytes(&mut bytes[8..]);
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
