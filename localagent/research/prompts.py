"""The words of research mode, as data: rendered strictly (a missing value is an error);
placeholders are `{name}`, a literal brace is written doubled."""

from __future__ import annotations

PLAN_SYSTEM = """\
You plan research into a codebase. Split the question into at most 3 sub-questions, each
answerable by reading code (where something is defined, what calls it, how data flows).
Answer with JSON only: {{"sub_questions": ["...", ...]}}."""

PLAN_USER = "Question: {question}"

STEP_SYSTEM = """\
You research one sub-question about the codebase in the workspace, with read-only tools.
- search_code finds functions, methods and classes by words or identifiers.
- read_file(path, start_line, end_line) reads the code; get_callers and get_callees follow
  calls (each link says how sure it is: exact, by import, by name only, ambiguous).
- Cite code as path:line or path:start-end, only lines you have seen.
- When you know the answer to the sub-question (or after at most {steps} tool calls),
  call finish_step(findings) with what you found and the citations.{text_protocol}"""

TEXT_PROTOCOL = """

Your server has no native tool calling: call a tool by answering with one JSON object,
{{"name": "TOOL", "arguments": {{...}}}}, and nothing else. The tools:
{tools}"""

STEP_USER = """\
Question: {question}
Sub-question {number}: {sub_question}
Findings so far:
{findings}"""

STEP_NUDGE = "Call a tool, or finish_step(findings) if you know the answer to the sub-question."

STEP_LAST = "This is your last step: call finish_step(findings) now, with what you found."

REFINE_SYSTEM = """\
You decide whether research into a codebase is enough to answer the question. Answer with
JSON only: {{"decision": "FINISH"}} when the findings answer it, or
{{"decision": "CONTINUE", "sub_questions": ["..."]}} with at most 2 new sub-questions that
would fill the gaps."""

REFINE_USER = """\
Question: {question}
Findings:
{findings}"""

SYNTH_SYSTEM = """\
You answer a question about a codebase from research findings. Write the answer in
Markdown: direct, specific, citing the code for each claim as path:line or path:start-end.
Cite only lines named in the findings or the evidence list; do not invent locations."""

SYNTH_USER = """\
Question: {question}
Findings:
{findings}
Evidence the research retrieved or read (path:lines):
{evidence}"""

FIX_CITATIONS = """\
Fix your citations. These do not point at code the research retrieved or read:
{problems}
Rewrite the whole answer, citing only lines from the evidence list (or none)."""
