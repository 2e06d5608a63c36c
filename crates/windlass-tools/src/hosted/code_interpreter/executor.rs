//! The `code_interpreter` executor: a call's `code` run by the [`Runner`] in
//! the tool's container, answered by a complete `code_interpreter_call`
//! (code, container, logs and images, the files the run left).
//!
//! The container: an id from the request (the tenant's, running), or for
//! `"auto"` a new one per response and tool (its `file_ids` copied in from
//! the Files API). The store holds the container's files; they are written
//! to the local work directory before each run and what the run wrote is
//! saved back, so any replica sees them. A problem of the call (unknown
//! container or file, the sandbox unavailable) is a `failed` item whose
//! logs say why: the model reads it and the loop goes on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use windlass_engine::{
    ContainerListRequest, ContainerStore, FileStore, SortOrder, ToolCall, ToolContext,
    ToolDefinition, ToolError, ToolExecutor, ToolKind, ToolOrigin, ToolResult,
};
use windlass_protocol::hosted_replay::HostedKind;
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    CodeInterpreterCall, CodeInterpreterCallStatus, CodeInterpreterContainer, CodeInterpreterFile,
    CodeInterpreterOutput, Container, ContainerExpiresAfter, ContainerExpiryAnchor,
    ContainerFile as StoredFile, ContainerFileSource, ContainerSettings, ContainerStatus, Item,
    OutputImage, OutputLogs, Tool,
};

use super::{ContainerFile, Runner};

/// Idle minutes before an `auto` container expires (OpenAI's default).
const AUTO_EXPIRY_MINUTES: u64 = 20;
/// `auto` containers remembered per response; past it the memory starts over
/// (a later call then gets a new container).
const AUTO_REMEMBERED: usize = 4096;

pub struct CodeInterpreterExecutor {
    runner: Runner,
    containers: Arc<dyn ContainerStore>,
    files: Option<Arc<dyn FileStore>>,
    /// (tenant, response, tool index) -> the `auto` container made for it.
    auto: Mutex<HashMap<(String, String, usize), String>>,
}

impl CodeInterpreterExecutor {
    pub fn new(
        runner: Runner,
        containers: Arc<dyn ContainerStore>,
        files: Option<Arc<dyn FileStore>>,
    ) -> Self {
        CodeInterpreterExecutor {
            runner,
            containers,
            files,
            auto: Mutex::new(HashMap::new()),
        }
    }

    /// The container of this call, made (with its files) when `auto` asks
    /// for a new one.
    async fn container(
        &self,
        ctx: &ToolContext,
        tool: &CodeInterpreterContainer,
        index: usize,
    ) -> Result<String, String> {
        let tenant = &ctx.tenant;
        match tool {
            CodeInterpreterContainer::Id(id) => {
                match self.containers.get_container(tenant, id).await {
                    Ok(Some(c)) if c.status == ContainerStatus::Running => Ok(c.id),
                    Ok(_) => Err(format!("No container found with id '{id}'.")),
                    Err(e) => Err(format!("The container store failed: {e}")),
                }
            }
            CodeInterpreterContainer::Auto(settings) => {
                let key = (tenant.clone(), ctx.response_id.clone(), index);
                if let Some(id) = self.remembered(&key) {
                    return Ok(id);
                }
                let id = self.new_container(tenant, settings).await?;
                let mut auto = self.auto.lock().unwrap_or_else(|p| p.into_inner());
                if auto.len() >= AUTO_REMEMBERED {
                    auto.clear();
                }
                auto.insert(key, id.clone());
                Ok(id)
            }
        }
    }

    fn remembered(&self, key: &(String, String, usize)) -> Option<String> {
        let auto = self.auto.lock().unwrap_or_else(|p| p.into_inner());
        auto.get(key).cloned()
    }

    async fn new_container(&self, tenant: &str, s: &ContainerSettings) -> Result<String, String> {
        let now = now_secs();
        let container = Container {
            id: new_id(prefix::CONTAINER),
            object: "container".into(),
            created_at: now,
            name: "code_interpreter".into(),
            status: ContainerStatus::Running,
            expires_after: Some(ContainerExpiresAfter {
                anchor: ContainerExpiryAnchor::LastActiveAt,
                minutes: AUTO_EXPIRY_MINUTES,
            }),
            last_active_at: Some(now),
            memory_limit: s.memory_limit,
        };
        let store_err = |e: windlass_engine::StoreError| format!("The container store failed: {e}");
        self.containers
            .create_container(tenant, &container)
            .await
            .map_err(store_err)?;
        for file_id in s.file_ids.iter().flatten() {
            let (name, bytes) = self.upload(tenant, file_id).await?;
            self.put(
                tenant,
                &container.id,
                &name,
                &bytes,
                ContainerFileSource::User,
            )
            .await?;
        }
        Ok(container.id)
    }

    /// A Files API file's name and bytes.
    async fn upload(&self, tenant: &str, file_id: &str) -> Result<(String, Vec<u8>), String> {
        let missing = || format!("No file found with id '{file_id}'.");
        let files = self.files.as_ref().ok_or_else(missing)?;
        let meta = files
            .get_file(tenant, file_id)
            .await
            .map_err(|e| e.to_string())?;
        let bytes = files
            .file_content(tenant, file_id)
            .await
            .map_err(|e| e.to_string())?;
        match (meta, bytes) {
            (Some(m), Some(b)) => Ok((m.filename, b)),
            _ => Err(missing()),
        }
    }

    async fn put(
        &self,
        tenant: &str,
        container_id: &str,
        path: &str,
        bytes: &[u8],
        source: ContainerFileSource,
    ) -> Result<StoredFile, String> {
        let file = StoredFile {
            id: new_id(prefix::CONTAINER_FILE),
            object: "container.file".into(),
            bytes: bytes.len() as u64,
            container_id: container_id.to_owned(),
            created_at: now_secs(),
            path: format!("{}/{}", super::DATA_DIR, path.trim_start_matches('/')),
            source,
        };
        match self
            .containers
            .put_container_file(tenant, &file, bytes)
            .await
        {
            Ok(true) => Ok(file),
            Ok(false) => Err(format!("The container '{container_id}' has expired.")),
            Err(e) => Err(format!("The container store failed: {e}")),
        }
    }

    /// Every file of the container, with its bytes.
    async fn load(&self, tenant: &str, container_id: &str) -> Result<Vec<ContainerFile>, String> {
        let mut out = Vec::new();
        let mut page = ContainerListRequest::first(100, SortOrder::Asc);
        loop {
            let listed = self
                .containers
                .list_container_files(tenant, container_id, &page)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("No container found with id '{container_id}'."))?;
            for f in &listed.data {
                let bytes = self
                    .containers
                    .container_file_content(tenant, container_id, &f.id)
                    .await
                    .map_err(|e| e.to_string())?
                    .unwrap_or_default();
                out.push(ContainerFile {
                    path: f.path.clone(),
                    bytes,
                });
            }
            match (listed.has_more, listed.data.last()) {
                (true, Some(last)) => page.after = Some(last.id.clone()),
                _ => return Ok(out),
            }
        }
    }

    /// Runs the code in the container; the item's outputs and files.
    async fn run(
        &self,
        ctx: &ToolContext,
        container_id: &str,
        code: &str,
    ) -> Result<(Vec<CodeInterpreterOutput>, Vec<CodeInterpreterFile>, bool), String> {
        let tenant = &ctx.tenant;
        let files = self.load(tenant, container_id).await?;
        let dir = self.runner.work_dir(tenant, container_id);
        let out = self
            .runner
            .run(&dir, &files, code, &ctx.cancel)
            .await
            .map_err(|e| e.to_string())?;
        let mut logs = out.logs.clone();
        let mut outputs = Vec::new();
        let mut saved = Vec::new();
        for f in &out.files {
            let stored = self
                .put(
                    tenant,
                    container_id,
                    &f.path,
                    &f.bytes,
                    ContainerFileSource::Assistant,
                )
                .await?;
            if f.image.is_some() {
                outputs.push(CodeInterpreterOutput::Image(OutputImage {
                    url: format!("/v1/containers/{container_id}/files/{}/content", stored.id),
                }));
            }
            saved.push(CodeInterpreterFile {
                file_id: stored.id,
                path: stored.path,
                bytes: stored.bytes,
                mime_type: f.image.map(str::to_owned),
            });
        }
        if !out.left_out.is_empty() {
            logs.push_str(&format!(
                "\n[files not saved, over the size budget: {}]\n",
                out.left_out.join(", ")
            ));
        }
        let _ = self
            .containers
            .touch_container(tenant, container_id, now_secs())
            .await;
        outputs.insert(0, CodeInterpreterOutput::Logs(OutputLogs { logs }));
        Ok((outputs, saved, out.succeeded()))
    }
}

#[async_trait::async_trait]
impl ToolExecutor for CodeInterpreterExecutor {
    fn definitions(&self) -> Vec<ToolDefinition> {
        Vec::new()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Hosted
    }

    fn can_execute(&self, tool: &ToolDefinition) -> bool {
        matches!(&tool.origin, ToolOrigin::Hosted(h) if h.kind == HostedKind::CodeInterpreter)
    }

    async fn execute(&self, ctx: &ToolContext, call: &ToolCall) -> Result<ToolResult, ToolError> {
        let hosted = ctx
            .hosted
            .as_ref()
            .ok_or_else(|| ToolError::Failed("not a hosted call".into()))?;
        let Tool::CodeInterpreter(tool) = &hosted.tool.tool else {
            return Err(ToolError::Failed("not a code_interpreter tool".into()));
        };
        let code = serde_json::from_str::<Value>(&call.arguments)
            .ok()
            .and_then(|v| v.get("code").and_then(Value::as_str).map(str::to_owned))
            .ok_or_else(|| ToolError::InvalidArguments("`code` (a string) is required".into()))?;
        // The loop has streamed the code (deltas and done) while the model
        // wrote it; nothing more to report before the run.
        let mut item = CodeInterpreterCall {
            id: hosted.item_id.clone(),
            code: Some(code.clone()),
            container_id: String::new(),
            outputs: None,
            status: CodeInterpreterCallStatus::Completed,
            files: None,
        };
        let ran = match self
            .container(ctx, &tool.container, hosted.tool.index)
            .await
        {
            Ok(id) => {
                item.container_id = id.clone();
                self.run(ctx, &id, &code).await
            }
            Err(e) => Err(e),
        };
        match ran {
            Ok((outputs, files, _)) => {
                item.outputs = Some(outputs);
                item.files = (!files.is_empty()).then_some(files);
            }
            Err(why) => {
                item.status = CodeInterpreterCallStatus::Failed;
                item.outputs = Some(vec![CodeInterpreterOutput::Logs(OutputLogs {
                    logs: format!("Error: {why}"),
                })]);
            }
        }
        Ok(ToolResult::hosted(Item::CodeInterpreterCall(item)))
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
