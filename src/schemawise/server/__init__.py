"""Servers: MCP (mcp.py)."""
