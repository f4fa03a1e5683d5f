"""How each agent CLI is configured and started headless against Cairn.

Each client gets a private HOME (no user configuration leaks in, nothing is
written to the real one), points at `base_url` (the recording proxy in front of
`cairn serve`), runs in the scratch repository, and is told the task once.

Prompt sizes: `full` runs the clients exactly as shipped (Claude Code's first
request is ~11.7k tokens, qwen-code's ~17k); `short` swaps in a short system
prompt and fewer tools through each client's own options, so the suite fits in
CI on two cores. The protocol, tools, billing header, streaming and cache
behaviour under test are the same either way.
"""
from __future__ import annotations

import json
import os
import pathlib
from dataclasses import dataclass, field

SHORT_PROMPT = ("You are a coding agent working in the current directory. Use your tools to read "
                "and edit files; call one tool at a time. Be brief.")
# Codex's only file tool for a custom provider is its shell (exec_command).
SHORT_PROMPT_SHELL = ("You are a coding agent in a terminal, working in the current directory. Your one tool "
                      "is exec_command, which runs a shell command: to read a file call exec_command with "
                      "{\"cmd\": \"cat FILE\"}, to edit one call exec_command with "
                      "{\"cmd\": \"sed -i 's/OLD/NEW/' FILE\"}. Call one tool at a time. Be brief.")
TASK = "Read main.py and fix the bug in add()."
MODEL_ID = "qwen"


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


def _home(scratch: pathlib.Path, name: str) -> pathlib.Path:
    home = scratch / f"home-{name}"
    home.mkdir(parents=True, exist_ok=True)
    return home


def claude(bin_dir: pathlib.Path, base_url: str, scratch: pathlib.Path, prompts: str) -> Launch:
    home = _home(scratch, "claude")
    argv = [str(bin_dir / "claude"), "-p", TASK, "--dangerously-skip-permissions",
            "--output-format", "json", "--max-turns", "8"]
    if prompts == "short":
        argv += ["--system-prompt", SHORT_PROMPT, "--tools", "Read,Edit"]
    env = {
        "HOME": str(home),
        "IS_SANDBOX": "1",                       # allows the permission bypass as root
        "API_TIMEOUT_MS": "3600000",             # a cold 12k-token prefill on two cores takes minutes
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-local",
        "ANTHROPIC_MODEL": MODEL_ID,
        "ANTHROPIC_SMALL_FAST_MODEL": MODEL_ID,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    return Launch(argv, env)


def codex(bin_dir: pathlib.Path, base_url: str, scratch: pathlib.Path, prompts: str) -> Launch:
    home = _home(scratch, "codex")
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    config = [
        f'model = "{MODEL_ID}"',
        'model_provider = "cairn"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
    ]
    if prompts == "short":
        (codex_home / "instructions.md").write_text(SHORT_PROMPT_SHELL + "\n")
        config.append(f'model_instructions_file = "{codex_home / "instructions.md"}"')
    config += [
        "",
        "[model_providers.cairn]",
        'name = "Cairn"',
        f'base_url = "{base_url}/v1"',
        'wire_api = "responses"',           # Codex's own wire API: /v1/responses
        'env_key = "CAIRN_API_KEY"',
    ]
    (codex_home / "config.toml").write_text("\n".join(config) + "\n")
    argv = [str(bin_dir / "codex"), "exec", "--skip-git-repo-check", TASK]
    return Launch(argv, {"HOME": str(home), "CODEX_HOME": str(codex_home), "CAIRN_API_KEY": "sk-local"})


def opencode(bin_dir: pathlib.Path, base_url: str, scratch: pathlib.Path, prompts: str) -> Launch:
    home = _home(scratch, "opencode")
    config_dir = home / ".config" / "opencode"
    config_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"cairn": {
            "npm": "@ai-sdk/openai-compatible",   # OpenCode's OpenAI chat-completions provider
            "name": "Cairn",
            "options": {"baseURL": f"{base_url}/v1", "apiKey": "sk-local"},
            "models": {MODEL_ID: {"name": MODEL_ID, "tool_call": True}},
        }},
        "model": f"cairn/{MODEL_ID}",
        "small_model": f"cairn/{MODEL_ID}",
        "autoupdate": False,
        "share": "disabled",
    }
    if prompts == "short":
        off = ["bash", "glob", "grep", "list", "patch", "write", "todowrite", "todoread", "webfetch",
               "websearch", "task", "skill", "question", "codesearch", "lsp"]
        config["agent"] = {"build": {"prompt": SHORT_PROMPT, "tools": {name: False for name in off}}}
    (config_dir / "opencode.json").write_text(json.dumps(config, indent=1))
    argv = [str(bin_dir / "opencode"), "run", "--auto", TASK]
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CACHE_HOME": str(home / ".cache"),
           "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"}
    return Launch(argv, env)


def qwen_code(bin_dir: pathlib.Path, base_url: str, scratch: pathlib.Path, prompts: str) -> Launch:
    home = _home(scratch, "qwen")
    settings_dir = home / ".qwen"
    settings_dir.mkdir(exist_ok=True)
    settings = {"security": {"auth": {"selectedType": "openai"}},
                "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}
    argv = [str(bin_dir / "qwen"), "--yolo"]
    if prompts == "short":
        settings["tools"] = {"core": ["read_file", "edit", "write_file"]}
        argv += ["--system-prompt", SHORT_PROMPT]
    (settings_dir / "settings.json").write_text(json.dumps(settings))
    argv.append(TASK)
    env = {"HOME": str(home), "OPENAI_BASE_URL": f"{base_url}/v1", "OPENAI_API_KEY": "sk-local",
           "OPENAI_MODEL": MODEL_ID, "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}
    return Launch(argv, env)


# name -> (launcher, API the client speaks)
CLIENTS = {
    "claude-code": (claude, "anthropic"),
    "codex": (codex, "responses"),
    "opencode": (opencode, "chat"),
    "qwen-code": (qwen_code, "chat"),
}


def child_env(launch: Launch) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE_", "CODEX_", "OPENCODE_", "QWEN_"))}
    env.update(launch.env)
    return env
