"""What the grammar engine enforces, and what it compiles but would let an answer break.

XGrammar drops some JSON-schema keywords (at most a warning on stderr) and lets the answer ignore
them. `engine/grammar.py` refuses a schema that uses one. The probes below feed XGrammar's matcher
JSON that breaks each such keyword and show that it is accepted: if a newer XGrammar starts
enforcing one, its probe fails, and the refusal can go. Also: XGrammar's messages reach the client
without its C++ source paths.
"""

from __future__ import annotations

import json

import pytest

xgr = pytest.importorskip("xgrammar")

from minisgl_edu.engine.grammar import GrammarCompiler, unenforced_keyword  # noqa: E402

I = {"type": "integer"}  # noqa: E741

# keyword path named in the refusal, the schema, a JSON text that breaks it
UNENFORCED = [
    ("allOf", {"allOf": [{"type": "string"}, I]}, '"a"'),
    ("required", {"type": "object", "required": ["a"], "additionalProperties": False}, "{}"),
    ("required", {"type": "object", "properties": {"b": I}, "required": ["a"]}, '{"b": 1}'),
    ("$ref", {"$ref": "http://example.com/s.json"}, '"anything"'),
    ("$ref", {"$ref": "#x"}, '"anything"'),
    ("not", {"not": {"type": "string"}}, '"a"'),
    ("if", {"if": {"type": "string"}, "then": {"maxLength": 1}}, '"aa"'),
    ("uniqueItems", {"type": "array", "items": I, "uniqueItems": True}, "[1, 1]"),
    ("contains", {"type": "array", "items": {}, "contains": {"type": "string"}}, "[1]"),
    ("properties.a.dependentRequired", {"type": "object", "properties": {"a": {
        "type": "object", "properties": {"x": I, "y": I}, "dependentRequired": {"x": ["y"]}}}}, '{"a": {"x": 1}}'),
]  # fmt: skip


@pytest.fixture(scope="module")
def tokenizer(default_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(default_model_dir)


@pytest.fixture(scope="module")
def compiler(tokenizer):
    return GrammarCompiler(tokenizer, 49152, [tokenizer.eos_token_id])


def accepts(tokenizer, compiled, text: str) -> bool:
    """Does XGrammar's matcher take every token of `text`, then the end?"""
    matcher = xgr.GrammarMatcher(compiled)
    ids = tokenizer.encode(text, add_special_tokens=False)
    return all(matcher.accept_token(i) for i in ids) and matcher.accept_token(tokenizer.eos_token_id)


@pytest.mark.parametrize("keyword, schema, breaking", UNENFORCED, ids=[u[0] + str(i) for i, u in enumerate(UNENFORCED)])
def test_xgrammar_lets_the_answer_break_these_keywords_so_they_are_refused(
    tokenizer, compiler, keyword, schema, breaking
):
    raw = compiler._compiler.compile_json_schema(json.dumps(schema), any_whitespace=False)
    assert accepts(tokenizer, raw, breaking), f"XGrammar now enforces {keyword}: the refusal can go"
    assert unenforced_keyword(schema) == keyword
    with pytest.raises(ValueError, match=f"invalid json_schema: {keyword.replace('$', '[$]')}: XGrammar does not"):
        compiler.compile("json_schema", json.dumps(schema))


@pytest.mark.parametrize(
    "schema, good, bad",
    [
        (
            {"type": "object", "properties": {"a": I}, "required": ["a"], "additionalProperties": False},
            '{"a": 1}',
            "{}",
        ),
        ({"allOf": [I]}, "1", '"a"'),
        ({"$ref": "#/$defs/x", "$defs": {"x": I}}, "1", '"a"'),
        ({"anyOf": [{"type": "string"}, I]}, "1", "true"),
        ({"type": "string", "pattern": "^a+$"}, '"aa"', '"b"'),
        ({"type": "array", "items": I, "minItems": 2}, "[1, 2]", "[1]"),
        ({"type": "array", "items": I, "uniqueItems": False}, "[1, 1]", '["a"]'),
    ],
)
def test_keywords_xgrammar_enforces_are_served(tokenizer, compiler, schema, good, bad):
    assert unenforced_keyword(schema) is None
    compiled = compiler._compile("json_schema", json.dumps(schema))
    assert accepts(tokenizer, compiled, good) and not accepts(tokenizer, compiled, bad)


def test_a_property_named_like_a_keyword_is_only_a_name():
    schema = {"type": "object", "properties": {"not": I, "if": I, "allOf": I}, "required": ["not"]}
    assert unenforced_keyword(schema) is None


@pytest.mark.parametrize(
    "kind, spec, reason",
    [
        ("regex", "(a", "Regex parsing error at position 3: The parenthesis is not closed."),
        ("regex", "a{3,1}", "Lower bound is larger than upper bound: 3 > 1"),
        ("ebnf", "root ::= foo", 'EBNF parser error at line 1, column 10: Rule "foo" is not defined'),
        ("json_schema", '{"type": "nonsense"}', 'Unsupported type "nonsense"'),
        ("json_schema", "{not json", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ],
)
def test_compile_errors_name_the_problem_without_library_internals(compiler, kind, spec, reason):
    with pytest.raises(ValueError) as e:
        compiler.compile(kind, spec)
    assert str(e.value) == f"invalid {kind}: {reason}"
