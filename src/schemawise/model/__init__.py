"""The optional local model: install (assemble + verify) and serve (loopback, lifecycle)."""

from __future__ import annotations

from schemawise.model.catalog import DEFAULT_SIZE, MODELS, ModelSpec, get_model
from schemawise.model.install import install_model, is_installed, model_path
from schemawise.model.serve import ServerState, ServerStatus, ensure_serving, start, status, stop

__all__ = [
    "DEFAULT_SIZE",
    "MODELS",
    "ModelSpec",
    "ServerState",
    "ServerStatus",
    "ensure_serving",
    "get_model",
    "install_model",
    "is_installed",
    "model_path",
    "start",
    "status",
    "stop",
]
