"""``grpo_rewards.verl.PythonTool`` called the way verl's agent loop calls a tool.

verl's ``ToolAgentLoop._call_tool`` (verl/experimental/agent_loop/tool_agent_loop.py) does,
for every tool call: ``instance_id, _ = await tool.create(create_kwargs=...)``, then
``await tool.execute(instance_id, json.loads(arguments), agent_data=agent_data)``, then
``await tool.release(instance_id)``; the tool registry builds the tool as
``cls(config=<the YAML's config>, tool_schema=OpenAIFunctionToolSchema | None)``.

verl's ``tools/base_tool.py`` and ``tools/schemas.py`` are taken unchanged from its PyPI wheel
(``pip download verl --no-deps``; skipped when the registry cannot be reached) and imported as
``verl.tools`` from a package holding only them (importing ``verl`` itself pulls torch and
Ray); ``rollout_trace_op``, a tracing decorator, is a pass-through there.
"""
import asyncio
import glob
import importlib
import json
import subprocess
import sys
import types
import zipfile

import pytest

import grpo_rewards.verl as verl_adapter

CONFIG = {"type": "native", "time_limit_ms": 500, "memory_mb": 128}

SCHEMA = {
    "type": "function",
    "function": {
        "name": "code_interpreter",
        "description": "A tool for executing code.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "The code to execute."}},
            "required": ["code"],
        },
    },
}


@pytest.fixture(scope="module")
def verl_tools(tmp_path_factory):
    where = tmp_path_factory.mktemp("verl_tools")
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "verl", "--no-deps", "-q", "-d", str(where)],
                       check=True, timeout=300, capture_output=True)
        try:
            import pydantic  # noqa: F401
        except ImportError:
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(where / "deps"), "pydantic"],
                           check=True, timeout=300, capture_output=True)
            sys.path.insert(0, str(where / "deps"))
    except (subprocess.SubprocessError, OSError) as e:
        pytest.skip(f"verl's wheel or pydantic could not be downloaded: {e}")
    wheel = sorted(glob.glob(str(where / "verl-*.whl")))[-1]
    shim = where / "shim"
    (shim / "verl" / "tools").mkdir(parents=True)
    (shim / "verl" / "utils").mkdir()
    for init in ("verl", "verl/tools", "verl/utils"):
        (shim / init / "__init__.py").write_text("")
    (shim / "verl" / "utils" / "rollout_trace.py").write_text("def rollout_trace_op(func):\n    return func\n")
    with zipfile.ZipFile(wheel) as z:
        for name in ("base_tool.py", "schemas.py"):
            (shim / "verl" / "tools" / name).write_bytes(z.read(f"verl/tools/{name}"))
    saved = {k: v for k, v in sys.modules.items() if k == "verl" or k.startswith("verl.")}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, str(shim))
    adapter = importlib.reload(verl_adapter)
    base = importlib.import_module("verl.tools.base_tool")
    schemas = importlib.import_module("verl.tools.schemas")
    yield types.SimpleNamespace(adapter=adapter, BaseTool=base.BaseTool, schemas=schemas)
    sys.path.remove(str(shim))
    for k in [k for k in sys.modules if k == "verl" or k.startswith("verl.")]:
        del sys.modules[k]
    sys.modules.update(saved)
    importlib.reload(verl_adapter)


def registry_build(class_name, config, tool_schema, schemas):
    """verl.tools.utils.tool_registry: the class by its dotted name, then cls(config=, tool_schema=)."""
    module_name, cls_name = class_name.rsplit(".", 1)
    tool_cls = getattr(importlib.import_module(module_name), cls_name)
    schema = schemas.OpenAIFunctionToolSchema.model_validate(tool_schema) if tool_schema else None
    return tool_cls(config=config, tool_schema=schema)


async def call_tool(tool, arguments, agent_data):
    """ToolAgentLoop._call_tool: one instance per call, released after it."""
    instance_id = None
    try:
        instance_id, _ = await tool.create(create_kwargs={})
        return await tool.execute(instance_id, json.loads(arguments), agent_data=agent_data)
    finally:
        if instance_id:
            await tool.release(instance_id)


def code(source):
    return json.dumps({"code": source})


def test_without_verl_the_same_calls_work():
    # First in the file: the fixture below puts verl's tool files on the path for the rest.
    if importlib.util.find_spec("verl") is not None:
        pytest.skip("verl is importable here")
    tool_cls = verl_adapter._make_python_tool()
    tool = tool_cls(config={"time_limit_ms": 500}, tool_schema=None)
    assert tool.name == "code_interpreter"

    async def run():
        agent = types.SimpleNamespace(request_id="r")
        await call_tool(tool, code("v = 3"), agent)
        return (await call_tool(tool, code("v * 3"), agent))[0].text

    assert asyncio.run(run()) == "9\n"
    tool.close()


def test_registered_against_verls_base_tool(verl_tools):
    tool = registry_build("grpo_rewards.verl.PythonTool", CONFIG, SCHEMA, verl_tools.schemas)
    assert isinstance(tool, verl_tools.BaseTool)
    assert tool.name == "code_interpreter"
    assert tool.get_openai_tool_schema().function.parameters.required == ["code"]
    # Without a schema in the YAML, the tool's default is used.
    default = registry_build("grpo_rewards.verl.PythonTool", CONFIG, None, verl_tools.schemas)
    assert default.name == "code_interpreter"
    assert "code" in default.tool_schema.function.parameters.properties

    async def rollouts():
        a, b = types.SimpleNamespace(request_id="a" * 32), types.SimpleNamespace(request_id="b" * 32)
        response, reward, metrics = await call_tool(tool, code("x = 40"), a)
        assert isinstance(response, verl_tools.schemas.ToolResponse)
        assert (response.text, reward, metrics["status"]) == ("(no output)", 0.0, "ok")
        await call_tool(tool, code("x = 1"), b)
        # Each call is a new instance, but the trajectory keeps its interpreter.
        response, _, _ = await call_tool(tool, code("print(x + 2)"), a)
        assert response.text == "42\n"
        response, _, _ = await call_tool(tool, code("x"), b)
        assert response.text == "1\n"
        # Calls of one turn run together (asyncio.gather in the loop): they take turns.
        got = await asyncio.gather(*(call_tool(tool, code("x += 1"), a) for _ in range(4)))
        assert all(m["status"] == "ok" for _, _, m in got)
        assert (await call_tool(tool, code("x"), a))[0].text == "44\n"
        # A hostile loop is output for the model; the next call works.
        response, _, metrics = await call_tool(tool, code("while True: pass"), a)
        assert metrics["status"] == "timeout" and "[sandbox]" in response.text
        assert (await call_tool(tool, code("print('alive')"), a))[0].text == "alive\n"
        response, _, metrics = await call_tool(tool, json.dumps({"source": "1"}), a)
        assert metrics["status"] == "bad_arguments"
        assert await tool.calc_reward("any") == 0.0

    asyncio.run(rollouts())
    tool.close()


def test_instance_state_and_interpreter_bounds(verl_tools):
    per_instance = registry_build("grpo_rewards.verl.PythonTool", {**CONFIG, "state": "instance"}, None,
                                  verl_tools.schemas)
    bounded = registry_build("grpo_rewards.verl.PythonTool", {**CONFIG, "max_interpreters": 2}, None,
                             verl_tools.schemas)

    async def run():
        agent = types.SimpleNamespace(request_id="t")
        # A fresh interpreter per instance: verl's loop makes one per call.
        await call_tool(per_instance, code("y = 1"), agent)
        assert "NameError" in (await call_tool(per_instance, code("y"), agent))[0].text
        # An instance kept across calls (a caller that creates once per trajectory) keeps state.
        instance_id, _ = await per_instance.create()
        await per_instance.execute(instance_id, {"code": "z = 5"})
        assert (await per_instance.execute(instance_id, {"code": "z"}))[0].text == "5\n"
        await per_instance.release(instance_id)
        # Past max_interpreters, the least recently used trajectory's interpreter is freed.
        for t in ("t1", "t2", "t3"):
            await call_tool(bounded, code(f"name = {t!r}"), types.SimpleNamespace(request_id=t))
        assert len(bounded._trajectories) == 2
        text = (await call_tool(bounded, code("name"), types.SimpleNamespace(request_id="t1")))[0].text
        assert "NameError" in text
        assert (await call_tool(bounded, code("name"), types.SimpleNamespace(request_id="t3")))[0].text == "'t3'\n"

    asyncio.run(run())
    per_instance.close()
    bounded.close()
    with pytest.raises(ValueError, match="state"):
        registry_build("grpo_rewards.verl.PythonTool", {"state": "global"}, None, verl_tools.schemas)
