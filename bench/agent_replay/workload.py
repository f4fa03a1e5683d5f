"""Deterministic agent traffic for bench/agent_replay.py.

Everything here is a pure function of a seed: an agent system prompt, ~20 tool
definitions in OpenAI JSON-schema form (descriptions as long as real coding
agents ship them), user tasks, and a replayed transcript of assistant tool
calls with 300-1,500-token tool results (source files, grep hits, build and
test logs, diffs). Sizes in tokens are fitted with a caller-supplied
`count_tokens(text) -> int` (the server's /tokenize), so the prompt has the
requested size under the model's own tokenizer.
"""

import json
import random

# ---------------------------------------------------------------------------
# Tool definitions


def _fn(name, description, properties, required):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required,
                           "additionalProperties": False},
        },
    }


def _s(desc, **extra):
    d = {"type": "string", "description": desc}
    d.update(extra)
    return d


def _i(desc, **extra):
    d = {"type": "integer", "description": desc}
    d.update(extra)
    return d


def _b(desc):
    return {"type": "boolean", "description": desc}


_PATH_NOTE = (" The path must be absolute (starting with /), not relative to the working directory. "
              "Paths outside the workspace are refused unless the user allowed them explicitly.")

TOOLS = [
    _fn("read_file",
        "Reads a file from the local filesystem. You can access any file directly by using this tool. "
        "Assume this tool is able to read all files on the machine; if the user provides a path to a file, "
        "assume that path is valid. It is okay to read a file that does not exist; an error will be returned.\n\n"
        "Usage:\n- The file_path parameter must be an absolute path, not a relative path.\n"
        "- By default, it reads up to 2000 lines starting from the beginning of the file.\n"
        "- You can optionally specify a line offset and limit (especially handy for long files), but it is "
        "recommended to read the whole file by not providing these parameters.\n"
        "- Any lines longer than 2000 characters will be truncated.\n"
        "- Results are returned using cat -n format, with line numbers starting at 1.\n"
        "- This tool can read images (PNG, JPG), PDFs and Jupyter notebooks; notebooks are returned with all "
        "cells and their outputs.\n- You can call multiple tools in a single response. It is always better to "
        "speculatively read multiple potentially useful files in parallel.\n- If you read a file that exists "
        "but has empty contents you will receive a system reminder warning in place of file contents.",
        {"file_path": _s("The absolute path to the file to read." + _PATH_NOTE),
         "offset": _i("The line number to start reading from. Only provide if the file is too large to read at once.",
                      minimum=1),
         "limit": _i("The number of lines to read. Only provide if the file is too large to read at once.",
                     minimum=1, maximum=2000)},
        ["file_path"]),
    _fn("write_file",
        "Writes a file to the local filesystem, overwriting the existing file if there is one.\n\n"
        "Usage:\n- If this is an existing file, you MUST use the read_file tool first to read the file's contents. "
        "This tool will fail if you did not read the file first.\n- ALWAYS prefer editing existing files in the "
        "codebase. NEVER write new files unless explicitly required.\n- NEVER proactively create documentation "
        "files (*.md) or README files. Only create documentation files if explicitly requested by the user.\n"
        "- Only use emojis if the user explicitly requests it. Avoid writing emojis to files unless asked.\n"
        "- The file is written atomically: the content goes to a temporary file in the same directory which is "
        "then renamed over the target, so a crash never leaves a half-written file behind.",
        {"file_path": _s("The absolute path to the file to write (must be absolute, not relative)." + _PATH_NOTE),
         "content": _s("The complete content to write to the file, exactly as it should appear on disk.")},
        ["file_path", "content"]),
    _fn("edit_file",
        "Performs exact string replacements in files.\n\nUsage:\n- You must use your read_file tool at least once "
        "in the conversation before editing. This tool will error if you attempt an edit without reading the file.\n"
        "- When editing text from read_file output, ensure you preserve the exact indentation (tabs/spaces) as it "
        "appears AFTER the line number prefix. The line number prefix format is: spaces + line number + tab. "
        "Everything after that tab is the actual file content to match. Never include any part of the line number "
        "prefix in the old_string or new_string.\n- ALWAYS prefer editing existing files in the codebase. NEVER "
        "write new files unless explicitly required.\n- The edit will FAIL if old_string is not unique in the file. "
        "Either provide a larger string with more surrounding context to make it unique or use replace_all to "
        "change every instance of old_string.\n- Use replace_all for replacing and renaming strings across the "
        "file. This parameter is useful if you want to rename a variable for instance.",
        {"file_path": _s("The absolute path to the file to modify." + _PATH_NOTE),
         "old_string": _s("The text to replace. It must match the file exactly, including whitespace."),
         "new_string": _s("The text to replace it with (must be different from old_string)."),
         "replace_all": _b("Replace all occurrences of old_string (default false).")},
        ["file_path", "old_string", "new_string"]),
    _fn("multi_edit",
        "This is a tool for making multiple edits to a single file in one operation. It is built on top of the "
        "edit_file tool and allows you to perform multiple find-and-replace operations efficiently. Prefer this "
        "tool over the edit_file tool when you need to make multiple edits to the same file.\n\nBefore using this "
        "tool:\n1. Use the read_file tool to understand the file's contents and context.\n2. Verify the directory "
        "path is correct.\n\nIMPORTANT:\n- All edits are applied in sequence, in the order they are provided.\n"
        "- Each edit operates on the result of the previous edit.\n- All edits must be valid for the operation to "
        "succeed: if any edit fails, none will be applied.\n- This tool is ideal when you need to make several "
        "changes to different parts of the same file.\n\nCRITICAL REQUIREMENTS:\n1. All edits follow the same "
        "requirements as the single edit_file tool.\n2. The edits are atomic - either all succeed or none are "
        "applied.\n3. Plan your edits carefully to avoid conflicts between sequential operations.",
        {"file_path": _s("The absolute path to the file to modify." + _PATH_NOTE),
         "edits": {"type": "array", "minItems": 1, "description": "Array of edit operations to perform sequentially.",
                   "items": {"type": "object", "properties": {
                       "old_string": _s("The text to replace."),
                       "new_string": _s("The text to replace it with."),
                       "replace_all": _b("Replace all occurrences of old_string (default false).")},
                       "required": ["old_string", "new_string"]}}},
        ["file_path", "edits"]),
    _fn("bash",
        "Executes a given bash command in a persistent shell session with optional timeout, ensuring proper "
        "handling and security measures.\n\nBefore executing the command, please follow these steps:\n"
        "1. Directory Verification: if the command will create new directories or files, first use list_dir to "
        "verify the parent directory exists and is the correct location.\n2. Command Execution: always quote file "
        "paths that contain spaces with double quotes. After ensuring proper quoting, execute the command and "
        "capture the output.\n\nUsage notes:\n- The command argument is required.\n- You can specify an optional "
        "timeout in milliseconds (up to 600000ms / 10 minutes). If not specified, commands will time out after "
        "120000ms (2 minutes).\n- It is very helpful if you write a clear, concise description of what this "
        "command does in 5-10 words.\n- If the output exceeds 30000 characters, output will be truncated before "
        "being returned to you.\n- Avoid using search commands like find and grep through bash. Instead use grep, "
        "glob, or task to search. Avoid read tools like cat, head and tail; use read_file.\n- When issuing "
        "multiple commands, use the ';' or '&&' operator to separate them. DO NOT use newlines.\n- Try to maintain "
        "your current working directory throughout the session by using absolute paths and avoiding usage of cd.\n\n"
        "Committing changes with git: only create commits when requested by the user. If unclear, ask first. "
        "NEVER update the git config, NEVER run destructive/irreversible git commands (like push --force, hard "
        "reset) unless the user explicitly requests them, NEVER skip hooks (--no-verify) unless the user asks.",
        {"command": _s("The command to execute."),
         "timeout": _i("Optional timeout in milliseconds (max 600000).", maximum=600000),
         "description": _s("Clear, concise description of what this command does in 5-10 words."),
         "run_in_background": _b("Set to true to run this command in the background. Use bash_output to read "
                                 "the output later.")},
        ["command"]),
    _fn("bash_output",
        "Retrieves output from a running or completed background bash shell.\n- Takes a shell_id parameter "
        "identifying the shell.\n- Always returns only new output since the last check.\n- Returns stdout and "
        "stderr output along with shell status.\n- Supports optional regex filtering to show only lines matching "
        "a pattern.\n- Use this tool when you need to monitor or check the output of a long-running shell, such "
        "as a build or a test suite started with run_in_background.",
        {"shell_id": _s("The ID of the background shell to retrieve output from."),
         "filter": _s("Optional regular expression to filter the output lines. Only lines matching this regex "
                      "will be included in the result. Any lines that do not match will no longer be available "
                      "to read.")},
        ["shell_id"]),
    _fn("grep",
        "A powerful search tool built on ripgrep.\n\nUsage:\n- ALWAYS use grep for search tasks. NEVER invoke "
        "grep or rg as a bash command. The grep tool has been optimized for correct permissions and access.\n"
        "- Supports full regex syntax (e.g., \"log.*Error\", \"function\\\\s+\\\\w+\").\n- Filter files with the "
        "glob parameter (e.g., \"*.js\", \"**/*.tsx\") or the type parameter (e.g., \"js\", \"py\", \"rust\").\n"
        "- Output modes: \"content\" shows matching lines, \"files_with_matches\" shows only file paths (default), "
        "\"count\" shows match counts.\n- Use task for open-ended searches requiring multiple rounds.\n- Pattern "
        "syntax: uses ripgrep (not grep) - literal braces need escaping (use `interface\\\\{\\\\}` to find "
        "`interface{}` in Go code).\n- Multiline matching: by default patterns match within single lines only. "
        "For cross-line patterns, use multiline: true.",
        {"pattern": _s("The regular expression pattern to search for in file contents."),
         "path": _s("File or directory to search in (rg PATH). Defaults to current working directory."),
         "glob": _s("Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\") - maps to rg --glob."),
         "output_mode": _s("Output mode.", enum=["content", "files_with_matches", "count"]),
         "context_before": _i("Number of lines to show before each match (rg -B). Requires output_mode content."),
         "context_after": _i("Number of lines to show after each match (rg -A). Requires output_mode content."),
         "case_insensitive": _b("Case insensitive search (rg -i)."),
         "type": _s("File type to search (rg --type). Common types: js, py, rust, go, java, cpp."),
         "head_limit": _i("Limit output to first N lines/entries, equivalent to \"| head -N\"."),
         "multiline": _b("Enable multiline mode where . matches newlines and patterns can span lines.")},
        ["pattern"]),
    _fn("glob",
        "Fast file pattern matching tool that works with any codebase size.\n- Supports glob patterns like "
        "\"**/*.js\" or \"src/**/*.ts\".\n- Returns matching file paths sorted by modification time.\n- Use this "
        "tool when you need to find files by name patterns.\n- When you are doing an open ended search that may "
        "require multiple rounds of globbing and grepping, use the task tool instead.\n- You have the capability "
        "to call multiple tools in a single response. It is always better to speculatively perform multiple "
        "searches as a batch that are potentially useful.",
        {"pattern": _s("The glob pattern to match files against."),
         "path": _s("The directory to search in. If not specified, the current working directory will be used. "
                    "IMPORTANT: Omit this field to use the default directory. Must be a valid directory path if "
                    "provided.")},
        ["pattern"]),
    _fn("list_dir",
        "Lists files and directories in a given path. The path parameter must be an absolute path, not a "
        "relative path. You can optionally provide an array of glob patterns to ignore with the ignore "
        "parameter. You should generally prefer the glob and grep tools, if you know which directories to "
        "search. Directories are listed first, then files, each group sorted by name; hidden entries are shown.",
        {"path": _s("The absolute path to the directory to list (must be absolute, not relative)."),
         "ignore": {"type": "array", "items": {"type": "string"}, "description": "List of glob patterns to ignore."}},
        ["path"]),
    _fn("web_fetch",
        "Fetches content from a specified URL and processes it using an AI model.\n- Takes a URL and a prompt as "
        "input.\n- Fetches the URL content, converts HTML to markdown.\n- Processes the content with the prompt "
        "using a small, fast model.\n- Returns the model's response about the content.\n- Use this tool when you "
        "need to retrieve and analyze web content.\n\nUsage notes:\n- IMPORTANT: If an MCP-provided web fetch tool "
        "is available, prefer using that tool instead of this one, as it may have fewer restrictions.\n- The URL "
        "must be a fully-formed valid URL. HTTP URLs will be automatically upgraded to HTTPS.\n- The prompt should "
        "describe what information you want to extract from the page.\n- This tool is read-only and does not "
        "modify any files.\n- Results may be summarized if the content is very large.\n- Includes a self-cleaning "
        "15-minute cache for faster responses when repeatedly accessing the same URL.\n- When a URL redirects to "
        "a different host, the tool will inform you and provide the redirect URL in a special format. You should "
        "then make a new web_fetch request with the redirect URL to fetch the content.",
        {"url": _s("The URL to fetch content from.", format="uri"),
         "prompt": _s("The prompt to run on the fetched content.")},
        ["url", "prompt"]),
    _fn("web_search",
        "Allows the assistant to search the web and use the results to inform responses.\n- Provides up-to-date "
        "information for current events and recent data.\n- Returns search result information formatted as search "
        "result blocks.\n- Use this tool for accessing information beyond the assistant's knowledge cutoff.\n"
        "- Searches are performed automatically within a single API call.\n\nUsage notes:\n- Domain filtering is "
        "supported to include or block specific websites.\n- Account for the current date when searching: if the "
        "user asks for the latest documentation, include the year in the query.",
        {"query": _s("The search query to use.", minLength=2),
         "allowed_domains": {"type": "array", "items": {"type": "string"},
                             "description": "Only include search results from these domains."},
         "blocked_domains": {"type": "array", "items": {"type": "string"},
                             "description": "Never include search results from these domains."}},
        ["query"]),
    _fn("todo_write",
        "Use this tool to create and manage a structured task list for your current coding session. This helps "
        "you track progress, organize complex tasks, and demonstrate thoroughness to the user. It also helps the "
        "user understand the progress of the task and overall progress of their requests.\n\nWhen to use this "
        "tool:\n1. Complex multi-step tasks - when a task requires 3 or more distinct steps or actions.\n"
        "2. Non-trivial and complex tasks - tasks that require careful planning or multiple operations.\n3. User "
        "explicitly requests a todo list.\n4. User provides multiple tasks (numbered or comma-separated).\n5. After "
        "receiving new instructions - immediately capture user requirements as todos.\n6. When you start working "
        "on a task - mark it as in_progress BEFORE beginning work. Ideally you should only have one todo as "
        "in_progress at a time.\n7. After completing a task - mark it as completed and add any new follow-up tasks "
        "discovered during implementation.\n\nWhen NOT to use this tool: there is only a single, straightforward "
        "task; the task is trivial and tracking it provides no organizational benefit; the task can be completed "
        "in less than 3 trivial steps; the task is purely conversational or informational.\n\nTask states: pending "
        "(not yet started), in_progress (currently working on; limit to ONE task at a time), completed (finished "
        "successfully). Mark tasks complete IMMEDIATELY after finishing; do not batch up multiple tasks before "
        "marking them as completed. ONLY mark a task as completed when you have FULLY accomplished it: if tests are "
        "failing, the implementation is partial, or you encountered unresolved errors, keep it in_progress.",
        {"todos": {"type": "array", "description": "The updated todo list", "items": {
            "type": "object", "properties": {
                "content": _s("Imperative description of the task.", minLength=1),
                "status": _s("Task state.", enum=["pending", "in_progress", "completed"]),
                "active_form": _s("Present continuous form shown while the task is in progress.")},
            "required": ["content", "status", "active_form"]}}},
        ["todos"]),
    _fn("task",
        "Launch a new agent to handle complex, multi-step tasks autonomously.\n\nAvailable agent types and the "
        "tools they have access to:\n- general-purpose: general-purpose agent for researching complex questions, "
        "searching for code, and executing multi-step tasks. When you are searching for a keyword or file and are "
        "not confident that you will find the right match in the first few tries, use this agent to perform the "
        "search for you. (Tools: *)\n- code-reviewer: reviews a diff for bugs, missing tests and style problems. "
        "(Tools: read_file, grep, glob, git_diff)\n\nWhen NOT to use the task tool:\n- If you want to read a "
        "specific file path, use read_file or glob instead, to find the match more quickly.\n- If you are "
        "searching for a specific class definition like \"class Foo\", use glob instead.\n- If you are searching "
        "for code within a specific file or set of 2-3 files, use read_file instead.\n\nUsage notes:\n1. Launch "
        "multiple agents concurrently whenever possible, to maximize performance.\n2. When the agent is done, it "
        "will return a single message back to you. The result returned by the agent is not visible to the user. "
        "To show the user the result, you should send a text message back to the user with a concise summary.\n"
        "3. Each agent invocation is stateless. You will not be able to send additional messages to the agent. "
        "Therefore, your prompt should contain a highly detailed task description for the agent to perform "
        "autonomously and you should specify exactly what information the agent should return back to you.\n"
        "4. The agent's outputs should generally be trusted.\n5. Clearly tell the agent whether you expect it to "
        "write code or just to do research, since it is not aware of the user's intent.",
        {"description": _s("A short (3-5 word) description of the task."),
         "prompt": _s("The task for the agent to perform."),
         "subagent_type": _s("The type of specialized agent to use for this task.",
                             enum=["general-purpose", "code-reviewer"])},
        ["description", "prompt", "subagent_type"]),
    _fn("notebook_edit",
        "Completely replaces the contents of a specific cell in a Jupyter notebook (.ipynb file) with new source. "
        "Jupyter notebooks are interactive documents that combine code, text, and visualizations, commonly used "
        "for data analysis and scientific computing. The notebook_path parameter must be an absolute path, not a "
        "relative path. The cell_number is 0-indexed. Use edit_mode=insert to add a new cell at the index "
        "specified by cell_number. Use edit_mode=delete to delete the cell at the index specified by cell_number.",
        {"notebook_path": _s("The absolute path to the Jupyter notebook file to edit (must be absolute)."),
         "cell_id": _s("The ID of the cell to edit. When inserting a new cell, the new cell will be inserted "
                       "after the cell with this ID, or at the beginning if not specified."),
         "new_source": _s("The new source for the cell."),
         "cell_type": _s("The type of the cell (code or markdown). Required for edit_mode=insert.",
                         enum=["code", "markdown"]),
         "edit_mode": _s("The type of edit to make (replace, insert, delete). Defaults to replace.",
                         enum=["replace", "insert", "delete"])},
        ["notebook_path", "new_source"]),
    _fn("git_diff",
        "Shows the changes in the working tree relative to a revision (default HEAD), as a unified diff with "
        "three lines of context. Use this before summarising your work to the user, and before proposing a "
        "commit message, to make sure the diff contains only what you intended: no debugging output, no "
        "unrelated formatting changes, no accidentally deleted lines. Large diffs are truncated per file after "
        "400 lines; pass a path to see one file in full. Binary files are reported as changed without content.",
        {"revision": _s("Revision to compare against (default HEAD). May be a range such as main...HEAD."),
         "path": _s("Limit the diff to this file or directory."),
         "stat": _b("Show a diffstat summary instead of the full diff.")},
        []),
    _fn("git_log",
        "Shows the commit history of the repository, newest first: hash, author, date and subject, optionally "
        "with the full message and the files each commit touched. Use it to find when a behaviour changed, who "
        "wrote a piece of code and why (together with git blame via bash), or to match the repository's commit "
        "message style before committing.",
        {"max_count": _i("Number of commits to show (default 20).", minimum=1, maximum=500),
         "path": _s("Only commits touching this path."),
         "grep": _s("Only commits whose message matches this regular expression."),
         "name_only": _b("List the files each commit changed.")},
        []),
    _fn("run_tests",
        "Runs the project's test suite, or a subset of it, and returns a summary followed by the output of the "
        "failing tests. The test runner is detected from the repository (ctest for CMake projects, pytest for "
        "Python, cargo test for Rust, go test for Go). Prefer running the narrowest set of tests that covers your "
        "change first, then the whole suite before you report that the work is done. Tests that time out are "
        "reported as failures with the last 50 lines of their output. Never mark a task complete while tests "
        "that passed before your change are failing.",
        {"filter": _s("Only run tests whose name matches this regular expression (ctest -R, pytest -k)."),
         "build_first": _b("Rebuild the affected targets before running (default true)."),
         "timeout_seconds": _i("Per-test timeout in seconds (default 300).", minimum=1),
         "repeat": _i("Run each selected test this many times (to catch flakiness).", minimum=1, maximum=100)},
        []),
    _fn("lsp_definition",
        "Finds where a symbol is defined, using the language server of the file's language. Returns the file, "
        "line and a few lines of context for each definition (overloads and partial specialisations return "
        "several). Faster and more precise than grep for identifiers that are common words, and it understands "
        "namespaces, using-declarations and macros.",
        {"file_path": _s("Absolute path of a file in which the symbol is used."),
         "line": _i("1-based line of the use.", minimum=1),
         "symbol": _s("The identifier to resolve, as written at that line.")},
        ["file_path", "line", "symbol"]),
    _fn("lsp_references",
        "Finds every reference to the symbol defined or used at the given position, across the whole "
        "workspace, using the language server. Returns file:line: text for each reference, grouped by file, "
        "at most 500 results. Use it before renaming or changing the signature of a function to find every "
        "caller that must change too.",
        {"file_path": _s("Absolute path of the file."),
         "line": _i("1-based line.", minimum=1),
         "symbol": _s("The identifier at that line."),
         "include_declaration": _b("Also list the declaration itself (default false).")},
        ["file_path", "line", "symbol"]),
    _fn("ask_user",
        "Asks the user a question and waits for the answer. Use it only when you cannot proceed without a "
        "decision that is the user's to make (a product choice, an ambiguous requirement, permission to run "
        "something destructive). Do not ask for information you can find yourself by reading the code, and do "
        "not ask for confirmation of routine steps. Offer the options you see, with your recommendation first.",
        {"question": _s("The question, in one or two sentences."),
         "options": {"type": "array", "items": {"type": "string"}, "maxItems": 4,
                     "description": "Suggested answers, recommended first."}},
        ["question"]),
]

# ---------------------------------------------------------------------------
# System prompt

_SYSTEM_HEAD = """You are an interactive command-line coding agent that helps users with software engineering tasks. Use the instructions below and the tools available to you to assist the user.

IMPORTANT: Assist with defensive security tasks only. Refuse to create, modify, or improve code that may be used maliciously. Do not assist with credential discovery or harvesting.
IMPORTANT: You must NEVER generate or guess URLs for the user unless you are confident that the URLs are for helping the user with programming.

# Tone and style
You should be concise, direct, and to the point. Your output will be displayed on a command line interface; your responses can use GitHub-flavored markdown for formatting and will be rendered in a monospace font. Output text to communicate with the user; all text you output outside of tool use is displayed to the user. Only use tools to complete tasks. Never use tools like bash or code comments as means to communicate with the user during the session.
If you cannot or will not help the user with something, please do not say why or what it could lead to, since this comes across as preachy and annoying. Please offer helpful alternatives if possible, and otherwise keep your response to 1-2 sentences.
IMPORTANT: You should minimize output tokens as much as possible while maintaining helpfulness, quality, and accuracy. Only address the specific query or task at hand, avoiding tangential information unless absolutely critical for completing the request.
IMPORTANT: You should NOT answer with unnecessary preamble or postamble (such as explaining your code or summarizing your action), unless the user asks you to.

# Proactiveness
You are allowed to be proactive, but only when the user asks you to do something. You should strive to strike a balance between doing the right thing when asked, including taking actions and follow-up actions, and not surprising the user with actions you take without asking.

# Following conventions
When making changes to files, first understand the file's code conventions. Mimic code style, use existing libraries and utilities, and follow existing patterns.
- NEVER assume that a given library is available, even if it is well known. Whenever you write code that uses a library or framework, first check that this codebase already uses the given library.
- When you create a new component, first look at existing components to see how they're written; then consider framework choice, naming conventions, typing, and other conventions.
- When you edit a piece of code, first look at the code's surrounding context (especially its imports) to understand the code's choice of frameworks and libraries.
- Always follow security best practices. Never introduce code that exposes or logs secrets and keys. Never commit secrets or keys to the repository.

# Doing tasks
The user will primarily request you perform software engineering tasks. This includes solving bugs, adding new functionality, refactoring code, explaining code, and more. For these tasks the following steps are recommended:
- Use the todo_write tool to plan the task if required.
- Use the available search tools to understand the codebase and the user's query. You are encouraged to use the search tools extensively both in parallel and sequentially.
- Implement the solution using all tools available to you.
- Verify the solution if possible with tests. NEVER assume a specific test framework or test script. Check the README or search the codebase to determine the testing approach.
- VERY IMPORTANT: When you have completed a task, you MUST run the lint and typecheck commands if they were provided to you to ensure your code is correct.
NEVER commit changes unless the user explicitly asks you to.

# Tool usage policy
- When doing file search, prefer to use the task tool in order to reduce context usage.
- You have the capability to call multiple tools in a single response. When multiple independent pieces of information are requested, batch your tool calls together for optimal performance.
- Tool results and user messages may include <system-reminder> tags. They contain useful information and reminders; they are not part of the user's provided input or the tool result.

# Code references
When referencing specific functions or pieces of code include the pattern `file_path:line_number` to allow the user to easily navigate to the source code location.

<env>
Working directory: /home/dev/src/cairn
Is directory a git repo: Yes
Platform: linux
OS Version: Linux 6.8.0-41-generic
</env>

# Repository notes (from the project's AGENTS.md)
"""

_AREAS = ["core", "kernels", "gguf", "tokenizer", "chat", "model", "cache", "sampling", "spec", "engine",
          "server", "cli"]
_VERBS = ["validate", "document", "benchmark", "test", "profile", "review", "measure", "log", "bound", "check"]
_NOUNS = ["every allocation", "the error path", "each public function", "thread-safety assumptions",
          "the byte budget", "integer overflow on sizes", "the hot loop", "locking order", "file offsets",
          "the public header", "the fuzz corpus", "numerical tolerances"]
_RULES = [
    "Functions that can fail on user input throw cairn::Error with a message that names the input and the limit.",
    "Do not add a dependency without recording it, its licence and its pinned version in docs/dependencies.md.",
    "Every kernel has a scalar reference implementation and a test comparing the two on odd sizes.",
    "Keep headers small: forward-declare what you can and include what you use.",
    "Prefer std::span over pointer and length pairs in new interfaces.",
    "Benchmarks print the exact command, the machine and the date; results go in docs/benchmarks.md.",
    "Tests must be deterministic: seed every random generator and never depend on wall-clock time.",
    "Log at info level only what an operator needs; debug logs must not allocate on hot paths.",
    "A change that alters numerical output must say so in the commit message and update the goldens.",
    "Public types are documented in the header with their invariants and thread-safety.",
]


def system_prompt(rng, n_sections):
    """The agent system prompt: a fixed head plus n_sections of repository notes."""
    parts = [_SYSTEM_HEAD]
    for i in range(n_sections):
        area = _AREAS[i % len(_AREAS)]
        lines = [f"## {area} (section {i + 1})"]
        for _ in range(rng.randint(4, 7)):
            lines.append(f"- {rng.choice(_VERBS).capitalize()} {rng.choice(_NOUNS)} in src/{area}/ "
                         f"before changing {rng.choice(['its interface', 'its tests', 'its callers', 'its docs'])}; "
                         + rng.choice(_RULES))
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


# ---------------------------------------------------------------------------
# Tool results

_IDENT = ["block", "entry", "node", "token", "budget", "ledger", "snapshot", "request", "prefix", "plan",
          "cursor", "span", "chunk", "state", "offset", "count", "limit", "index", "path", "result"]
_TYPES = ["int64_t", "size_t", "bool", "double", "std::string", "std::vector<int32_t>", "KvBlockRef",
          "std::span<const int32_t>"]


def _ident(rng):
    return rng.choice(_IDENT) + rng.choice(["", "_", ""]) + rng.choice(["", "s", "_id", "_bytes", "_tokens"])


def _cpp_lines(rng, n):
    """n lines of plausible C++."""
    out = []
    depth = 0
    while len(out) < n:
        r = rng.random()
        pad = "  " * depth
        if depth == 0 and r < 0.35:
            name = "".join(w.capitalize() for w in (_ident(rng), _ident(rng))).replace("_", "")
            out.append(f"// {name} {rng.choice(_VERBS)}s {rng.choice(_NOUNS)}; see docs/{rng.choice(_AREAS)}.md.")
            out.append(f"{rng.choice(_TYPES)} {name}({rng.choice(_TYPES)} {_ident(rng)}, "
                       f"{rng.choice(_TYPES)} {_ident(rng)}) {{")
            depth = 1
        elif r < 0.15 and depth < 3:
            out.append(f"{pad}for (size_t i = 0; i < {_ident(rng)}.size(); ++i) {{")
            depth += 1
        elif r < 0.25 and depth < 3:
            out.append(f"{pad}if ({_ident(rng)} {rng.choice(['>', '<', '==', '!='])} {_ident(rng)}) {{")
            depth += 1
        elif r < 0.40 and depth > 0:
            depth -= 1
            out.append("  " * depth + "}")
            if depth == 0:
                out.append("")
        elif r < 0.48:
            out.append(f"{pad}// {rng.choice(_RULES)}")
        elif r < 0.55 and depth > 0:
            out.append(f"{pad}if ({_ident(rng)} < 0) throw Error(fmt::format(\"{_ident(rng)}: {{}} is out of range\", "
                       f"{_ident(rng)}));")
        else:
            out.append(f"{pad}{rng.choice(['const ', ''])}{rng.choice(_TYPES)} {_ident(rng)} = "
                       f"{_ident(rng)}{rng.choice(['.size()', ' + 1', ' * kBlockTokens', '[i]', '->position()'])};")
    return out


def _fit(lines_fn, target_tokens, count_tokens):
    """Largest prefix of the lines from lines_fn() whose token count is <= target."""
    lines = lines_fn(max(8, target_tokens // 5))
    while count_tokens("\n".join(lines)) < target_tokens:
        lines += lines_fn(max(8, target_tokens // 10))
    lo, hi = 1, len(lines)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens("\n".join(lines[:mid])) <= target_tokens:
            lo = mid
        else:
            hi = mid - 1
    return "\n".join(lines[:lo])


def _read_file_result(rng, path, target, count_tokens):
    start = rng.randint(1, 200)
    state = {"n": start}

    def gen(k):
        src = _cpp_lines(rng, k)
        out = []
        for line in src:
            out.append(f"{state['n']:6d}\t{line}")
            state["n"] += 1
        return out
    return _fit(gen, target, count_tokens)


def _grep_result(rng, target, count_tokens):
    def gen(k):
        return [f"src/{rng.choice(_AREAS)}/{_ident(rng)}.cc:{rng.randint(1, 900)}:  "
                f"{rng.choice(_cpp_lines(rng, 3)).strip()}" for _ in range(k)]
    return _fit(gen, target, count_tokens)


def _build_log_result(rng, target, count_tokens, failing):
    total = rng.randint(180, 420)
    state = {"i": rng.randint(1, 40)}

    def gen(k):
        out = []
        for _ in range(k):
            i = state["i"]
            state["i"] += 1
            if i <= total:
                area = rng.choice(_AREAS)
                out.append(f"[{i}/{total}] Building CXX object src/{area}/CMakeFiles/cairn_{area}.dir/"
                           f"{_ident(rng)}.cc.o")
            else:
                t = rng.randint(1, 3000) / 1000
                name = f"{rng.choice(_AREAS).capitalize()}{_ident(rng).capitalize().replace('_', '')}"
                ok = rng.random() > 0.05
                out.append(f"[{'       OK ' if ok else '  FAILED  '}] {name}Test.{_ident(rng).capitalize()} "
                           f"({int(t * 1000)} ms)")
                if not ok:
                    out.append(f"tests/{rng.choice(_AREAS)}/{_ident(rng)}_test.cc:{rng.randint(10, 700)}: Failure")
                    out.append(f"Expected equality of these values:\n  {_ident(rng)}\n    Which is: "
                               f"{rng.randint(0, 99999)}\n  {_ident(rng)}\n    Which is: {rng.randint(0, 99999)}")
        return out
    text = _fit(gen, target, count_tokens)
    if failing:
        text += "\n\n98% tests passed, 3 tests failed out of 212\nErrors while running CTest"
    return text


def _diff_result(rng, target, count_tokens):
    def gen(k):
        out = []
        while len(out) < k:
            path = f"src/{rng.choice(_AREAS)}/{_ident(rng)}.cc"
            a = rng.randint(10, 800)
            out += [f"diff --git a/{path} b/{path}", f"--- a/{path}", f"+++ b/{path}",
                    f"@@ -{a},9 +{a},11 @@"]
            for line in _cpp_lines(rng, rng.randint(6, 14)):
                out.append(rng.choice([" ", " ", " ", "-", "+"]) + line)
        return out
    return _fit(gen, target, count_tokens)


def _edit_result(rng, path, target, count_tokens):
    head = (f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the "
            f"edited file:\n")
    return head + _read_file_result(rng, path, max(50, target - 40), count_tokens)


# ---------------------------------------------------------------------------
# Sessions


class Session:
    """A replayed agent conversation: messages grow by (assistant tool call, tool result) per turn."""

    def __init__(self, name, system, user_task, steps):
        self.name = name
        self.system = system
        self.user_task = user_task
        self.steps = steps  # list of (assistant_message, tool_message)

    def messages(self, turn):
        """Messages of request `turn` (1-based): system, user, then turn-1 tool exchanges."""
        msgs = [{"role": "system", "content": self.system}, {"role": "user", "content": self.user_task}]
        for a, t in self.steps[:turn - 1]:
            msgs += [a, t]
        return msgs


_PLAN = [
    ("grep", "Let me find where this is implemented."),
    ("read_file", "I'll read the implementation."),
    ("read_file", "Now the test that exercises it."),
    ("run_tests", "Let me reproduce the failure first."),
    ("edit_file", "The eviction tier is computed before the clock is bumped; I'll fix the order."),
    ("bash", "Rebuilding the affected targets."),
    ("run_tests", "Running the cache tests again."),
    ("git_diff", "Let me review the change."),
    ("read_file", "Checking the caller in the engine as well."),
    ("grep", "Looking for other call sites of the same helper."),
    ("edit_file", "Applying the same fix to the second call site."),
    ("run_tests", "Running the whole suite."),
]


def _tool_step(rng, sid, k, kind, text, count_tokens, lo, hi):
    target = rng.randint(lo, hi)
    area = rng.choice(_AREAS)
    path = f"/home/dev/src/cairn/src/{area}/{_ident(rng)}.cc"
    if kind == "grep":
        args = {"pattern": f"{_ident(rng)}\\(", "path": f"src/{area}", "output_mode": "content"}
        result = _grep_result(rng, target, count_tokens)
    elif kind == "read_file":
        args = {"file_path": path}
        result = _read_file_result(rng, path, target, count_tokens)
    elif kind == "run_tests":
        args = {"filter": f"{area.capitalize()}.*", "build_first": True}
        result = _build_log_result(rng, target, count_tokens, failing=(k < 6))
    elif kind == "bash":
        args = {"command": f"cmake --build build --target cairn_{area}_test -j2",
                "description": "Rebuild the tests of the changed layer"}
        result = _build_log_result(rng, target, count_tokens, failing=False)
    elif kind == "git_diff":
        args = {"stat": False}
        result = _diff_result(rng, target, count_tokens)
    else:  # edit_file
        old = rng.choice(_cpp_lines(rng, 4)).strip()
        args = {"file_path": path, "old_string": old, "new_string": old.replace(" = ", " = std::max<int64_t>(0, ") + ")"}
        result = _edit_result(rng, path, target, count_tokens)
    call_id = f"call_{sid}_{k}_{rng.randrange(16 ** 8):08x}"
    assistant = {"role": "assistant", "content": text,
                 "tool_calls": [{"id": call_id, "type": "function",
                                 "function": {"name": kind if kind != "run_tests" else "run_tests",
                                              "arguments": json.dumps(args)}}]}
    tool = {"role": "tool", "tool_call_id": call_id, "content": result}
    return assistant, tool


USER_TASKS = [
    ("A", "The prefix cache test `Eviction.SupersededCheckpointsGoFirst` started failing after my last change "
          "to src/cache/eviction.cc. Please find out why, fix it without weakening the test, and run the cache "
          "tests and then the whole suite. Keep the change minimal and explain the root cause in one paragraph."),
    ("B", "Add a `--json FILE` option to `cairn bench` that writes every measured row as a JSON object "
          "(model, phase, depth, tokens, seconds, tokens per second, bandwidth), so CI can track regressions. "
          "Follow the style of the existing flags and add a test for the writer."),
    ("C", "Our server sometimes returns 500 when a client sends tool_calls with arguments that are not valid "
          "JSON. Make it pass such strings through unchanged as the docs promise and add a regression test."),
]


def make_session(name, seed, system, turns, count_tokens, lo=300, hi=1500):
    rng = random.Random(f"{seed}:{name}")
    task = dict(USER_TASKS)[name]
    steps = []
    for k in range(turns + 2):
        kind, text = _PLAN[k % len(_PLAN)]
        steps.append(_tool_step(rng, name, k, kind, text, count_tokens, lo, hi))
    return Session(name, system, task, steps)


def edited_step(session, k, seed, count_tokens, lo=300, hi=1500):
    """A different assistant action at step k (the user rewinds and the agent acts otherwise)."""
    rng = random.Random(f"{seed}:{session.name}:branch:{k}")
    a, t = _tool_step(rng, session.name + "x", k, "grep", "Actually, let me search the tests instead.",
                      count_tokens, lo, hi)
    return a, t


def edited_result(session, k, seed, count_tokens, lo=300, hi=1500):
    """The tool result of step k replaced (the user edits it, e.g. pastes a fresh test log)."""
    rng = random.Random(f"{seed}:{session.name}:edit:{k}")
    a, t = session.steps[k]
    t = dict(t, content="(edited by the user: output of a fresh run)\n" +
             _build_log_result(rng, rng.randint(lo, hi), count_tokens, failing=True))
    return a, t


def build_system(seed, target_tokens, count_prefix_tokens):
    """(system text, tools) whose rendered prefix (system + tools, up to the first user message) is close to
    target_tokens. count_prefix_tokens(system, tools) -> int."""
    tools = list(TOOLS)
    rng = random.Random(f"{seed}:system")
    sys0 = system_prompt(random.Random(f"{seed}:system"), 0)
    while len(tools) > 3 and count_prefix_tokens(sys0, tools) > target_tokens:
        tools.pop()
    lo, hi = 0, 1
    while count_prefix_tokens(system_prompt(random.Random(f"{seed}:system"), hi), tools) < target_tokens:
        lo, hi = hi, hi * 2
        if hi > 4096:
            break
    while lo < hi - 1:
        mid = (lo + hi) // 2
        if count_prefix_tokens(system_prompt(random.Random(f"{seed}:system"), mid), tools) <= target_tokens:
            lo = mid
        else:
            hi = mid
    del rng
    return system_prompt(random.Random(f"{seed}:system"), lo), tools


def with_project(system, project):
    """The system prompt of a session in `project`: an environment block (working directory, git state,
    date), as agent clients print it, inserted before the middle section, so that sessions of two projects
    share the first half of the prompt and diverge at a path mid-prompt (issue #22)."""
    env = ("<env>\n"
           f"Working directory: /home/sam/src/{project}\n"
           "Is directory a git repo: Yes\n"
           f"Memory file: /home/sam/.agent/projects/{project}/MEMORY.md\n"
           "Platform: linux\n"
           "Today's date: 2026-12-04\n"
           "</env>\n")
    starts = [i for i in range(len(system)) if system.startswith("\n## ", i)]
    cut = starts[len(starts) // 2] + 1 if starts else len(system)
    return system[:cut] + env + system[cut:]


TITLE_SYSTEM = ("Generate a concise, sentence-case title (3-7 words) that captures the main topic of the "
                "conversation. Reply with the title only, no quotes, no punctuation at the end.")
