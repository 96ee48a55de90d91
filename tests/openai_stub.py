"""A real HTTP server on loopback that speaks enough of the OpenAI API for the model-path tests.

It answers POST /v1/chat/completions with a proper `chat.completion`: a `tool_calls` entry when
the request binds a tool (function calling), JSON content when it asks for
`response_format: {"type": "json_schema"}`. Answers are scripted per schema name (the tool's or
the json_schema's name); faults (an HTTP status, a delay, raw content, a refusal) are queued
one-shot or set as the standing behaviour. POST /v1/embeddings returns deterministic vectors.
Every request is kept (path, headers, body) so tests can read what the client sent.
"""
from __future__ import annotations

import base64
import hashlib
import json
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EMBEDDING_DIM = 16


@dataclass(frozen=True)
class Reply:
    """How the server answers one chat request; the defaults answer the scripted structure."""

    status: int = 200
    delay: float = 0.0
    content: str | None = None  # raw assistant content instead of the scripted answer
    refusal: str | None = None
    answer: dict | None = None  # overrides the scripted answer for this request
    body: object | None = None  # a whole response body, sent as is (malformed responses)
    echo_auth: bool = False  # an error body that quotes the request's Authorization header


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict  # lower-cased names
    body: dict

    @property
    def schema_name(self) -> str | None:
        return schema_name(self.body)

    @property
    def mode(self) -> str:
        """`tools` or `json_schema` (or `plain`): how the client asked for structure."""
        if self.body.get("tools"):
            return "tools"
        if (self.body.get("response_format") or {}).get("type") == "json_schema":
            return "json_schema"
        return "plain"

    def text(self) -> str:
        """All message contents of the request, joined."""
        return "\n".join(str(m.get("content") or "") for m in self.body.get("messages", []))


def schema_name(body: dict) -> str | None:
    if body.get("tools"):
        return body["tools"][0]["function"]["name"]
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    return None


def fake_embedding(text: str) -> list[float]:
    """A deterministic unit vector per text: equal texts embed equally."""
    digest = hashlib.sha256(text.encode()).digest()
    values = [(b - 127.5) / 127.5 for b in digest[:EMBEDDING_DIM]]
    norm = sum(v * v for v in values) ** 0.5 or 1.0
    return [v / norm for v in values]


class OpenAIStub:
    """The loopback server; use as a context manager or call start()/stop()."""

    def __init__(self):
        self.answers: dict[str, dict | Callable[[Request], dict]] = {}
        self.standing = Reply()
        self.queued: deque[Reply] = deque()
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "OpenAIStub":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "OpenAIStub":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def queue(self, *replies: Reply) -> None:
        """Replies used once each, in order, before the standing behaviour."""
        with self._lock:
            self.queued.extend(replies)

    def chat_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _next_reply(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            return self.queued.popleft() if self.queued else self.standing

    def chat_completion(self, request: Request, reply: Reply) -> dict:
        name = request.schema_name
        message: dict = {"role": "assistant", "content": None}
        finish = "stop"
        if reply.refusal is not None:
            message["refusal"] = reply.refusal
        elif reply.content is not None:
            if request.mode == "tools":
                message["tool_calls"] = [_tool_call(name, reply.content)]
                finish = "tool_calls"
            else:
                message["content"] = reply.content
        else:
            answer = reply.answer if reply.answer is not None else self.answers.get(name or "", {})
            if callable(answer):  # a scripted "model" that reads the prompt
                answer = answer(request)
            if request.mode == "tools":
                message["tool_calls"] = [_tool_call(name, json.dumps(answer))]
                finish = "tool_calls"
            else:
                message["content"] = json.dumps(answer)
        return {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": request.body.get("model", "test-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }


def _tool_call(name: str | None, arguments: str) -> dict:
    return {"id": "call_1", "type": "function", "function": {"name": name or "answer", "arguments": arguments}}


def _embeddings(body: dict) -> dict:
    inputs = body.get("input")
    texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
    data = []
    for i, text in enumerate(texts):
        vector = fake_embedding(text if isinstance(text, str) else json.dumps(text))
        if body.get("encoding_format") == "base64":
            encoded: object = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        else:
            encoded = vector
        data.append({"object": "embedding", "index": i, "embedding": encoded})
    return {"object": "list", "data": data, "model": body.get("model", "test-embedding"),
            "usage": {"prompt_tokens": 1, "total_tokens": 1}}


def _handler_for(stub: OpenAIStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args) -> None:  # noqa: A002 - keep test output quiet
            return

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            request = Request(path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, body=body)
            reply = stub._next_reply(request)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.status != 200:
                message = f"bad credentials: {self.headers.get('Authorization')}" if reply.echo_auth else "injected failure"
                self._send(reply.status, {"error": {"message": message, "type": "server_error"}})
            elif reply.body is not None:
                self._send(200, reply.body)
            elif self.path.endswith("/embeddings"):
                self._send(200, _embeddings(body))
            elif self.path.endswith("/chat/completions"):
                self._send(200, stub.chat_completion(request, reply))
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def _send(self, status: int, payload: object) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test): nothing to answer

    return Handler
