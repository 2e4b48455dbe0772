"""The interpreter as TRL's tool and environment, called the way TRL 1.16's GRPOTrainer calls
them (trl/trainer/grpo_trainer.py: the environment probe in ``__init__``, the per-batch pool
and ``reset(**row)`` in ``_generate_and_score_completions``, the tool dicts and
``tool(**arguments)`` in ``_tool_call_loop``), and their schemas through transformers'
``get_json_schema`` (what TRL and the chat templates render tools with) where installed."""
import functools
import inspect

import pytest

from grpo_rewards.trl import PythonEnvironment, run_python


def probe(factory):
    """GRPOTrainer.__init__: one instance, `reset` required, other public functions are tools."""
    instance = factory()
    has_reset, methods = False, []
    for member_name, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction):
        if member_name == "reset":
            has_reset = True
        elif member_name == "get_reward":
            pass
        elif not member_name.startswith("_"):
            methods.append(getattr(instance, member_name))
    assert has_reset
    return instance, methods


def tool_dicts(standalone, environments):
    """GRPOTrainer._generate_and_score_completions: per rollout, name -> callable."""
    dicts = []
    for environment in environments:
        methods = [
            getattr(environment, name)
            for name, _ in inspect.getmembers(type(environment), predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")
        ]
        dicts.append({tool.__name__: tool for tool in standalone + methods if not inspect.iscoroutinefunction(tool)})
    return dicts


def call(tools, name, arguments):
    """GRPOTrainer._tool_call_loop: a failing tool becomes {"error": ...}; content is str()."""
    try:
        if name not in tools:
            raise ValueError(f"Tool {name} not found.")
        result = tools[name](**arguments)
    except Exception as e:
        result = {"error": str(e)}
    return {"role": "tool", "name": name, "content": str(result)}


def test_environment_keeps_state_per_rollout_and_reset_clears_it():
    first, methods = probe(PythonEnvironment)
    assert [m.__name__ for m in methods] == ["python"]
    # The pool grows to the batch's rollouts; each rollout has its own instance.
    pool = [first, PythonEnvironment()]
    rows = [{"prompt": [{"role": "user", "content": "a"}], "answer": "1"},
            {"prompt": [{"role": "user", "content": "b"}], "answer": "2"}]
    for environment, row in zip(pool, rows):
        assert environment.reset(**row) is None  # the prompt is left as it is
    tools = tool_dicts([], pool)
    assert call(tools[0], "python", {"code": "x = 20"})["content"] == "(no output)"
    assert call(tools[1], "python", {"code": "x = 1"})["content"] == "(no output)"
    assert call(tools[0], "python", {"code": "print(x + 22)"})["content"] == "42\n"
    assert call(tools[1], "python", {"code": "x"})["content"] == "1\n"
    # A program error is output the model sees, not a tool failure.
    message = call(tools[0], "python", {"code": "1/0"})
    assert "ZeroDivisionError" in message["content"] and "error" not in message["content"][:8]
    # Wrong arguments are TRL's tool failure.
    assert call(tools[0], "python", {"source": "1"})["content"].startswith("{'error'")
    # The next batch reuses the instances after reset: nothing of the last rollout remains.
    pool[0].reset(**rows[0])
    assert "NameError" in call(tools[0], "python", {"code": "x"})["content"]
    for environment in pool:
        environment._close()


def test_environment_limits_through_a_factory_and_hostile_code():
    factory = functools.partial(PythonEnvironment, time_limit_ms=200, output_bytes=2048)
    environment, _ = probe(factory)
    environment.reset()
    tools = tool_dicts([], [environment])[0]
    out = call(tools, "python", {"code": "while True: pass"})["content"]
    assert "[sandbox]" in out, out
    out = call(tools, "python", {"code": "print('y' * 100_000)"})["content"]
    assert len(out.split("\n")[0]) <= 2048 and "output cut" in out, out[-200:]
    assert call(tools, "python", {"code": "print('ok')"})["content"] == "ok\n"
    with PythonEnvironment() as scoped:
        scoped.python("1")
    assert scoped._interpreter is None


def test_standalone_tool_runs_each_call_fresh():
    # With no environment, a rollout's tools are the standalone ones.
    tools = {tool.__name__: tool for tool in [run_python]}
    assert call(tools, "run_python", {"code": "y = 3\nprint(y * 2)"})["content"] == "6\n"
    assert "NameError" in call(tools, "run_python", {"code": "y"})["content"]


def test_schemas_are_what_tool_calling_expects():
    transformers_utils = pytest.importorskip("transformers.utils")
    schema = transformers_utils.get_json_schema(run_python)
    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == "run_python"
    assert function["parameters"]["properties"]["code"]["type"] == "string"
    assert function["parameters"]["required"] == ["code"]
    assert "Python" in function["description"]
    # TRL hands the environment's bound methods to the chat template: `self` is not a parameter.
    environment = PythonEnvironment()
    schema = transformers_utils.get_json_schema(environment.python)
    assert schema["function"]["name"] == "python"
    assert list(schema["function"]["parameters"]["properties"]) == ["code"]
