"""The words of research mode (`localagent ask`), as prompts a user can replace like the
others (`texts.PROMPTS` holds them); placeholders are `{name}`, a literal brace doubled."""

from __future__ import annotations

from localagent.prompts.templates import Prompt, spec

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

CITATION_NO_FILE = "{citation}: {path} is not a file of the workspace"

CITATION_PAST_END = "{citation}: {path} has {lines} lines"

CITATION_UNSEEN = "{citation}: these lines were never retrieved or read in this run"

STEP_NO_FINDINGS = "findings are empty; say what you found"

STEP_UNFINISHED = "the step ended after {calls} tool calls without finish_step"


RESEARCH: dict[str, Prompt] = {
    "research_plan_system": Prompt(
        PLAN_SYSTEM, "ask: how to split a question into sub-questions", spec()
    ),
    "research_plan_user": Prompt(PLAN_USER, "ask: the question to split", spec("question")),
    "research_step_system": Prompt(
        STEP_SYSTEM, "ask: how to research one sub-question", spec("text_protocol", "steps")
    ),
    "research_text_protocol": Prompt(
        TEXT_PROTOCOL, "ask: how to write a tool call without native tool calls", spec("tools")
    ),
    "research_step_user": Prompt(
        STEP_USER,
        "ask: the sub-question and the findings so far",
        spec("sub_question", "question number findings"),
    ),
    "research_step_nudge": Prompt(STEP_NUDGE, "ask: a reply without a tool call", spec()),
    "research_step_last": Prompt(STEP_LAST, "ask: the last step of a sub-question", spec()),
    "research_refine_system": Prompt(
        REFINE_SYSTEM, "ask: whether the findings answer the question", spec()
    ),
    "research_refine_user": Prompt(
        REFINE_USER, "ask: the question and the findings to judge", spec("findings", "question")
    ),
    "research_synth_system": Prompt(SYNTH_SYSTEM, "ask: how to write the answer", spec()),
    "research_synth_user": Prompt(
        SYNTH_USER,
        "ask: the findings and evidence to answer from",
        spec("question", "findings evidence"),
    ),
    "research_fix_citations": Prompt(
        FIX_CITATIONS, "ask: citations that point at no code seen", spec("problems")
    ),
    "research_citation_no_file": Prompt(
        CITATION_NO_FILE, "ask: one of problems: a citation of no file", spec("", "citation path")
    ),
    "research_citation_past_end": Prompt(
        CITATION_PAST_END,
        "ask: one of problems: a citation past the file's end",
        spec("", "citation path lines"),
    ),
    "research_citation_unseen": Prompt(
        CITATION_UNSEEN, "ask: one of problems: a citation of lines not seen", spec("", "citation")
    ),
    "research_step_no_findings": Prompt(
        STEP_NO_FINDINGS, "ask: result of finish_step without findings", spec()
    ),
    "research_step_unfinished": Prompt(
        STEP_UNFINISHED, "ask: a step's findings when its calls ran out", spec("", "calls")
    ),
}
