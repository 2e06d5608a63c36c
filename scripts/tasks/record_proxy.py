#!/usr/bin/env python3
"""A pass-through proxy between the gateway and llama-server that files each
non-streamed chat-completions exchange in the lab loop's memo (`memo.py`,
source `gateway`). It never answers from the memo: the gateway's runs are
real. Streamed requests and other routes pass through unrecorded.

    record_proxy.py UPSTREAM_BASE MEMO_PATH PORT    (UPSTREAM_BASE ends in /v1)
"""

import json
import os
import sys

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tasks.memo import Memo, key  # noqa: E402

UPSTREAM, MEMO, PORT = sys.argv[1].rstrip("/"), Memo(sys.argv[2]), int(sys.argv[3])
client = httpx.AsyncClient(timeout=None)


async def forward(request):
    body = await request.body()
    path = request.url.path.removeprefix("/v1")
    url = UPSTREAM + path + (("?" + request.url.query) if request.url.query else "")
    headers = {"content-type": request.headers.get("content-type", "application/json")}
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    record = path == "/chat/completions" and isinstance(parsed, dict) and not parsed.get("stream")
    if not record:
        r = await client.send(client.build_request(request.method, url, content=body, headers=headers),
                              stream=True)
        return StreamingResponse(r.aiter_raw(), status_code=r.status_code,
                                 headers={"content-type": r.headers.get("content-type", "")})
    r = await client.request(request.method, url, content=body, headers=headers)
    if r.status_code == 200:
        data = r.json()
        MEMO.put(key(UPSTREAM, parsed), {"message": data["choices"][0]["message"],
                                         "usage": data.get("usage") or {}}, "gateway")
    return Response(r.content, status_code=r.status_code,
                    media_type=r.headers.get("content-type", "application/json"))


app = Starlette(routes=[Route("/{p:path}", forward, methods=["GET", "POST"])])
uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
