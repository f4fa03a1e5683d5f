#!/usr/bin/env python3
"""Generate golden chat-template renders for tests/chat/template_golden_test.cc.

Renders a fixed set of conversations through every template in
../shared/testdata/chat-templates/*.jinja plus the Qwen3 template from
../shared/testdata/qwen3-tokenizer/tokenizer_config.json with Python Jinja2
configured the way Hugging Face transformers' apply_chat_template configures it
(ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, the
`generation` tag, HF's tojson, raise_exception, strftime_now, dict, namespace),
and writes tests/chat/golden/<template>.json with each expected output or the
error Jinja2 raised. strftime_now is frozen to FIXED_TIME (the C++ test injects
the same clock).

Needs jinja2 >= 3.1.6 (not needed in CI: the golden files are committed).
Usage: python3 tools/chat_template_golden.py [--shared DIR] [--out DIR]
"""

import argparse
import copy
import datetime
import json
import os
import sys

import jinja2
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

FIXED_TIME = datetime.datetime(2025, 3, 14, 9, 26, 53)
BOS = "<|bos|>"
EOS = "<|eos|>"


class GenerationTag(Extension):
    """transformers' AssistantTracker without tracking: renders the body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        return FIXED_TIME.strftime(format)

    class TemplateDict:
        def __call__(self, *args, **kwargs):
            return dict(*args, **kwargs)

    class TemplateNamespace(jinja2.utils.Namespace):
        def __init__(*args, **kwargs):
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            jinja2.utils.Namespace.__init__(self, attrs)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    return env


TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Unit"},
            "days": {"type": "integer", "description": "Forecast days", "default": 1},
        }, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search_files",
        "description": "Search files by glob and regex.",
        "parameters": {"type": "object", "properties": {
            "pattern": {"type": "string", "description": "Regex to search for"},
            "paths": {"type": "array", "items": {"type": "string"}, "description": "Globs"},
            "options": {"type": "object", "properties": {
                "case_sensitive": {"type": "boolean"},
                "max_results": {"type": "number", "description": "Limit"}},
                "required": ["case_sensitive"]},
        }, "required": ["pattern"]}}},
]


def call(cid, name, args, as_string=False):
    return {"id": cid, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args) if as_string else args}}


def conversations():
    convs = {}
    convs["user_only"] = [{"role": "user", "content": "Hello!"}]
    convs["system_user"] = [{"role": "system", "content": "You are a terse assistant."},
                            {"role": "user", "content": "What is 2+2?"}]
    convs["multi_turn"] = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Tell me a joke."},
        {"role": "assistant", "content": "Why did the chicken cross the road?"},
        {"role": "user", "content": "Why?"}]
    convs["unicode"] = [{"role": "user", "content":
                         "h\u00e9llo \u2014 \u4f60\u597d \U0001F30D \"quotes\" 'single' \\ back\nslash\ttab"}]
    convs["empty_content"] = [{"role": "user", "content": ""}]
    convs["reasoning_field"] = [
        {"role": "user", "content": "Is 7 prime?"},
        {"role": "assistant", "content": "Yes, 7 is prime.",
         "reasoning_content": "7 has no divisors other than 1 and 7."},
        {"role": "user", "content": "And 9?"}]
    convs["inline_think"] = [
        {"role": "user", "content": "Is 7 prime?"},
        {"role": "assistant", "content": "<think>\nCheck divisors 2..3.\n</think>\n\nYes."},
        {"role": "user", "content": "Thanks"},
        {"role": "assistant", "content": "<think>\nPolite reply.\n</think>\n\nYou're welcome!"}]
    convs["tools_user"] = [{"role": "system", "content": "Use tools when useful."},
                           {"role": "user", "content": "Weather in Paris?"}]
    convs["tool_call_dict"] = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            call("call00001", "get_weather", {"city": "Paris", "unit": "celsius"})]},
        {"role": "tool", "tool_call_id": "call00001", "name": "get_weather",
         "content": "{\"temp\": 21.5, \"sky\": \"clear\"}"},
        {"role": "assistant", "content": "It is 21.5\u00b0C and clear in Paris."},
        {"role": "user", "content": "Thanks!"}]
    convs["tool_call_string"] = [
        {"role": "user", "content": "Find TODOs"},
        {"role": "assistant", "content": None, "tool_calls": [
            call("call00002", "search_files", {"pattern": "TODO", "paths": ["src/**"]}, True)]},
        {"role": "tool", "tool_call_id": "call00002", "name": "search_files",
         "content": "src/a.cc:3: TODO fix"}]
    convs["parallel_calls"] = [
        {"role": "system", "content": "Agent."},
        {"role": "user", "content": "Weather in Paris and Rome, then search."},
        {"role": "assistant", "content": "Checking both.",
         "reasoning_content": "Two cities, call twice.", "tool_calls": [
            call("call00003", "get_weather", {"city": "Paris"}),
            call("call00004", "get_weather", {"city": "Rome", "days": 3})]},
        {"role": "tool", "tool_call_id": "call00003", "name": "get_weather", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call00004", "name": "get_weather", "content": "rain"},
        {"role": "assistant", "content": "Paris sunny, Rome rain.",
         "reasoning_content": "Summarize."}]
    convs["content_parts"] = [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "text", "text": "Part one."},
                                     {"type": "text", "text": "Part two."}]}]
    convs["assistant_last"] = [
        {"role": "user", "content": "Say hi"},
        {"role": "assistant", "content": "Hi!"}]
    convs["system_only"] = [{"role": "system", "content": "Only a system prompt."}]
    convs["nested_args"] = [
        {"role": "user", "content": "Search"},
        {"role": "assistant", "content": "", "tool_calls": [
            call("call00005", "search_files",
                 {"pattern": "a\"b", "paths": ["x", "y"],
                  "options": {"case_sensitive": True, "max_results": 2.5}, "n": None})]},
        {"role": "tool", "tool_call_id": "call00005", "name": "search_files", "content": "none"},
        {"role": "assistant", "content": "Nothing found."},
        {"role": "user", "content": "ok"}]
    return convs


def variants(template_text, conv_name):
    """(tools?, add_generation_prompt, kwargs) combinations worth testing."""
    uses_tools = conv_name in ("tools_user", "tool_call_dict", "tool_call_string",
                               "parallel_calls", "nested_args")
    out = []
    for agp in (True, False):
        out.append((uses_tools, agp, {}))
    if "enable_thinking" in template_text:
        out.append((uses_tools, True, {"enable_thinking": False}))
        out.append((uses_tools, False, {"enable_thinking": True}))
    if "reasoning_effort" in template_text:
        out.append((uses_tools, True, {"reasoning_effort": "high"}))
    if "keep_past_thinking" in template_text:
        out.append((uses_tools, True, {"keep_past_thinking": True}))
    if conv_name == "tools_user" and "builtin_tools" in template_text:
        out.append((True, True, {"builtin_tools": ["code_interpreter", "brave_search"]}))
    return out


def load_templates(shared):
    templates = {}
    folder = os.path.join(shared, "testdata", "chat-templates")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".jinja"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                templates[name[:-len(".jinja")]] = ("testdata/chat-templates/" + name, f.read())
    cfg = os.path.join(shared, "testdata", "qwen3-tokenizer", "tokenizer_config.json")
    with open(cfg, encoding="utf-8") as f:
        templates["qwen3-tokenizer-config"] = (
            "testdata/qwen3-tokenizer/tokenizer_config.json#chat_template",
            json.load(f)["chat_template"])
    return templates


def feature_cases():
    """Small snippets covering each language feature (tests/chat/feature_cases.json)."""
    ctx = {"xs": [3, 1, 2], "d": {"b": 2, "a": 1, "items": "key"}, "s": "  Hello World  ", "n": None,
           "msgs": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "q"}],
           "f": 2.5, "u": "h\u00e9llo \u4f60\u597d"}
    snips = [
     ("if_elif_else", "{% if 0 %}a{% elif xs %}b{% else %}c{% endif %}"),
     ("for_else", "{% for x in [] %}{{ x }}{% else %}empty{% endfor %}"),
     ("loop_vars", "{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}|{% endfor %}"),
     ("loop_prev_next", "{% for x in xs %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}"),
     ("loop_cycle", "{% for x in xs %}{{ loop.cycle('a', 'b') }}{% endfor %}"),
     ("loop_filter", "{% for x in xs if x > 1 %}{{ x }}/{{ loop.length }} {% endfor %}"),
     ("break_continue", "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
     ("tuple_unpack", "{% for k, v in d|items %}{{ k }}={{ v }},{% endfor %}"),
     ("set_scope", "{% set a = 1 %}{% for x in xs %}{% set a = x %}{% endfor %}{{ a }}"),
     ("namespace", "{% set ns = namespace(c=0) %}{% for x in xs %}{% set ns.c = ns.c + x %}{% endfor %}{{ ns.c }}"),
     ("block_set", "{% set b %}  in {{ xs|length }}  {% endset %}[{{ b }}][{{ b|trim }}]"),
     ("block_set_filter", "{% set b | upper %}abc{% endset %}{{ b }}"),
     ("macro_defaults", "{% macro m(a, b='B', c=none) %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(1) }}|{{ m(1, 2) }}|{{ m(1, c=3) }}"),
     ("macro_call", "{% macro wrap(t) %}<{{ caller(t) }}>{% endmacro %}{% call(v) wrap('x') %}[{{ v }}]{% endcall %}"),
     ("macro_recursive", "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(4) }}"),
     ("arith", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 7 / 2 }} {{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 4 / 2 }}"),
     ("concat", "{{ 'a' ~ 1 ~ none ~ true }} {{ 'ab' + 'cd' }} {{ [1] + [2] }} {{ '-' * 3 }}"),
     ("compare", "{{ 1 < 2 < 3 }} {{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ 2 in xs }} {{ 'ell' in s }} {{ 'a' in d }} {{ 5 not in xs }}"),
     ("logic", "{{ 0 or 'x' }} {{ 1 and 'y' }} {{ not 0 }} {{ none or [] }}|{{ 'a' if 0 else 'b' }}|{{ 'a' if 0 }}|"),
     ("slicing", "{{ xs[::-1] }} {{ xs[1:] }} {{ xs[-1] }} {{ 'hello'[1:3] }} {{ 'hello'[::-2] }} {{ u[1:4] }} {{ u[-2] }}"),
     ("attr_item", "{{ d.a }} {{ d['b'] }} {{ d['items'] }} {{ d.missing }}|{{ msgs[0].role }} {{ msgs[-1]['content'] }}"),
     ("print_repr", "{{ xs }} {{ d }} {{ n }} {{ f }} {{ true }} {{ [1.0, 'a\\'b', none] }} {{ 1e20 }} {{ 0.0001 }} {{ 1/3 }}"),
     ("str_methods", "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ 'xxhixx'.strip('x') }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a,b,c'.split(',', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }}"),
     ("str_methods2", "{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith(('x', 'lo')) }} {{ 'hello'.replace('l', 'L') }} {{ 'hello'.upper() }} {{ 'HeLLo'.lower() }} {{ 'hello world'.title() }} {{ 'hello'.capitalize() }} {{ 'hello'.find('l') }} {{ u.find('o') }} {{ 'hello'.count('l') }} {{ '-'.join(['a','b']) }}"),
     ("dict_methods", "{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 9) }} {{ d.keys()|list }} {{ d.values()|list }} {% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}"),
     ("filters1", "{{ xs|length }} {{ xs|first }} {{ xs|last }} {{ xs|join(',') }} {{ xs|sort }} {{ xs|sort(reverse=true) }} {{ xs|reverse|list }} {{ xs|max }} {{ xs|min }} {{ xs|sum }}"),
     ("filters2", "{{ s|trim }}|{{ s|upper }}|{{ s|lower }}|{{ 'hello WORLD'|capitalize }}|{{ 'hello-world foo'|title }}|{{ s|replace('l', '_') }}|{{ 'ab'|list }}|{{ 5|string }}"),
     ("filters3", "{{ undefined_var|default('dflt') }} {{ ''|default('e', true) }} {{ n|default('x') }} {{ '42'|int }} {{ '4.7'|int }} {{ 'x'|int(7) }} {{ '2.5'|float }} {{ -3|abs }} {{ 2.567|round(2) }} {{ 2.5|round }} {{ [1,2,1,'A','a']|unique|list }}"),
     ("filters4", "{{ msgs|map(attribute='role')|join(',') }} {{ msgs|selectattr('role', 'equalto', 'user')|list|length }} {{ msgs|rejectattr('role', 'equalto', 'user')|map(attribute='content')|first }} {{ xs|select('odd')|list }} {{ xs|reject('odd')|list }} {{ ['a','B']|map('upper')|list }} {{ msgs|selectattr('content')|list|length }}"),
     ("dictsort", "{% for k, v in {'b': 1, 'A': 2, 'c': 0}|dictsort %}{{ k }}{{ v }}{% endfor %} {% for k, v in {'b': 1, 'a': 2}|dictsort(by='value') %}{{ k }}{% endfor %}"),
     ("tojson", "{{ d|tojson }} {{ {'x': [1, 2.0, none, true, 'é\"\\n']}|tojson }} {{ d|tojson(indent=2) }} {{ d|tojson(sort_keys=true) }} {{ xs|tojson(separators=(',', ':')) }} {{ 'é'|tojson(ensure_ascii=true) }}"),
     ("indent", "{{ 'a\\nb\\n\\nc'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}|{{ 'a\\n\\nb'|indent('> ', blank=true) }}"),
     ("escape_wc", "{{ '<a href=\"x\">&\\''|e }} {{ 'one two  three'|wordcount }} {{ '<b>'|safe }}"),
     ("tests", "{{ xs is iterable }} {{ d is mapping }} {{ s is string }} {{ 1 is number }} {{ 1 is integer }} {{ 1.0 is float }} {{ n is none }} {{ nope is defined }} {{ nope is undefined }} {{ true is boolean }} {{ false is false }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 'a' is in 'abc' }} {{ xs is sequence }} {{ 1 is equalto 1 }} {{ d is not mapping }} {{ range is callable }}"),
     ("string_escapes", "{{ 'a\\tb\\\\c\\x41\\u00e9\\'' }}|{{ \"dq\\\"\" }}|{{ 'x' 'y' }}"),
     ("whitespace", "a  \n  {%- if true -%}  \n  b  \n  {%- endif -%}  \n  c\n  {% if true %}\n    d\n  {% endif %}\n{# c #}\ne {{- ' f ' -}} g\n"),
     ("lstrip_plus", "x\n    {%+ if true %}y{% endif +%}\nz"),
     ("range_dict", "{{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }} {{ dict(a=1, b=2) }} {{ dict(a=1).a }}"),
     ("generation", "{% generation %}gen {{ 1 }}{% endgeneration %}"),
     ("strftime", "{{ strftime_now('%Y-%m-%d %H:%M %a %b %B %d') }}"),
     ("unicode_len", "{{ u|length }} {{ u|reverse }} {{ u[0] }}{{ u[-1] }}"),
     ("none_attr", "{{ n.foo }}|{{ n.foo is defined }}"),
     ("nested_loops", "{% for a in [1, 2] %}{% for b in 'xy' %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.index }}|{% endfor %}"),
     ("filter_on_expr", "{{ (xs + [9])|length }} {{ not xs|length }} {{ xs|length > 2 }}"),
     ("percent_basic", "{{ '%s-%s' % (1, 'a') }}|{{ '%s' % xs }}|{{ '%d%%' % 50 }}|{{ 'x=%r' % 'q' }}|{{ '%(a)s+%(b)d' % d }}|{{ '%s' % none }}|{{ '%s' % d }}|{{ 'n=' ~ '%d' % 3.9 }}"),
     ("percent_numbers", "{{ '%5d|%-5d|%05d|%+d|% d|%.3d' % (42, 42, -42, 42, 42, 7) }}|{{ '%x %X %o %#x %#X %#o' % (255, 255, 8, 255, 255, 8) }}|{{ '%.2f %e %g %G %10.3f %-8.2e|' % (3.14159, 12345.678, 0.00001234, 1e20, f, -f) }}|{{ '%#g %g %#.0f %F' % (1.5, 100000000, 2.0, 1e300 * 1e300) }}"),
     ("percent_strings", "{{ '%c%c' % (65, 'é') }}|{{ '%.3s|%5s|%-5s|%r' % ('abcdef', 'ab', 'é', u) }}|{{ '%*d|%.*f|%-*s|' % (4, 7, 1, 2.25, 3, 'x') }}|{{ '%s %s' % ([1, 2], msgs[0]) }}|{{ '%(role)s: %(content)s' % msgs[1] }}"),
     ("percent_err_few", "{{ '%s %s' % (1,) }}"),
     ("percent_err_many", "{{ '%s' % (1, 2) }}"),
     ("percent_err_type", "{{ '%d' % 'x' }}"),
     ("percent_err_char", "{{ '%z' % 1 }}"),
     ("percent_err_key", "{{ '%(zz)s' % d }}"),
     ("percent_undefined", "[{{ '%s' % nope }}]"),
     ("percent_err_undefined", "{{ '%d' % nope }}"),
     ("format_filter", "{{ '%s and %s'|format('a', 'b') }}|{{ '%(x)s!'|format(x=1) }}|{{ '%05.1f'|format(f) }}|{{ 'plain'|format }}|{{ '%s'|format(xs) }}|{{ 5|format }}"),
     ("format_filter_err", "{{ '%s %(x)s'|format(1, x=2) }}"),
     ("truncate", "{{ 'foo bar baz qux'|truncate(9) }}|{{ 'foo bar baz qux'|truncate(9, true) }}|{{ 'foo bar baz qux'|truncate(11, false, '…', 0) }}|{{ 'short'|truncate(3, leeway=2) }}|{{ u|truncate(5, true, '.', 0) }}|{{ 'abcdefghij'|truncate(5, leeway=0) }}|{{ 'a b c d e f g h'|truncate(length=6, leeway=1) }}"),
     ("truncate_err", "{{ 'abcdef'|truncate(2) }}"),
     ("batch_slice", "{{ range(7)|batch(3)|list }}|{{ range(7)|batch(3, 'x')|list }}|{{ range(7)|slice(3)|list }}|{{ range(7)|slice(3, 0)|list }}|{% for row in xs|batch(2) %}{{ row|join }};{% endfor %}|{{ []|batch(2)|list }}|{{ range(2)|slice(4)|list }}"),
     ("center_attr", "[{{ 'ab'|center(7) }}][{{ 'abc'|center(6) }}][{{ 'é'|center(4) }}][{{ 'toolong'|center(3) }}][{{ 5|center(3) }}]{{ d|attr('a') }}|{{ d|attr('items') is callable }}|{{ (msgs|first)|attr('role') }}|{{ d|attr('get')('b') }}"),
    ]
    return ctx, snips


def write_feature_cases(env, path):
    ctx, snips = feature_cases()
    cases = []
    for name, src in snips:
        case = {"name": name, "template": src}
        try:
            case["output"] = env.from_string(src).render(**ctx)
        except Exception as e:  # recorded so the C++ side must fail too
            case["error"] = str(e)
        cases.append(case)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"context": ctx, "fixed_time": FIXED_TIME.isoformat(), "cases": cases}, f,
                  ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=os.path.join(here, "..", "..", "shared"))
    parser.add_argument("--out", default=os.path.join(here, "..", "tests", "chat", "golden"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    env = make_environment()
    convs = conversations()
    with open(os.path.join(args.out, "conversations.json"), "w", encoding="utf-8") as f:
        json.dump({"tools": TOOLS, "conversations": convs}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    total = 0
    for key, (source_path, text) in load_templates(args.shared).items():
        compiled = env.from_string(text)
        cases = []
        for conv_name, messages in convs.items():
            for uses_tools, agp, kwargs in variants(text, conv_name):
                context = {"messages": copy.deepcopy(messages),
                           "tools": copy.deepcopy(TOOLS) if uses_tools else None,
                           "documents": None, "add_generation_prompt": agp,
                           "bos_token": BOS, "eos_token": EOS}
                context.update(copy.deepcopy(kwargs))
                case = {"conversation": conv_name, "tools": uses_tools,
                        "add_generation_prompt": agp, "kwargs": kwargs}
                try:
                    case["output"] = compiled.render(**context)
                except jinja2.exceptions.TemplateError as e:
                    kind = type(e).__name__
                    case["error_type"] = "raise_exception" if kind == "TemplateError" else kind
                    case["error"] = str(e)
                except Exception as e:  # Python errors inside the template (TypeError...)
                    case["error_type"] = type(e).__name__
                    case["error"] = str(e)
                cases.append(case)
        with open(os.path.join(args.out, key + ".json"), "w", encoding="utf-8") as f:
            json.dump({"template": source_path, "bos_token": BOS, "eos_token": EOS,
                       "fixed_time": FIXED_TIME.isoformat(), "cases": cases},
                      f, ensure_ascii=False, indent=1)
            f.write("\n")
        total += len(cases)
        errors = sum(1 for c in cases if "error" in c)
        print(f"{key}: {len(cases)} cases ({errors} errors)")
    print(f"total {total} cases", file=sys.stderr)
    write_feature_cases(env, os.path.join(args.out, "..", "feature_cases.json"))


if __name__ == "__main__":
    main()
