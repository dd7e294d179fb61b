"""The refusals of the file tools (paths, reading, writing, editing, searching, stored
outputs) and of the research tools: what the model reads when a call cannot be done.
The tools raise them by name (`ToolError.of(NAME, ...)`); `texts.PROMPTS` names each
one, so a user can replace it. Placeholders are `{name}`, all optional; a literal brace is
written doubled. Paths and patterns come quoted as Python writes a string."""

from __future__ import annotations

from localagent.prompts.templates import Prompt, spec


def refusal(text: str, about: str, values: str = "") -> Prompt:
    said = about if about.startswith("result") else "refusal: " + about
    return Prompt(text, said, spec("", values))


PATHS = {
    "path_empty": refusal(
        "path is empty; use '.' for the workspace or a path relative to it", "an empty path"
    ),
    "path_nul": refusal("path {path} contains a NUL character", "a path with a NUL", "path"),
    "outside_workspace": refusal(
        "path {path} is outside the workspace; use a path relative to it",
        "a path that leaves the workspace",
        "path",
    ),
    "path_unresolvable": refusal(
        "path {path} cannot be resolved: {problem}",
        "a path the system cannot resolve",
        "path problem",
    ),
    "path_in_journal": refusal(
        "path {path} is inside {journal}/, the agent's own journal; tools may not touch it",
        "a path inside the journal folder",
        "path journal",
    ),
    "bad_name": refusal(
        "path {path} {problem}", "a path with a name the system cannot hold", "path problem"
    ),
    "name_too_long": refusal(
        "path {path} has a name of {size} bytes ({name}); file and folder names may be at "
        "most {limit} bytes, use a shorter name",
        "a file or folder name too long",
        "path size name limit",
    ),
    "path_too_long": refusal(
        "path {path} is {size} bytes long; paths may be at most {limit} bytes, use a shorter one",
        "a path too long",
        "path size limit",
    ),
    "no_such_path": refusal(
        "{path} does not exist; use list_dir to see what exists",
        "a path to move or search that does not exist",
        "path",
    ),
    "not_file_or_folder": refusal(
        "{path} is not a regular file or folder", "a search start that is neither", "path"
    ),
    "not_regular_unread": refusal(
        "{path} is not a regular file; it is not read", "a file that is a device or a pipe", "path"
    ),
    "changed_after_check": refusal(
        "{path} or a folder on its way is now a link or not a regular file (it changed after "
        "the path was checked); it was left alone",
        "a path that changed while a tool used it",
        "path",
    ),
}

FILES = {
    "folder_missing": refusal(
        "folder {path} does not exist; list_dir('.') shows the root",
        "list_dir of no folder",
        "path",
    ),
    "file_not_folder": refusal(
        "{path} is a file, not a folder; use read_file to read it", "list_dir of a file", "path"
    ),
    "end_before_start": refusal(
        "end_line {end_line} is before start_line {start_line}",
        "a line range that ends before it starts",
        "end_line start_line",
    ),
    "no_such_file": refusal(
        "file {path} does not exist; use list_dir to see what exists", "read of no file", "path"
    ),
    "function_not_file": refusal(
        "file {path} does not exist: {name} is a function (or class) of {owner}, not a file; "
        "read or change it in {owner}",
        "read or edit of a file named after a function another file defines",
        "path name owner",
    ),
    "folder_not_readable": refusal(
        "{path} is a folder, not a file; use list_dir to list it", "read_file of a folder", "path"
    ),
    "not_regular": refusal("{path} is not a regular file", "read_file of a device or pipe", "path"),
    "binary_no_lines": refusal(
        "{path} is a binary file; it has no lines to show", "lines of a binary file", "path"
    ),
    "file_past_end": refusal(
        "{path} has {total} lines; start_line {start_line} is past its end",
        "a start line past a file's end",
        "path total start_line",
    ),
    "folder_not_file": refusal(
        "{path} is a folder; give the path of a file inside it", "a write to a folder", "path"
    ),
    "file_on_the_way": refusal(
        "{folder} is a file, not a folder, so {path} cannot be written in it: write the "
        "file under another folder name, or replace {folder} with a folder first",
        "a write whose path goes through a file as if it were a folder",
        "folder path",
    ),
    "placeholder_content": refusal(
        "`{text}` is the example's placeholder, not the content of {path}: send the file's "
        "real text in content (for a Python file, its code)",
        "a write whose content is only an example's placeholder",
        "text path",
    ),
    "write_folder_missing": refusal(
        "folder {folder} does not exist; pass create_dirs=true to create it",
        "write_file into a missing folder (create_dirs=false)",
        "folder",
    ),
}

EDITS = {
    "old_empty": refusal(
        "old is empty; give the exact text to replace (write_file writes a file)",
        "replace_in_file with an empty old",
    ),
    "count_below_one": refusal("count must be at least 1, got {count}", "a count below 1", "count"),
    "old_found_often": refusal(
        "old occurs {found} times in {path} (at lines {lines}), not {count}; add surrounding "
        "lines to old to make it unique, or pass count={found}",
        "old found more or fewer times than count",
        "found path lines count",
    ),
    "old_not_found": refusal(
        "old was not found in {path} (it must match exactly, spaces and indentation "
        "included; read_file shows the current text){nearest}{now}",
        "old not in the file (nearest: old_nearest_lines, or empty; now: python_now)",
        "path nearest now",
    ),
    "old_made_already": refusal(
        "old was not found in {path}, and new already is (line {line}): if this is your "
        "earlier edit, it is made already; do not make it again{now}",
        "old not in the file and new in it: an edit repeated",
        "path line now",
    ),
    "write_aliases_imports": refusal(
        "not written: {path} defines {users}, and this content makes {aliases} other names "
        "for {target}, not functions of their own: called as they are called now, they "
        "would break. Keep each a function whose code calls {target}, one at a time: "
        "write_file {file} with only `{header}:` and its code changed to call {target} as "
        "the content; it takes the place of the one the file has, and the rest stays. It is "
        "now:\n{text}",
        "a rewrite that makes what other files import aliases of another function, refused",
        "path users aliases target file header text",
    ),
    "write_drops_imports": refusal(
        "not written: {path} defines {users}, and this content does not; written, it would "
        "break them. Change it with replace_in_file, or write it whole with them kept. "
        "It is now:\n{text}",
        "a rewrite that drops what other files import, refused",
        "path users text",
    ),
    "edit_drops_imports": refusal(
        "not changed: {path} defines {users}, and after this edit it would not; made, it "
        "would break them. Keep those names: a new function can hold their shared code, "
        "and they can call it.",
        "an edit that drops what other files import, refused",
        "path users",
    ),
    "edit_cuts_name": refusal(
        "not changed: in {path}, old `{old}` is also part of the longer name `{name}` (line "
        "{line}), which this edit would make `{made}`. Send as old whole names, with "
        "enough of the line around them to be unique.",
        "an edit of a Python file that would replace the start or end of a longer name, refused",
        "path old line name made",
    ),
    "edit_defines_twice": refusal(
        "not changed: after this edit {path} would define {twice}, and Python keeps only "
        "the last. To change a function, send its own lines as old and its new code as "
        "new; the other functions stay as they are.",
        "an edit after which a Python file defines a function a second time, refused",
        "path twice",
    ),
    "edit_unbinds": refusal(
        "not changed: this edit removes {names} from {path}, which its code still calls: "
        "made, running it would raise NameError. Keep their definitions in new, or change "
        "what calls them first.",
        "an edit that removes functions a Python file still calls, refused",
        "path names",
    ),
    "edit_in_string": refusal(
        "not changed: in {path} this edit's {lost} would be inside a string (or a comment), "
        "not code. Send as old the whole lines of code to replace, without the quotes around "
        "them, or write the file whole.",
        "an edit whose new functions would land inside a string, refused (small-model profile)",
        "path lost",
    ),
    "edit_breaks_syntax": refusal(
        "not changed: {path} compiles now, and after this edit it would not ({problem}). "
        "Send old and new as whole lines, with new as Python that compiles in their place.",
        "an edit that turns a Python file that compiles into one that does not, refused "
        "(small-model profile)",
        "path problem",
    ),
    "new_made_already": refusal(
        "{path} already has new (line {line}) where old is: this edit is made already, "
        "and making it again would add its lines a second time",
        "new holds old and is in the file already: an edit repeated",
        "path line",
    ),
    "python_now": refusal(
        "; {path} now has a {problem}",
        "the end of a failed edit: the file's syntax error",
        "path problem",
    ),
    "old_file_text": refusal(
        "; the file is:\n{lines}", "old_not_found's end: a short file's whole text", "lines"
    ),
    "old_nearest_lines": refusal(
        "; the nearest lines are:\n{lines}", "old_not_found's end: lines like old", "lines"
    ),
    "code_unchanged": refusal(
        "{path} already has this code: old is the text of its docstring, and new is that "
        "text and the code below it; nothing would change",
        "replace_in_file of a docstring's text into that text and the code the file has",
        "path",
    ),
    "old_is_new": refusal(
        "old and new are the same text; nothing would change", "replace_in_file changing nothing"
    ),
    "content_empty": refusal("content is empty; nothing to append", "append_file with no content"),
    "delete_folder": refusal(
        "{path} is a folder; delete_file deletes single files only",
        "delete_file of a folder",
        "path",
    ),
    "delete_missing": refusal(
        "file {path} does not exist; nothing to delete", "delete_file of no file", "path"
    ),
    "move_workspace": refusal("the workspace itself cannot be moved", "move of the workspace"),
    "move_target_exists": refusal(
        "{path} already exists; delete it first or pick another path",
        "move onto a path that exists",
        "path",
    ),
    "move_into_itself": refusal(
        "{target} is inside {source}; a folder cannot hold itself",
        "move of a folder into itself",
        "target source",
    ),
    "edit_too_large": refusal(
        "{path} is {size} bytes; replace_in_file and append_file edit files of up to "
        "{limit} bytes: write it anew with write_file, or change it with a command",
        "an edit of a file too large",
        "path size limit",
    ),
    "binary_not_editable": refusal(
        "{path} is a binary file; it cannot be edited as text", "an edit of a binary file", "path"
    ),
    "not_utf8": refusal(
        "{path} is not UTF-8 text (byte {byte}); rewrite it with write_file",
        "an edit of a file that is not UTF-8",
        "path byte",
    ),
}

SEARCH = {
    "glob_empty": refusal("glob is empty; use '*' for every file", "find_files with an empty glob"),
    "glob_invalid": refusal(
        "glob {glob} is not a valid name pattern ({problem})",
        "a glob that is not valid",
        "glob problem",
    ),
    "pattern_empty": refusal(
        "pattern is empty; give a regular expression or a text to look for",
        "search_text with an empty pattern",
    ),
    "pattern_long": refusal(
        "pattern is {size} characters; at most {limit} are accepted",
        "search_text with a pattern too long",
        "size limit",
    ),
    "pattern_repeats": refusal(
        "pattern {pattern} repeats too much: its counted repeats ({{n}}) would expand to "
        "more than {limit} copies; use a smaller count or + or *",
        "a pattern whose counted repeats expand too far",
        "pattern limit",
    ),
}

OUTPUTS = {
    "output_past_end": refusal(
        "output {id} has {total} lines; start_line {start_line} is past its end",
        "a start line past a stored output's end",
        "id total start_line",
    ),
    "output_pattern_empty": refusal(
        "the pattern is empty; give a regular expression or a plain string",
        "a search of a stored output with an empty pattern",
    ),
    "output_pattern_long": refusal(
        "the pattern is {size} characters long; at most {limit}",
        "a search of a stored output with a pattern too long",
        "size limit",
    ),
    "outputs_not_stored": refusal(
        "outputs are not stored in this run (the output_store_mb setting is 0)",
        "a stored output asked for when none are kept",
    ),
    "no_stored_output": refusal(
        "there is no stored output {id}; {listing}",
        "a stored output that is not there (listing: no_outputs_yet or stored_outputs)",
        "id listing",
    ),
    "no_outputs_yet": refusal(
        "no output is stored yet (only outputs longer than an observation are)",
        "no_stored_output's listing: none stored",
    ),
    "stored_outputs": refusal(
        "stored outputs: {ids}{older}; the oldest are removed as the store fills",
        "no_stored_output's listing: the newest ids (older: stored_outputs_older, or empty)",
        "ids older",
    ),
    "stored_outputs_older": refusal(
        " (and {count} older)", "stored_outputs' note of the ids not shown", "count"
    ),
    "stored_output_unreadable": refusal(
        "stored output {id} cannot be read: {problem}",
        "a stored output unsafe to read",
        "id problem",
    ),
    "regex_too_slow": refusal(
        "the regular expression {pattern} took longer than {seconds}s (nested repeats such as "
        "(a+)+ can take forever); simplify it or search a plain string",
        "a regular expression that ran too long",
        "pattern seconds",
    ),
    "output_search_failed": refusal(
        "the search failed: {problem}", "a search of a stored output that failed", "problem"
    ),
}

RESEARCH_TOOLS = {
    "query_empty": refusal(
        "query is empty; say what to look for", "search_code with an empty query"
    ),
    "no_code_matches": refusal(
        "no code matches {query}; try other words", "result: search_code found nothing", "query"
    ),
    "code_chunks": refusal(
        "{count} chunks for {query} ({mode} search):\n{chunks}\n"
        "read a chunk with read_file(path, start_line, end_line)",
        "result: search_code's chunks, one a line",
        "count query mode chunks",
    ),
    "no_such_symbol": refusal(
        "no function or class named {symbol} in the workspace; use search_code to find its "
        "exact name (Class.method, or path::name when names repeat)",
        "get_callers/get_callees of an unknown name",
        "symbol",
    ),
    "symbol_ambiguous": refusal(
        "{count} definitions are named {symbol}: {names}; name one as path::Qualified.name",
        "get_callers/get_callees of a name many definitions have",
        "count symbol names",
    ),
    "findings_empty": refusal(
        "findings are empty; say what the step found, with path:line citations",
        "finish_step with no findings",
    ),
    "step_finished": refusal("step finished", "result of finish_step"),
}

REFUSALS: dict[str, Prompt] = {**PATHS, **FILES, **EDITS, **SEARCH, **OUTPUTS, **RESEARCH_TOOLS}
