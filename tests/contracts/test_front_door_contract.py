"""The front-door contract (``toolsearch.testing.FrontDoorContract``) over every way into
tool search: the advisor, pydantic-ai, LangGraph, the LangChain middleware, the Agents SDK,
the SDK-loop helper and the MCP proxy, each driven through its framework's own machinery
(``front_doors.py``). A door whose framework is not installed skips with its extra.
"""

from __future__ import annotations

from front_doors import (
    AdvisorDoor,
    AgentsDoor,
    LangChainDoor,
    LangGraphDoor,
    McpProxyDoor,
    PydanticAIDoor,
    SdkLoopDoor,
)

from toolsearch.testing import FrontDoorContract


class TestAdvisor(FrontDoorContract):
    door_class = AdvisorDoor


class TestPydanticAI(FrontDoorContract):
    door_class = PydanticAIDoor
    requires = ("pydantic_ai",)


class TestLangGraph(FrontDoorContract):
    door_class = LangGraphDoor
    requires = ("langgraph", "langchain_core")


class TestLangChain(FrontDoorContract):
    door_class = LangChainDoor
    requires = ("langchain",)


class TestOpenAIAgents(FrontDoorContract):
    door_class = AgentsDoor
    requires = ("agents",)


class TestSdkLoop(FrontDoorContract):
    door_class = SdkLoopDoor


class TestMcpProxy(FrontDoorContract):
    door_class = McpProxyDoor
    requires = ("mcp",)
