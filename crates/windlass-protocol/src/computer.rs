//! OpenAI's `computer_use_preview` tool, which the client runs: the model
//! asks for UI actions in `computer_call` items and the client answers each
//! with a screenshot in `computer_call_output`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::item_status::ItemStatus;
use crate::open_enum::open_enum;

/// `{"type": "computer_use_preview", "display_width", "display_height",
/// "environment"}` in `tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ComputerUsePreviewTool {
    pub display_width: u32,
    pub display_height: u32,
    pub environment: ComputerEnvironment,
}

/// The `environment` a computer tool drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ComputerEnvironment {
    Windows,
    Mac,
    Linux,
    Ubuntu,
    Browser,
}

/// The `computer_call` item: one action (`action`) or a batch (`actions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ComputerCall {
    pub id: String,
    pub call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<ComputerAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<ComputerAction>>,
    #[serde(default)]
    pub pending_safety_checks: Vec<SafetyCheck>,
    pub status: ItemStatus,
}

open_enum! {
    /// A UI action. Coordinates are pixels of the declared display.
    pub enum ComputerAction {
        "click" => Click(ClickAction),
        "double_click" => DoubleClick(PointAction),
        "drag" => Drag(DragAction),
        "keypress" => Keypress(KeypressAction),
        "move" => Move(PointAction),
        "screenshot" => Screenshot(NoArgs),
        "scroll" => Scroll(ScrollAction),
        "type" => Type(TypeAction),
        "wait" => Wait(NoArgs),
    }
}

impl ComputerAction {
    fn untyped(_raw: Value) -> Result<Self, String> {
        Err("computer action is missing `type`".into())
    }
}

/// A `click` at a pixel with a mouse button.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ClickAction {
    pub button: MouseButton,
    pub x: i64,
    pub y: i64,
    /// Modifier keys held during the click.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
}

/// The button of a `click`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum MouseButton {
    Left,
    Right,
    Wheel,
    Back,
    Forward,
}

/// A pointer position (`double_click`, `move`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct PointAction {
    pub x: i64,
    pub y: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
}

/// A `drag` along `path`, with modifier keys held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct DragAction {
    pub path: Vec<Point>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
}

/// A pixel position on the display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct Point {
    pub x: i64,
    pub y: i64,
}

/// A `keypress`: the keys pressed together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct KeypressAction {
    pub keys: Vec<String>,
}

/// A `scroll` at a pixel by `scroll_x`/`scroll_y` pixels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ScrollAction {
    pub x: i64,
    pub y: i64,
    pub scroll_x: i64,
    pub scroll_y: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
}

/// A `type` action: the text typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct TypeAction {
    pub text: String,
}

/// An action without fields (`screenshot`, `wait`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NoArgs {}

/// A safety check OpenAI raises on a call and the client acknowledges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct SafetyCheck {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The `computer_call_output` item: the screen after the action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ComputerCallOutput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub output: ComputerScreenshot,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acknowledged_safety_checks: Option<Vec<SafetyCheck>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ComputerCallOutputStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// `{"type": "computer_screenshot", "image_url" | "file_id"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them (`kind` is `type`).
#[allow(missing_docs)]
pub struct ComputerScreenshot {
    #[serde(rename = "type")]
    pub kind: ScreenshotTag,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
}

/// The only screenshot type, `computer_screenshot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ScreenshotTag {
    #[default]
    ComputerScreenshot,
}

/// A `computer_call_output`'s status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ComputerCallOutputStatus {
    InProgress,
    Completed,
    Incomplete,
    Failed,
}
