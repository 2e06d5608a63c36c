"""Task success against a real model: the task set, three ways to run it
(Windlass's gateway, the OpenAI Agents SDK's loop, the lab loop), the
per-task record with its failure class, and the summary table.

Entry: `scripts/task_success.py` (one command for every runner), driven by
`scripts/task-success.sh`.
"""
