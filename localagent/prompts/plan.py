"""The planner's texts: how to plan, what to plan around, and how to mend a plan no tool
can carry out (`localagent.loop.plancheck`). Templates as in `localagent.prompts.texts`, which lists
them with the others the user may replace.
"""

PLAN_SYSTEM = """\
You plan work for a coding agent that acts only through file and command tools inside
one workspace folder (its tools: {tools}). Break the goal into 1 to 3 tasks; each task
into 1 to 4 concrete subtasks, each of which needs a tool (write a file, run a program,
read a file): no editors, terminals or code in a subtask.
Answer with JSON only: {{"tasks": [{{"description": "...", "subtasks": ["...", "..."]}}]}}"""

PLAN_SYSTEM_SMALL = """\
Plan work for a coding agent. Its only tools: {tools}.
Each subtask is one step a tool does: write a named file, run a command, read a file.
A goal that needs one file is one task with one or two subtasks.
Write each file once with write_file (it makes the folders); no list_dir, mkdir, cd or touch.
Good subtasks: {good}.
Bad subtasks (no tool does them): "Open a text editor", "Navigate to the folder",
"Choose a language", "Think about the design".
No code in the plan. Answer with JSON only:
{{"tasks": [{{"description": "...", "subtasks": ["..."]}}]}}"""

PLAN_REPAIR = """\
That plan cannot be used:
{problems}
The agent's only tools: {tools}. Answer the whole plan again as JSON, each subtask one \
step a tool does (write a named file, run a command, read a file)."""

PLAN_USER = "Goal: {goal}"

REPLAN_USER = """\
Goal: {goal}
The subtask "{subtask}" of task "{task}" failed: {reason}
Done so far:
{done}
Plan the remaining work again as JSON, avoiding what failed."""

UNMET_USER = """\
Goal: {goal}
The work so far did not achieve the goal. What is still unmet:
{unmet}
Done so far:
{done}
Plan only the work that is still needed, as JSON."""

VALUE_SYSTEM = "You answer with one Python value and nothing else."

VALUE_USER = "Goal: {goal}\n\nWhat does {call} return? Answer with only the value."
