"""An A2A 0.3 agent on a2a-sdk 0.3: answers every message with `echo: TEXT`."""
import sys

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentSkill
from a2a.utils import new_agent_text_message


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await event_queue.enqueue_event(new_agent_text_message(f"echo: {context.get_user_input()}"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise RuntimeError("nothing to cancel")


port = int(sys.argv[1])
card = AgentCard(
    name="echo-03", description="Echoes.", url=f"http://127.0.0.1:{port}/", version="1.0.0",
    capabilities=AgentCapabilities(streaming=False), default_input_modes=["text"], default_output_modes=["text"],
    skills=[AgentSkill(id="echo", name="echo", description="Echoes.", tags=["echo"])],
)
handler = DefaultRequestHandler(agent_executor=Echo(), task_store=InMemoryTaskStore())
uvicorn.run(A2AStarletteApplication(agent_card=card, http_handler=handler).build(), host="127.0.0.1", port=port,
            log_level="warning")
