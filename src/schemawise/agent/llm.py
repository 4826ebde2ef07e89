"""Language models for the assistant: which one (a spec string), how to reach it (pydantic-ai),
and what each call cost (tokens, seconds) under a per-question budget.

This is the only module of `agent/` that talks to a model; everything else receives an `LLM`.
Tests hand it pydantic-ai's scripted models; a real one comes from a spec:

    openai:gpt-4o-mini                                  OPENAI_API_KEY (and OPENAI_BASE_URL)
    anthropic:claude-3-5-haiku-latest                   ANTHROPIC_API_KEY
    openai-compatible:qwen2.5-coder@http://127.0.0.1:8080/v1   vLLM, Ollama, llama.cpp, LM Studio
    local  |  local:0.5b                                the offline model (`schemawise model`)
    any other pydantic-ai model string (azure:…, ollama:…, groq:…)
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemawise.errors import ModelCallError, ModelNotConfiguredError, ModelUnreachableError

if TYPE_CHECKING:
    from pydantic_ai.models import Model

HOW_TO_CONFIGURE = (
    "Set SCHEMAWISE_LLM, e.g. SCHEMAWISE_LLM=openai:gpt-4o-mini (with OPENAI_API_KEY), "
    "SCHEMAWISE_LLM=anthropic:claude-3-5-haiku-latest (with ANTHROPIC_API_KEY), "
    "SCHEMAWISE_LLM=openai-compatible:MODEL@http://127.0.0.1:8080/v1 for vLLM, Ollama, "
    "llama.cpp or LM Studio, or run offline with no key: `schemawise model install` then "
    "SCHEMAWISE_LLM=local. The same keys go under [llm] in config.toml in the schemawise home "
    "(~/.local/share/schemawise, or $SCHEMAWISE_HOME), or in the file $SCHEMAWISE_CONFIG names."
)


@dataclass(frozen=True)
class ModelSpec:
    """A parsed SCHEMAWISE_LLM value."""

    provider: str
    name: str
    base_url: str | None = None

    @property
    def text(self) -> str:
        if self.provider == "openai-compatible":
            return f"openai-compatible:{self.name}@{self.base_url}"
        return f"{self.provider}:{self.name}"

    @property
    def small(self) -> bool:
        """A model run on this machine: deterministic ranking measures better for it (and a
        model call costs seconds), so the ranker and router do not ask it."""
        return self.provider == "local"


def parse_spec(text: str) -> ModelSpec:
    text = text.strip()
    if not text:
        raise ModelNotConfiguredError("The model setting is empty.", HOW_TO_CONFIGURE)
    if text == "local":
        return ModelSpec("local", "1.5b")
    provider, sep, rest = text.partition(":")
    if not sep or not rest:
        raise ModelNotConfiguredError(
            f"'{text}' is not a model setting: it needs a provider and a model, PROVIDER:MODEL.",
            HOW_TO_CONFIGURE,
        )
    if provider == "openai-compatible":
        name, at, url = rest.partition("@")
        if not at or not url.startswith(("http://", "https://")) or not name:
            raise ModelNotConfiguredError(
                f"'{text}' does not say where the endpoint is.",
                "Write it as openai-compatible:MODEL@http://HOST:PORT/v1",
            )
        return ModelSpec(provider, name, url.rstrip("/"))
    if provider == "local" and rest not in ("1.5b", "0.5b"):
        raise ModelNotConfiguredError(
            f"No local model '{rest}'.", "Use local (1.5b) or local:0.5b."
        )
    return ModelSpec(provider, rest)


def config_path() -> Path:
    """The config file: SCHEMAWISE_CONFIG, else config.toml in the schemawise home."""
    override = os.environ.get("SCHEMAWISE_CONFIG")
    if override:
        return Path(override)
    from schemawise.config import home_dir

    return home_dir() / "config.toml"


def _config_llm() -> dict[str, Any]:
    path = config_path()
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ModelNotConfiguredError(
            f"The config file {path} is not valid TOML: {exc}.",
            'Its model section reads: [llm]\nmodel = "openai:gpt-4o-mini"',
        ) from None
    section = data.get("llm", {})
    return section if isinstance(section, dict) else {}


def configured_spec(role: str = "model") -> ModelSpec | None:
    """The configured model: SCHEMAWISE_LLM (or SCHEMAWISE_LLM_FAST for role "fast", the
    cheaper one for ranking and routing), else the config file's [llm] section."""
    env = "SCHEMAWISE_LLM" if role == "model" else "SCHEMAWISE_LLM_FAST"
    value = os.environ.get(env) or _config_llm().get(role)
    return parse_spec(str(value)) if value else None


def build_model(spec: ModelSpec) -> Model:
    """The pydantic-ai model for a spec; nothing is sent until the first call."""
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.profiles.openai import OpenAIModelProfile
    from pydantic_ai.providers.openai import OpenAIProvider

    # The reply cap goes out as `max_tokens`, which every OpenAI-compatible server reads;
    # `max_completion_tokens` (pydantic-ai's default) is ignored by llama.cpp's server, where
    # a model that never stops then generates to the end of its context for a quarter of an
    # hour after the call timed out, and every question after it waits.
    compatible = OpenAIModelProfile(openai_chat_supports_max_completion_tokens=False)
    if spec.provider == "local":
        from schemawise.model.serve import ensure_serving

        base_url = ensure_serving(spec.name)
        provider = OpenAIProvider(base_url=base_url, api_key="none")
        return OpenAIChatModel("local", provider=provider, profile=compatible)
    if spec.provider == "openai-compatible":
        key = os.environ.get("SCHEMAWISE_LLM_API_KEY") or _config_llm().get("api_key") or "none"
        provider = OpenAIProvider(base_url=spec.base_url, api_key=str(key))
        return OpenAIChatModel(spec.name, provider=provider, profile=compatible)
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import infer_model

    try:
        return infer_model(spec.text)
    except UserError as exc:
        raise ModelNotConfiguredError(f"{spec.text}: {exc}", HOW_TO_CONFIGURE) from None


@dataclass
class Budget:
    """What one question may spend: model calls, tokens, and seconds per call."""

    max_calls: int = 10
    max_tokens: int = 80_000
    call_timeout: float = 180.0
    # A reply is one JSON object or a few sentences: a cap keeps a rambling model from
    # spending a local model's minutes (24 tokens/s on 2 cores) on prose nobody reads.
    max_reply_tokens: int = 700


@dataclass
class CallRecord:
    stage: str  # route, pick_source, rank, rank_columns, write, fix, research, answer
    input_tokens: int
    output_tokens: int
    seconds: float
    ok: bool
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "seconds": round(self.seconds, 3),
            "ok": self.ok,
            "error": self.error,
        }


@dataclass
class LLM:
    """A model with a budget and a record of its calls. One per question (`fresh()`)."""

    model: Model
    name: str = "model"
    small: bool = False
    budget: Budget = field(default_factory=Budget)
    calls: list[CallRecord] = field(default_factory=list)

    @classmethod
    def from_spec(cls, spec: ModelSpec, budget: Budget | None = None) -> LLM:
        return cls(build_model(spec), spec.text, spec.small, budget or Budget())

    def fresh(self) -> LLM:
        """The same model with an empty record: a new question's budget."""
        return LLM(self.model, self.name, self.small, self.budget)

    def each_call_fresh(self) -> EachCallFresh:
        """This model with a question's budget for every call: for a benchmark that asks it
        once per question through a hook made once."""
        return EachCallFresh(self)

    @property
    def tokens(self) -> int:
        return sum(c.input_tokens + c.output_tokens for c in self.calls)

    def usage(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "calls": len(self.calls),
            "input_tokens": sum(c.input_tokens for c in self.calls),
            "output_tokens": sum(c.output_tokens for c in self.calls),
            "seconds": round(sum(c.seconds for c in self.calls), 3),
            "per_call": [c.to_dict() for c in self.calls],
        }

    def run(
        self,
        stage: str,
        instructions: str,
        prompt: str,
        *,
        output_type: Any = str,
        tools: Sequence[Any] = (),
        deps: Any = None,
        max_requests: int = 1,
    ) -> Any:
        """One agent run (one request, more when it uses tools), recorded and bounded."""
        from pydantic_ai import Agent
        from pydantic_ai.settings import ModelSettings
        from pydantic_ai.usage import UsageLimits

        calls_left = self.budget.max_calls - len(self.calls)
        tokens_left = self.budget.max_tokens - self.tokens
        if calls_left <= 0 or tokens_left <= 0:
            raise ModelCallError(
                f"The question's model budget is spent ({len(self.calls)} calls, "
                f"{self.tokens:,} tokens).",
                "Raise it with --max-calls / --max-tokens, or ask a narrower question.",
            )
        agent: Agent[Any, Any] = Agent(
            self.model, instructions=instructions, output_type=output_type, tools=tools,
            retries=1, deps_type=object,
        )  # fmt: skip
        started = time.perf_counter()
        limits = UsageLimits(
            request_limit=min(max_requests + 1, calls_left), total_tokens_limit=tokens_left
        )
        try:
            # Temperature 0: the same question gets the same SQL (evaluations repeat).
            settings = ModelSettings(temperature=0.0, max_tokens=self.budget.max_reply_tokens)
            result = _thread_loop().run_until_complete(
                agent.run(prompt, deps=deps, usage_limits=limits, model_settings=settings,
                          timeout=self.budget.call_timeout)
            )  # fmt: skip
        except Exception as exc:  # every provider failure becomes one classified error
            self.calls.append(CallRecord(stage, 0, 0, time.perf_counter() - started, False,
                                         type(exc).__name__))  # fmt: skip
            raise _call_error(exc, self.name, local=self.name.startswith("local")) from exc
        used = result.usage
        self.calls.append(
            CallRecord(stage, used.input_tokens, used.output_tokens,
                       time.perf_counter() - started, True)
        )  # fmt: skip
        return result.output


@dataclass
class EachCallFresh:
    """A model whose every call has a question's budget, its calls all recorded: what a
    benchmark passes to a hook made once and called once per question."""

    llm: LLM
    calls: list[CallRecord] = field(default_factory=list)

    def run(self, stage: str, instructions: str, prompt: str, **options: Any) -> Any:
        fresh = self.llm.fresh()
        try:
            return fresh.run(stage, instructions, prompt, **options)
        finally:
            self.calls.extend(fresh.calls)


_LOOPS = threading.local()


def _thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's event loop for model calls, held here and closed at exit. (run_sync
    would use the thread's current loop, which a later asyncio.run() in the same thread
    unsets and leaves to the garbage collector with its sockets open.)"""
    loop: asyncio.AbstractEventLoop | None = getattr(_LOOPS, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _LOOPS.loop = loop
        atexit.register(loop.close)
    return loop


# What providers raise when nothing answered at all (refused, reset, server gone): a run of
# many questions stops on these instead of counting every question as failed.
UNREACHABLE = frozenset(
    {"ModelConnectionError", "APIConnectionError", "ConnectError", "RemoteProtocolError",
     "ReadError", "ConnectionRefusedError", "ConnectionResetError"}
)  # fmt: skip


def call_unreachable(call: dict[str, Any]) -> bool:
    """Whether a recorded call (usage's per_call entry) failed because nothing answered."""
    return not call.get("ok", True) and call.get("error") in UNREACHABLE


def _call_error(exc: Exception, name: str, *, local: bool = False) -> ModelCallError:
    from pydantic_ai.exceptions import ModelHTTPError, UnexpectedModelBehavior, UsageLimitExceeded

    if isinstance(exc, UsageLimitExceeded):
        return ModelCallError(f"The model budget ran out: {exc}.", "Raise --max-calls.")
    if isinstance(exc, ModelHTTPError):
        return ModelCallError(
            f"{name} answered HTTP {exc.status_code}: {str(exc.body)[:200]}",
            "Check the model name and the API key; 429 means wait or lower the rate.",
        )
    if isinstance(exc, UnexpectedModelBehavior):
        return ModelCallError(
            f"{name} did not answer in the expected form: {exc}.",
            "A larger model follows the format more reliably.",
        )
    if isinstance(exc, TimeoutError):
        return ModelCallError(f"{name} did not answer in time.", "Raise the call timeout.")
    if local:
        from schemawise.model.serve import death_report

        died = death_report()
        if died is not None:
            return ModelUnreachableError(f"{name} could not be reached. {died}", died.hint)
    kind = ModelUnreachableError if type(exc).__name__ in UNREACHABLE else ModelCallError
    return kind(
        f"{name} could not be reached: {type(exc).__name__}: {exc}",
        "Check that the endpoint is running and the URL and key are right. " + HOW_TO_CONFIGURE,
    )


def require_llm(budget: Budget | None = None) -> LLM:
    """The configured model, or an error that says how to configure one."""
    spec = configured_spec()
    if spec is None:
        raise ModelNotConfiguredError("No language model is configured.", HOW_TO_CONFIGURE)
    return LLM.from_spec(spec, budget)


def optional_llm(budget: Budget | None = None) -> LLM | None:
    spec = configured_spec()
    return LLM.from_spec(spec, budget) if spec else None
