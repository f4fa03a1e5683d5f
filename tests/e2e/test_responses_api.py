"""The OpenAI Responses API (/v1/responses) driven by the official `openai` SDK."""
import openai
import pytest


def test_create_and_continue(server):
    c = server.client()
    first = c.responses.create(model="m", input="hello", instructions="Be brief.", max_output_tokens=32)
    assert first.id.startswith("resp_") and first.object == "response"
    assert first.status in ("completed", "incomplete")
    assert first.output_text
    assert first.usage.input_tokens > 0 and first.usage.output_tokens >= 1
    if server.fake:
        assert first.output_text == "HELLO"
    follow = c.responses.create(model="m", previous_response_id=first.id, input="hello", max_output_tokens=8)
    assert follow.usage.input_tokens_details.cached_tokens > 0  # the stored turns are a cached prefix
    with pytest.raises(openai.BadRequestError):
        c.responses.create(model="m", previous_response_id="resp_unknown", input="x")


def test_stream_events(server):
    c = server.client()
    kinds = []
    with c.responses.stream(model="m", input="[think] hey", max_output_tokens=32) as stream:
        for event in stream:
            kinds.append(event.type)
        final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[1] == "response.in_progress"
    assert "response.output_item.added" in kinds and "response.output_text.delta" in kinds
    assert kinds[-1] in ("response.completed", "response.incomplete")
    if server.fake:
        assert "response.reasoning_text.delta" in kinds
        assert final.output_text == "HEY"
        assert [item.type for item in final.output] == ["reasoning", "message"]


def test_codex_shaped_request(server):
    """Codex sends function and non-function tools, developer messages and tool outputs."""
    c = server.client()
    response = c.responses.create(
        model="m", instructions="You are a coding agent.", store=False, parallel_tool_calls=False,
        reasoning={"effort": "low"}, max_output_tokens=16,
        tools=[{"type": "function", "name": "shell", "description": "run",
                "parameters": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}}},
               {"type": "custom", "name": "apply_patch", "description": "patch"},
               {"type": "web_search"}],
        input=[{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sandbox"}]},
               {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix add()"}]},
               {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{\"command\": [\"cat\", \"main.py\"]}"},
               {"type": "function_call_output", "call_id": "call_1", "output": "def add(a, b): return a - b"}])
    assert response.status in ("completed", "incomplete")
