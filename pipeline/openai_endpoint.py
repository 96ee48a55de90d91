"""What the chat model (analyst/model.py) and the embeddings (knowledge/openai_embeddings.py)
share about an OpenAI-compatible endpoint: timeouts and retries, the key, which errors a call can
raise, and how they become one `AnalystError` without key, prompt or answer text.

It sits below both packages, so the knowledge base can call an endpoint without importing the
analyst (which itself imports the knowledge base).
"""
from __future__ import annotations

import httpx
import openai
from langchain_core.exceptions import LangChainException, ModelRefusalError, OutputParserException
from pydantic import SecretStr, ValidationError

from pipeline import config
from pipeline.errors import AnalystError

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 2
PLACEHOLDER_KEY = "not-needed"  # local endpoints (vLLM, Ollama...) take any key; the client needs one

# What a model call can raise: the SDK's and the transport's errors, langchain's (refusals,
# parser errors), the validation of the answer (pydantic; json and "no parsed field" are
# ValueErrors), and what the SDK and langchain raise on a malformed 200 response from an
# OpenAI-compatible server (no choices: IndexError; a null message: AttributeError/TypeError).
# Only third-party code runs inside the call; nothing else is caught.
MALFORMED_RESPONSE_ERRORS: tuple[type[BaseException], ...] = (LookupError, AttributeError, TypeError)
MODEL_ERRORS: tuple[type[BaseException], ...] = (
    openai.OpenAIError, httpx.HTTPError, LangChainException, ValidationError, ValueError,
    *MALFORMED_RESPONSE_ERRORS,
)


def api_key(base_url: str | None) -> SecretStr:
    """The key to send, read now: OPENAI_API_KEY, or a placeholder for a configured local endpoint."""
    key = config.secret("OPENAI_API_KEY") or (PLACEHOLDER_KEY if base_url else None)
    if not key:
        raise AnalystError("OPENAI_API_KEY is not set and no OPENAI_BASE_URL is configured")
    return SecretStr(key)


# the endpoint's own error text is left out: a 401 body may echo part of the key
_STATUS_HINTS = {401: " (check OPENAI_API_KEY)", 403: " (check OPENAI_API_KEY)",
                 404: " (check INCIDENTIQ_MODEL and OPENAI_BASE_URL)"}


def analyst_error(exc: BaseException, *, timeout: float, retries: int) -> AnalystError:
    """The AnalystError for a failed endpoint call: short, without key, prompt or answer text."""
    if isinstance(exc, openai.APITimeoutError):
        message = f"model request timed out after {timeout:g}s ({retries} retries)"
    elif isinstance(exc, openai.APIStatusError):
        again = f" after {retries} retries" if exc.status_code >= 500 or exc.status_code == 429 else ""
        message = f"model endpoint answered HTTP {exc.status_code}{again}{_STATUS_HINTS.get(exc.status_code, '')}"
    elif isinstance(exc, openai.APIConnectionError):
        message = f"could not connect to the model endpoint ({retries} retries)"
    elif isinstance(exc, ModelRefusalError):
        message = "model refused to answer"
    elif isinstance(exc, ValidationError) and any(e["type"] == "json_invalid" for e in exc.errors()):
        message = "model answer could not be parsed (invalid JSON)"
    elif isinstance(exc, ValidationError):
        message = f"model answer failed validation: {_problems(exc)}"
    elif isinstance(exc, MALFORMED_RESPONSE_ERRORS):
        message = f"model endpoint sent a malformed response ({type(exc).__name__})"
    elif isinstance(exc, httpx.HTTPError):
        message = f"model endpoint transport error ({type(exc).__name__})"
    elif isinstance(exc, (OutputParserException, ValueError)):
        # json errors and "no parsed field" are ValueErrors; their text quotes the answer
        message = f"model answer could not be parsed ({type(exc).__name__})"
    else:
        message = f"model call failed ({type(exc).__name__})"
    return AnalystError(_scrub(message))


def _problems(exc: ValidationError) -> str:
    # field and reason only: pydantic's text quotes the input (the model's answer) and, for a
    # category, all twenty allowed values
    parts = []
    for e in exc.errors()[:3]:
        where = ".".join(str(p) for p in e["loc"]) or "answer"
        reason = "not an allowed value" if e["type"] == "literal_error" else _clip(e["msg"], 100)
        parts.append(f"{where}: {reason}")
    return "; ".join(parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 15] + " …[truncated]"


def _scrub(text: str) -> str:
    # belt and braces: none of the messages above quotes the key, but an endpoint's echo might
    key = config.secret("OPENAI_API_KEY")
    return text.replace(key, "***") if key and len(key) >= 6 else text
