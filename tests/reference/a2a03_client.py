"""An A2A 0.3 client on a2a-sdk 0.3: read the 0.3 card, message/send, tasks/get; print JSON of what came back."""
import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, A2AClient
from a2a.types import GetTaskRequest, MessageSendParams, SendMessageRequest, TaskQueryParams


async def main(url: str, text: str) -> None:
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card(relative_card_path="/.well-known/agent.json")
        client = A2AClient(http, agent_card=card)
        message = {"role": "user", "parts": [{"kind": "text", "text": text}], "messageId": uuid.uuid4().hex}
        sent = await client.send_message(SendMessageRequest(id="1", params=MessageSendParams(message=message)))
        task = sent.root.result
        got = await client.get_task(GetTaskRequest(id="2", params=TaskQueryParams(id=task.id)))
        texts = [p.root.text for a in got.root.result.artifacts or [] for p in a.parts if p.root.kind == "text"]
        state = got.root.result.status.state
        print(json.dumps({"card_url": card.url, "protocol": card.protocol_version, "state": state, "texts": texts}))


asyncio.run(main(sys.argv[1], sys.argv[2]))
