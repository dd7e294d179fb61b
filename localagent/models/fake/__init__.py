"""A scripted stand-in for a model server, for tests, demos and CI.

It speaks enough of the Ollama HTTP API (`/`, `/api/version`, `/api/tags`,
`/api/ps`, `/api/show`, `/api/chat`, `/api/embed`) for the official `ollama` Python client,
and of the OpenAI-compatible API (`/v1/models`, `/v1/chat/completions`, `/v1/embeddings`,
llama.cpp's `/props`; see `openai.py` here) for the `openai` backend, and
answers chat requests from a scenario file instead of a model, so the whole agent
can run end to end on a machine with no model server and no GPU.

    python -m localagent.models.fake SCENARIO.json [--host 127.0.0.1] [--port 11434]
                                     [--log requests.jsonl] [--port-file port.txt]

`--port 0` picks a free port; `--port-file` then receives the port number
(written atomically once the server listens). `--log` appends one JSON line
per chat request: `seq`, `ts`, `path`, `status`, `answered_by` (`"rules[2]"`,
`"replies[0]"`, `"verdict"`, `"default"`, `"exhausted"`, or null when the request was
refused before a reply was chosen) and the request body as `request`.
SIGTERM or Ctrl-C stops the server with exit code 0.

The package ships a demo, `localagent/scenarios/hello.json`: a model that
plans one task, writes hello.py, runs `python hello.py` and marks each
subtask complete. Serve it on the default port and run the agent against it:

    python -m localagent.models.fake localagent/scenarios/hello.json
    localagent start "Write hello.py that prints Hello, world!" --foreground

Scenario file
-------------
A JSON object; every key is optional:

    {
      "models": [{"name": "gpt-oss:20b", "capabilities": ["completion", "tools", "thinking"],
                  "context_length": 131072, "family": "gptoss"}],
      "version": "0.12.3",
      "rules": [{"match": "REGEX", "in": "all", "kind": "any", "times": 1, "reply": REPLY}],
      "replies": [REPLY, ...],
      "default": REPLY,
      "verdict": REPLY,
      "llama_cpp": false, "response_format": true, "api_key": "", "prompt_cache": false,
      "slots": 1
    }

`prompt_cache` makes every chat reply carry llama.cpp's `timings` (`cache_n`, `prompt_n`)
as a server with one slot would count them: the tokens (characters / 4) of the request's
tools and messages shared from the start with the previous request came from the cache
(see `cache.py`); `prompt_eval_count` is then the whole prompt.

`llama_cpp` serves llama.cpp's `/props` (its `total_slots` is `slots`) and its `meta`
(`n_params`, from the model's `parameter_size`) in `/v1/models`; `lm_studio` serves LM Studio's
`/api/v0/models/ID` and `/api/v1/models` (`params_string`), and leaves the context
size out of `/v1/models`, as LM Studio does; `response_format: false` refuses OpenAI
structured output;
`api_key` makes the /v1 endpoints demand that key; `embed_body` answers every
embedding request with exactly that text; `embed_delay` waits that many seconds before
answering each embedding request (a slow index build).
`models` lists the pulled models (default: `gpt-oss:20b` as above). A model
needs only `name`; `capabilities` defaults to `["completion", "tools"]`,
`context_length` to 32768, and `family`, `parameter_size`,
`quantization_level` are made up when absent. A name without a tag means
`NAME:latest`, as in Ollama. Chat requests for an unlisted model get 404,
requests with `tools` for a model without the `tools` capability get 400
"... does not support tools", and `think` for a model without `thinking`
gets 400 "... does not support thinking", with Ollama's own wording. Embedding
requests for a listed model get `toy_embedding` vectors (hashed words, deterministic).

Each chat request is answered by the first of:

1. the first rule that fits: its `kind` matches (`"verify"`: the request's
   `format` schema has a `verdict` property, i.e. a goal verdict; `"plan"`: any
   other request with a `format`, i.e. structured output; `"chat"`: it has
   none; `"any"`, the default: chat and plan), its `match` regex (Python
   syntax, `.` matches newlines; default `""` matches everything) is found in the text named by `in`
   (`"all"`, the default: the content of every message joined by blank
   lines; `"last"`: the last message; `"system"`: the first system
   message), and it has uses left (`times`; default unlimited). In a rule's
   reply, `$1`, `$2`, `${name}` in any string, tool-call arguments included,
   are replaced by the regex groups; naming a group the regex lacks is an
   error when the scenario is loaded.
2. for a verdict request: `verdict` (default: VERIFIED, no unmet requirements),
   so scenarios that do not care about verification need not script it;
3. the next unused entry of `replies`, in order;
4. `default`; when it is null or absent the answer is HTTP 500
   `{"error": "scenario exhausted"}`.

A REPLY is an object; every key is optional:

    content            the model's text (for a plan request: the plan as JSON text)
    thinking           the thinking text
    tool_calls         [{"name": "write_file", "arguments": {"path": "a.py", ...}}];
                       `arguments` may be a JSON string, passed through as given
                       (the real client then fails validation, as with some models)
    prompt_eval_count  tokens reported for the prompt (default: message characters / 4)
    timings            llama.cpp's figures, sent as they are beside the usage (OpenAI) or in
                       the last line (Ollama, as a proxy in front of llama.cpp may)
    eval_count         tokens reported for the answer (default: its characters / 4)
    done_reason        default "stop"
    delay              seconds to wait before answering
    status, error      answer with this HTTP status (default 500) and {"error": error}
    drop               true: a stream sends about half its chunks, then the connection
                       is closed mid-body; otherwise it is closed with no response
    error_line         a stream sends about half its chunks, then {"error": error_line}
                       as Ollama does; without streaming: HTTP 500 with that error
    chunks             how many pieces streamed content and thinking are cut into (3)
    chunk_delay        seconds to wait between streamed chunks
    endless            true: stream thinking chunks (every chunk_delay, default 0.05 s)
                       until the client hangs up, as a model that never stops does
    endless_line       true: stream one line that never ends instead of the reply (64 KB
                       pieces, every chunk_delay, default none) until the client hangs up
    drip               true: send a stream's bytes one at a time, every chunk_delay
                       (default 0.05 s)
    keepalive          send this many keep-alives first (an SSE comment, a blank NDJSON
                       line), every chunk_delay (default 0.05 s)
    whole              true: answer with one JSON body though the request asked to stream
    body               answer with exactly this text instead (status 200 unless
                       `body_status` says otherwise; `content_type` default text/html):
                       a proxy's page, garbage, a shape that is not Ollama's
"""

from localagent.models.fake.command import main
from localagent.models.fake.ollama import toy_embedding
from localagent.models.fake.scenario import (
    DEFAULT_MODEL,
    VERIFIED,
    load_scenario,
    validate_scenario,
)
from localagent.models.fake.server import FakeServer

__all__ = [
    "DEFAULT_MODEL",
    "VERIFIED",
    "FakeServer",
    "load_scenario",
    "main",
    "toy_embedding",
    "validate_scenario",
]
