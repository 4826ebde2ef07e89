"""`schemawise serve --mcp` listed and called through the official SDK's client over stdio:
every tool once, and a refused run_sql whose reason reaches the client."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import psycopg
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from schemawise.db.embedded import database_url
from tests.integration.conftest import DATABASE

EXPECTED_TOOLS = {"list_sources", "find_tables", "get_context", "get_join_path", "check_sql",
                  "run_sql", "search_rows", "explain_error"}  # fmt: skip


def _payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if "ok" not in data else data
    return json.loads(result.content[0].text)


async def _session_calls(home: Path, source: str) -> dict[str, Any]:
    env = {**os.environ, "SCHEMAWISE_HOME": str(home)}
    env.pop("SCHEMAWISE_LLM", None)  # no model: `ask` is not offered
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "schemawise", "serve", "--mcp"], env=env
    )
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        seen["tools"] = {t.name: t for t in listed.tools}

        async def call(name: str, **arguments: Any) -> dict[str, Any]:
            return _payload(await session.call_tool(name, arguments))

        seen["list_sources"] = await call("list_sources")
        seen["find_tables"] = await call("find_tables", question="refunds per order",
                                         source=source)  # fmt: skip
        seen["find_nothing"] = await call("find_tables", question="zzqx blorf", source=source)
        seen["get_context"] = await call("get_context", question="refunds per order",
                                         source=source, budget=400)  # fmt: skip
        seen["follow_up"] = await call(
            "get_context", question="now split it by month", source=source,
            follows="how many shipped orders?",
        )  # fmt: skip
        seen["get_join_path"] = await call("get_join_path", source=source,
                                           tables=["shop.refunds", "shop.customers"])  # fmt: skip
        seen["one_table"] = await call("get_join_path", source=source,
                                       tables=["shop.refunds"])  # fmt: skip
        seen["check_sql"] = await call("check_sql", source=source,
                                       sql="SELECT nam FROM shop.customers")  # fmt: skip
        seen["run_sql"] = await call("run_sql", source=source,
                                     sql="SELECT count(*) AS n FROM shop.customers")  # fmt: skip
        seen["refused"] = await call("run_sql", source=source, sql="DELETE FROM shop.orders")
        seen["search_rows"] = await call("search_rows", source=source, table="shop.orders",
                                         query="anything")  # fmt: skip
        seen["explain_error"] = await call(
            "explain_error", source=source, sql="SELECT nam FROM shop.customers",
            error='column "nam" does not exist',
        )  # fmt: skip
        seen["unknown_source"] = await call("check_sql", source="nope", sql="SELECT 1")
    return seen


def test_every_tool_over_stdio(embedded_url: str, demo_source: str,
                               schemawise_home: Path) -> None:  # fmt: skip
    with psycopg.connect(database_url(embedded_url, DATABASE)) as conn:
        (orders_before,) = conn.execute("SELECT count(*) FROM shop.orders").fetchone() or (0,)
    seen = anyio.run(_session_calls, schemawise_home, demo_source)
    assert set(seen["tools"]) == EXPECTED_TOOLS  # no model configured: no `ask`
    for tool in seen["tools"].values():
        assert tool.description and tool.input_schema["type"] == "object"
    run_schema = seen["tools"]["run_sql"].input_schema["properties"]
    assert "read-only" in run_schema["sql"]["description"]
    assert demo_source in {s["source"] for s in seen["list_sources"]["sources"]}
    assert "shop.refunds" in {t["name"] for t in seen["find_tables"]["tables"]}
    assert "empty_reason" not in seen["find_tables"]
    assert seen["find_nothing"]["tables"] == []
    assert seen["find_nothing"]["empty_reason"].startswith("nothing in the index is about")
    assert seen["find_nothing"]["nearest"] == []  # one source asked: none to offer instead
    assert seen["get_context"]["context"]["source"] == demo_source
    follow_up = seen["follow_up"]["context"]
    assert follow_up["follows"] == "how many shipped orders?"
    assert "shop.orders" in [t["name"] for t in follow_up["tables"]]
    # As the command line's `path`: one table is no join path.
    assert seen["one_table"]["ok"] is False
    assert "at least two tables" in seen["one_table"]["error"]["message"]
    # Files a source was enriched with are named, not located on the server.
    for entry in seen["list_sources"]["sources"]:
        assert not any("/" in str(v) for v in (entry.get("options") or {}).values() if v)
        if entry["url"].startswith("sqlite:"):
            assert "/" not in entry["url"].removeprefix("sqlite:///")
    path = seen["get_join_path"]["join_path"]
    assert {"shop.refunds", "shop.customers", "shop.orders"} <= set(path["tables"])
    check = seen["check_sql"]["check"]
    assert not check["ok"] and check["errors"][0]["type"] == "unknown_column"
    ran = seen["run_sql"]
    assert ran["ran"] and ran["run"]["result"]["rows"] == [[400]]
    refused = seen["refused"]
    assert refused["ok"] and refused["ran"] is False  # a refusal is a result, not an error
    assert "DELETE" in refused["reason"] or "read" in refused["reason"].lower()
    assert refused["run"]["refused"][0]["hint"]
    # Row search is not enabled on this table: a structured error with a hint.
    assert seen["search_rows"]["ok"] is False and seen["search_rows"]["error"]["hint"]
    assert seen["explain_error"]["problem"]["type"] == "unknown_column"
    assert seen["unknown_source"]["ok"] is False
    assert "nope" in seen["unknown_source"]["error"]["message"]
    with psycopg.connect(database_url(embedded_url, DATABASE)) as conn:
        (orders_after,) = conn.execute("SELECT count(*) FROM shop.orders").fetchone() or (0,)
    assert orders_after == orders_before


def test_streamable_http_on_loopback(schemawise_home: Path, demo_source: str) -> None:
    import socket
    import subprocess
    import time

    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "SCHEMAWISE_HOME": str(schemawise_home)}
    env.pop("SCHEMAWISE_LLM", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "schemawise", "serve", "--mcp", "--http", str(port)], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip

    async def calls() -> tuple[set[str], dict[str, Any]]:
        url = f"http://127.0.0.1:{port}/mcp"
        async with (
            streamable_http_client(url) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            listed = {t.name for t in (await session.list_tools()).tools}
            ran = await session.call_tool(
                "run_sql", {"sql": "DROP TABLE shop.orders", "source": demo_source}
            )
            return listed, _payload(ran)

    try:
        deadline = time.monotonic() + 30
        while True:  # until the server listens
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.2)
        listed, refused = anyio.run(calls)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert listed == EXPECTED_TOOLS
    assert refused["ran"] is False and refused["reason"]
