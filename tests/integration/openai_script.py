"""A scripted HTTP server that speaks the OpenAI chat completions API on 127.0.0.1: the
assistant reaches it through the same provider code (pydantic-ai's OpenAI model, the openai
client, real HTTP) as any OpenAI-compatible endpoint. Replies are functions of the request:
the system text says which step is asking (write, answer, …), the user text what it knows."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[str, str], str]  # (system text, user text) → the assistant's content

ROLES = {
    "You write one": "write",
    "You state the answer": "answer",
    "A SQL query used a table": "research",
    "You judge which tables": "rank",
    "You choose the columns": "columns",
    "Classify the user's message": "route",
    "You help people find a database table": "describe",
    "You choose the database a question": "pick_source",
}


def role_of(system: str) -> str:
    return next((role for start, role in ROLES.items() if system.startswith(start)), "other")


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


class ScriptedChat:
    def __init__(self, replies: dict[str, Reply]) -> None:
        self.replies = replies
        self.requests: list[dict[str, Any]] = []

    def handle(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        messages = body.get("messages", [])
        system = "\n".join(
            _text(m["content"]) for m in messages if m["role"] in ("system", "developer")
        )
        user = "\n".join(_text(m["content"]) for m in messages if m["role"] == "user")
        role = role_of(system)
        content = self.replies[role](system, user) if role in self.replies else "?"
        prompt_tokens = (len(system) + len(user)) // 4
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4,
                      "total_tokens": prompt_tokens + len(content) // 4},
        }  # fmt: skip


@contextmanager
def serving(script: ScriptedChat) -> Iterator[str]:
    """The base URL (…/v1) of a server answering with the script."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            payload = json.dumps(script.handle(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def sql_json(sql: str) -> str:
    return json.dumps({"assumptions": [], "query": sql, "explanation": "", "tables": [],
                       "columns": []})  # fmt: skip


def first_number_answer(system: str, user: str) -> str:
    """An answer quoting the first number of the result rows it was sent."""
    rows = json.loads(user.splitlines()[-1])
    first = next(v for v in rows[0].values() if isinstance(v, int | float))
    return f"The answer is {first}."
