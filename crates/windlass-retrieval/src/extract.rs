//! Text out of an uploaded file, by its type: plain text, Markdown, JSON and
//! source code as UTF-8 text; HTML reduced to readable text; PDF through
//! `pdf-extract`. The type comes from the file name's extension (OpenAI's
//! supported list, minus the Office formats); anything else is refused.

use std::panic::{catch_unwind, AssertUnwindSafe};

use windlass_protocol::LastErrorCode;

/// Width HTML text is wrapped at: wide, so lines stay sentences.
const HTML_WIDTH: usize = 1_000;

/// Source code and text extensions read as UTF-8 text.
const TEXT_EXTENSIONS: &[&str] = &[
    "txt", "text", "log", "csv", "tsv", "md", "markdown", "rst", "tex", "yaml", "yml", "toml",
    "ini", "cfg", "xml", "c", "h", "cc", "cpp", "cxx", "hpp", "cs", "css", "go", "java", "js",
    "mjs", "cjs", "jsx", "ts", "tsx", "php", "py", "rb", "rs", "sh", "bash", "zsh", "sql", "kt",
    "kts", "swift", "scala", "lua", "pl", "r", "dart", "ex", "exs", "erl", "hs", "ml", "vue",
    "svelte",
];

/// How a file's text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Plain text, Markdown, source code: UTF-8 as is.
    Text,
    /// JSON: checked to parse, then indexed as its text.
    Json,
    Html,
    Pdf,
}

impl FileKind {
    /// The kind of `filename`, by extension; `None`: not supported.
    pub fn of(filename: &str) -> Option<FileKind> {
        let (_, ext) = filename.rsplit_once('.')?;
        let ext = ext.to_ascii_lowercase();
        match ext.as_str() {
            "json" | "jsonl" => Some(FileKind::Json),
            "html" | "htm" | "xhtml" => Some(FileKind::Html),
            "pdf" => Some(FileKind::Pdf),
            e if TEXT_EXTENSIONS.contains(&e) => Some(FileKind::Text),
            _ => None,
        }
    }
}

/// Why a file yields no text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Invalid(String),
}

impl ExtractError {
    /// The `last_error.code` a failed ingestion reports.
    pub fn code(&self) -> LastErrorCode {
        match self {
            ExtractError::Unsupported(_) => LastErrorCode::UnsupportedFile,
            ExtractError::Invalid(_) => LastErrorCode::InvalidFile,
        }
    }
}

/// The text of `bytes`, read as `filename`'s type. CPU-bound (a large PDF
/// takes a while): call it off the async threads.
pub fn extract(filename: &str, bytes: &[u8]) -> Result<String, ExtractError> {
    let kind = FileKind::of(filename).ok_or_else(|| {
        ExtractError::Unsupported(format!(
            "files of type '{}' are not supported for retrieval",
            filename
                .rsplit_once('.')
                .map_or("(no extension)", |(_, e)| e)
        ))
    })?;
    let text = match kind {
        FileKind::Text => utf8(bytes)?.to_owned(),
        FileKind::Json => json(bytes)?,
        FileKind::Html => html(bytes)?,
        FileKind::Pdf => pdf(bytes)?,
    };
    if text.trim().is_empty() {
        return Err(ExtractError::Invalid("the file contains no text".into()));
    }
    Ok(text)
}

fn utf8(bytes: &[u8]) -> Result<&str, ExtractError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|e| {
        ExtractError::Invalid(format!(
            "the file is not UTF-8 text (byte {})",
            e.valid_up_to()
        ))
    })
}

/// JSON must parse (JSON Lines: every line); its text is indexed as written,
/// so keys and values are both searchable.
fn json(bytes: &[u8]) -> Result<String, ExtractError> {
    let text = utf8(bytes)?;
    let whole = serde_json_check(text);
    let lines = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .all(|l| serde_json_check(l).is_ok());
    match (whole, lines) {
        (Ok(()), _) | (_, true) => Ok(text.to_owned()),
        (Err(e), false) => Err(ExtractError::Invalid(format!(
            "the file is not valid JSON: {e}"
        ))),
    }
}

/// Whether `text` is one JSON value, without building it.
fn serde_json_check(text: &str) -> Result<(), String> {
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn html(bytes: &[u8]) -> Result<String, ExtractError> {
    html2text::from_read(utf8(bytes)?.as_bytes(), HTML_WIDTH)
        .map_err(|e| ExtractError::Invalid(format!("the HTML could not be read: {e}")))
}

/// PDF text. `pdf-extract` panics on some malformed files: a panic is an
/// invalid file, never a crash.
fn pdf(bytes: &[u8]) -> Result<String, ExtractError> {
    let invalid = |why: String| ExtractError::Invalid(format!("the PDF could not be read: {why}"));
    match catch_unwind(AssertUnwindSafe(|| {
        pdf_extract::extract_text_from_mem(bytes)
    })) {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(invalid(e.to_string())),
        Err(_) => Err(invalid("the parser failed on its structure".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_extension() {
        assert_eq!(FileKind::of("notes.MD"), Some(FileKind::Text));
        assert_eq!(FileKind::of("main.rs"), Some(FileKind::Text));
        assert_eq!(FileKind::of("a.b.json"), Some(FileKind::Json));
        assert_eq!(FileKind::of("index.htm"), Some(FileKind::Html));
        assert_eq!(FileKind::of("paper.pdf"), Some(FileKind::Pdf));
        assert_eq!(FileKind::of("setup.exe"), None);
        assert_eq!(FileKind::of("Makefile"), None);
    }

    #[test]
    fn text_json_and_errors() {
        assert_eq!(extract("a.txt", b"\xEF\xBB\xBFhello").unwrap(), "hello");
        let err = extract("a.txt", b"ok \xFF\xFE").unwrap_err();
        assert_eq!(err.code(), LastErrorCode::InvalidFile);
        assert!(err.to_string().contains("byte 3"), "{err}");
        assert_eq!(
            extract("a.bin", b"x").unwrap_err().code(),
            LastErrorCode::UnsupportedFile
        );
        assert!(extract("a.txt", b"  \n ").is_err());
        assert!(extract("d.json", br#"{"k": "refund"}"#)
            .unwrap()
            .contains("refund"));
        assert!(extract("d.jsonl", b"{\"a\":1}\n{\"b\":2}\n").is_ok());
        assert_eq!(
            extract("d.json", b"{oops").unwrap_err().code(),
            LastErrorCode::InvalidFile
        );
    }
}
