"""verl's continuous tokens at the cost of the new turn: the same token ids, without tokenizing the tools again.

verl (0.9) tokenizes each turn's tool results and user replies by rendering the chat template twice, over a
synthetic prefix (system, user, an assistant with the calls) with and without the new messages, tokenizing both,
and keeping the second one's extra tokens. Both renders hold the tools in the system prompt: with a task's tools
that is thousands of tokens a turn to get a few dozen, and it cost more than the world's steps (support-refund
with 4 tools: 2,350 tokens a render, 7 renders an episode). `TurnRenderer` replaces the builder's
`render_delta_token_id` with one that renders both texts (the prefix's once per tool list), checks that the full
text extends the prefix's, and tokenizes only the added text, when tokenizing it alone provably gives the same
ids as the tail of the full text's tokens; else verl's own method runs.

Why the ids are the same: a fast (`tokenizers`) tokenizer first cuts the text at its added tokens (the chat
template's `<|im_start|>` and the like), then normalizes, pre-tokenizes and tokenizes each piece on its own. When
the added text starts with an added token that no whitespace stripping, word-boundary rule or normalization can
move, and no added token could span the cut, the cut is one the tokenizer makes anyway, so the tokens before it
are the prefix's own and the tokens after it are the added text's own (verl then checks just that: the full ids
start with the prefix's). The first prompt of a row is the same in each of its trajectories (a GRPO group), so
it is tokenized once per tool list and prompt (`TurnRenderer.initial`).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from verl.utils.tokenizer.continuous_token import ContinuousTokenBuilder

CACHED = 256
"""Prefix texts and first prompts kept per tokenizer (least recently used go first)."""
TOKENIZING_OPTIONS = frozenset({"tokenizer_kwargs", "truncation", "max_length", "padding", "return_tensors"})
"""Chat template options that change how the rendered text is tokenized: with any of them, verl's own renders."""


class Cut:
    """Where a text may be cut without changing its tokens, for one tokenizer's added tokens."""

    def __init__(self, tokenizer: Any) -> None:
        added = [token for token in getattr(tokenizer, "added_tokens_decoder", {}).values() if token.content]
        self.openings = sorted(  # longest first: the tokenizer takes the longest match at a place
            (
                (
                    token.content,
                    not (token.lstrip or token.single_word or token.normalized or token.content[0].isspace()),
                )
                for token in added
            ),
            key=lambda opening: len(opening[0]),
            reverse=True,
        )
        """(an added token's text, whether it stays put: no whitespace stripped into it, no word-boundary rule, not
        matched after normalization)."""
        self.contents = [token.content for token in added if len(token.content) > 1]

    def safe(self, before: str, after: str) -> bool:
        """Whether tokenizing `before + after` gives `before`'s tokens, then `after`'s: `after` opens with an added
        token that stays put, and no added token could begin in `before` and end in `after`."""
        opening = next((stays for content, stays in self.openings if after.startswith(content)), False)
        if not opening:
            return False
        return not any(
            before.endswith(content[:i]) and after.startswith(content[i:])
            for content in self.contents
            for i in range(1, len(content))
        )


class Kept:
    """The last `CACHED` values by (an object's id, a text key), each kept with its object so the id stays its own;
    locked: verl builds first prompts on its executor's threads. Bounded, since a long run meets many objects."""

    def __init__(self) -> None:
        self._values: OrderedDict[tuple[int, str], tuple[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, owner: Any, key: str) -> Any:
        with self._lock:
            found = self._values.get((id(owner), key))
            if found is None or found[0] is not owner:
                return None
            self._values.move_to_end((id(owner), key))
            return found[1]

    def put(self, owner: Any, key: str, value: Any) -> None:
        with self._lock:
            self._values[(id(owner), key)] = (owner, value)
            self._values.move_to_end((id(owner), key))
            while len(self._values) > CACHED:
                self._values.popitem(last=False)


class _Shared:
    """What every builder over one tokenizer and set of template options reuses: its cut rule, the prefix texts
    and the first prompts' ids (verl makes a builder per trajectory)."""

    def __init__(self, tokenizer: Any, options: dict[str, Any]) -> None:
        self.tokenizer, self.options, self.cut = tokenizer, options, Cut(tokenizer)
        self.texts = Kept()
        """(the tools, the prefix messages' JSON) → the prefix's text."""
        self.prompts = Kept()
        """(the tools, the first messages' JSON) → the first prompt's ids."""
        self.incremental = self.fallbacks = 0
        """How many deltas were tokenized alone, and how many went to verl's own method (for tests)."""
        self.keeps_prompts = "strftime_now" not in str(getattr(tokenizer, "chat_template", ""))
        """Whether a first prompt's ids may be reused: not when the template writes today's date into it."""


_SHARED: dict[tuple[int, str], tuple[Any, _Shared]] = {}
"""(id of a tokenizer, its template options' JSON) → (the tokenizer, kept so the id stays its own; the state)."""


def counts() -> dict[str, int]:
    """How many turns were tokenized alone, and how many by verl's own renders, in this process."""
    states = [state for _, state in _SHARED.values()]
    return {"incremental": sum(s.incremental for s in states), "fallbacks": sum(s.fallbacks for s in states)}


def shared(tokenizer: Any, options: dict[str, Any]) -> _Shared:
    """The state shared by the builders over `tokenizer` with template `options`."""
    key = (id(tokenizer), _key(options))
    found = _SHARED.get(key)
    if found is None or found[0] is not tokenizer:
        found = _SHARED[key] = (tokenizer, _Shared(tokenizer, dict(options)))
    return found[1]


class TurnRenderer:
    """A continuous-token builder's `render_delta_token_id` and `build_initial_tokens`, tokenizing only the new
    messages' text and each first prompt once (see the module docstring); `TurnRenderer.install(builder)`."""

    def __init__(self, builder: ContinuousTokenBuilder) -> None:
        self.state = shared(builder.tokenizer, builder.chat_template_kwargs)
        self.verls_delta: Callable[..., list[int]] = builder.render_delta_token_id
        self.verls_initial: Callable[..., list[int]] = builder.build_initial_tokens

    @classmethod
    def install(cls, builder: ContinuousTokenBuilder) -> TurnRenderer | None:
        """Make `builder` render this way, if it renders through the tokenizer's chat template as verl's base
        builder does (multimodal builders render through a processor; slow tokenizers cut differently)."""
        base = ContinuousTokenBuilder
        if (
            type(builder)._render_tokens is not base._render_tokens
            or type(builder).render_delta_token_id is not base.render_delta_token_id
            or type(builder).build_initial_tokens is not base.build_initial_tokens
            or not getattr(builder.tokenizer, "is_fast", False)
            or TOKENIZING_OPTIONS & set(builder.chat_template_kwargs)
        ):
            return None
        renderer = cls(builder)
        builder.render_delta_token_id = renderer.delta  # instance attributes: verl's own code calls them as before
        builder.build_initial_tokens = renderer.initial
        return renderer

    def delta(
        self,
        prefix_messages: list[dict[str, Any]],
        appended_messages: list[dict[str, Any]],
        *,
        add_generation_prompt: bool = False,
        tools: list[dict[str, Any]] | None = None,
    ) -> list[int]:
        """The tokens `appended_messages` (and the generation prompt) add after `prefix_messages`."""
        state = self.state
        prefix = self._prefix_text(prefix_messages, tools)
        full = self._text(prefix_messages + appended_messages, add_generation_prompt, tools)
        if (
            prefix is None
            or full is None
            or not full.startswith(prefix)
            or not state.cut.safe(prefix, full[len(prefix) :])
        ):
            state.fallbacks += 1
            return self.verls_delta(
                prefix_messages, appended_messages, add_generation_prompt=add_generation_prompt, tools=tools
            )
        state.incremental += 1
        return list(state.tokenizer.encode(full[len(prefix) :], add_special_tokens=False))

    def initial(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, **media: Any
    ) -> list[int]:
        """The first prompt's ids, tokenized once per tool list and prompt (a copy each time)."""
        media_given = any(value is not None for name, value in media.items() if name != "mm_inputs_out")
        if media_given or not self.state.keeps_prompts:
            return self.verls_initial(messages, tools=tools, **media)
        key = _key(messages)
        ids = self.state.prompts.get(tools, key)
        if ids is None:
            ids = self.verls_initial(messages, tools=tools, **media)
            self.state.prompts.put(tools, key, ids)
        return list(ids)

    def _prefix_text(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str | None:
        key = _key(messages)
        text: str | None = self.state.texts.get(tools, key)
        if text is None:
            text = self._text(messages, False, tools)
            if text is not None:
                self.state.texts.put(tools, key, text)
        return text

    def _text(self, messages: list[dict[str, Any]], generation: bool, tools: list[dict[str, Any]] | None) -> str | None:
        """The chat template's text, or None when it fails (verl's own method then retries as verl does)."""
        try:
            text = self.state.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=generation, tools=tools, **self.state.options
            )
        except Exception:  # verl's renderer has its own retry (a template that needs a user message first)
            return None
        return text if isinstance(text, str) else None


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
