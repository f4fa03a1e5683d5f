"""The Anthropic Messages API (/v1/messages) driven by the official `anthropic` SDK.

Against the fake service the exact answers are asserted too; against a real
model only what must hold for any model.
"""
import anthropic
import pytest


def client(server, api_key="none", **kwargs):
    return anthropic.Anthropic(base_url=server.base, api_key=api_key, max_retries=0, timeout=120.0, **kwargs)


def test_message_create(server):
    message = client(server).messages.create(
        model="claude-sonnet-4", max_tokens=32,
        system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": "hello"}])
    assert message.id.startswith("msg_")
    assert message.type == "message" and message.role == "assistant"
    assert message.content and message.content[-1].type == "text"
    assert message.stop_reason in ("end_turn", "max_tokens")
    assert message.usage.output_tokens >= 1
    total = message.usage.input_tokens + message.usage.cache_read_input_tokens + \
        message.usage.cache_creation_input_tokens
    assert total > 0
    if server.fake:
        assert message.content[-1].text == "HELLO"
        assert message.stop_reason == "end_turn"


def test_cache_usage_on_a_repeated_prefix(server):
    c = client(server)
    body = dict(model="m", max_tokens=8, system="You are a careful engineer. " * 8,
                messages=[{"role": "user", "content": "same question"}])
    c.messages.create(**body)
    again = c.messages.create(**body)
    assert again.usage.cache_read_input_tokens > 0


def test_stream_events(server):
    with client(server).messages.stream(model="m", max_tokens=32,
                                        messages=[{"role": "user", "content": "[think] hey"}]) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()
    assert kinds[0] == "message_start"
    assert "content_block_start" in kinds and "content_block_delta" in kinds and "content_block_stop" in kinds
    assert kinds[-1] == "message_stop" and "message_delta" in kinds
    assert final.stop_reason in ("end_turn", "max_tokens")
    if server.fake:
        assert [block.type for block in final.content] == ["thinking", "text"]
        assert final.content[0].thinking == "thinking..."
        assert final.content[1].text == "HEY"


def test_stop_sequences_and_max_tokens(server):
    limited = client(server).messages.create(model="m", max_tokens=2, messages=[{"role": "user", "content": "hello"}])
    assert limited.stop_reason == "max_tokens"
    assert limited.usage.output_tokens == 2
    if server.fake:
        stopped = client(server).messages.create(model="m", max_tokens=20, stop_sequences=["LL"],
                                                 messages=[{"role": "user", "content": "hello"}])
        assert stopped.stop_reason == "stop_sequence" and stopped.stop_sequence == "LL"
        assert stopped.content[0].text == "HE"


def test_tool_loop_request_shapes_are_accepted(server):
    tools = [{"name": "read_file", "description": "Read a file",
              "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]
    message = client(server).messages.create(
        model="m", max_tokens=16, tools=tools, tool_choice={"type": "auto"},
        messages=[{"role": "user", "content": "Read main.py and fix the bug in add()"},
                  {"role": "assistant", "content": [
                      {"type": "text", "text": "Reading it."},
                      {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "main.py"}}]},
                  {"role": "user", "content": [
                      {"type": "tool_result", "tool_use_id": "toolu_01", "content": "def add(a, b): return a - b"}]}])
    assert message.stop_reason in ("end_turn", "max_tokens", "tool_use")


def test_count_tokens(server):
    counted = client(server).messages.count_tokens(model="m", messages=[{"role": "user", "content": "hello"}])
    assert counted.input_tokens > 0
    if server.fake:
        assert counted.input_tokens == 27  # "<|user|>hello\n<|assistant|>" in byte tokens


def test_errors_have_anthropic_shape(server):
    with pytest.raises(anthropic.BadRequestError) as e:
        client(server).messages.create(model="m", max_tokens=8, messages=[
            {"role": "user", "content": [{"type": "image", "source": {
                "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}])
    assert e.value.status_code == 400
    assert e.value.body["type"] == "error"
    assert e.value.body["error"]["type"] == "invalid_request_error"
    assert "vision" in e.value.body["error"]["message"]


def test_auth_by_x_api_key(keyed_server):
    with pytest.raises(anthropic.AuthenticationError):
        client(keyed_server, api_key="wrong").messages.create(
            model="m", max_tokens=4, messages=[{"role": "user", "content": "hi"}])
    ok = client(keyed_server, api_key="e2e-secret").messages.create(
        model="m", max_tokens=4, messages=[{"role": "user", "content": "hi"}])
    assert ok.usage.output_tokens >= 1
