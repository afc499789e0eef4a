"""The advisor chain and the tool loop that runs on it.

The names are imported on first use (:mod:`toolweave._lazy`).
"""

from typing import TYPE_CHECKING

from toolweave._lazy import exports

if TYPE_CHECKING:
    from toolweave.advisors.api import (
        HIGHEST_PRECEDENCE,
        LOWEST_PRECEDENCE,
        Advisor,
        BaseAdvisor,
        CallAdvisor,
        CallAdvisorChain,
        ChatClientRequest,
        ChatClientResponse,
        StreamAdvisor,
        StreamAdvisorChain,
        UnknownAdvisorParamWarning,
    )
    from toolweave.advisors.chain import DefaultAroundAdvisorChain
    from toolweave.advisors.eligibility import (
        DefaultToolExecutionEligibilityChecker,
        StrictToolExecutionEligibilityChecker,
        ToolExecutionEligibilityChecker,
    )
    from toolweave.advisors.memory import BaseChatMemoryAdvisor, MessageChatMemoryAdvisor
    from toolweave.advisors.model_advisors import ChatModelCallAdvisor, ChatModelStreamAdvisor
    from toolweave.advisors.structured_output import StructuredOutputAdvisor
    from toolweave.advisors.tool_calling import (
        MAX_ROUNDS_FINISH_REASON,
        REPEATED_TOOL_CALL_FINISH_REASON,
        TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON,
        ToolCallingAdvisor,
    )
    from toolweave.advisors.tool_search import ToolSearchSessions, ToolSearchToolCallingAdvisor
    from toolweave.advisors.usage import UsageAccumulator

__all__ = [
    'HIGHEST_PRECEDENCE',
    'LOWEST_PRECEDENCE',
    'MAX_ROUNDS_FINISH_REASON',
    'REPEATED_TOOL_CALL_FINISH_REASON',
    'TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON',
    'Advisor',
    'BaseAdvisor',
    'BaseChatMemoryAdvisor',
    'CallAdvisor',
    'CallAdvisorChain',
    'ChatClientRequest',
    'ChatClientResponse',
    'ChatModelCallAdvisor',
    'ChatModelStreamAdvisor',
    'DefaultAroundAdvisorChain',
    'DefaultToolExecutionEligibilityChecker',
    'MessageChatMemoryAdvisor',
    'StreamAdvisor',
    'StreamAdvisorChain',
    'StrictToolExecutionEligibilityChecker',
    'StructuredOutputAdvisor',
    'ToolCallingAdvisor',
    'ToolExecutionEligibilityChecker',
    'ToolSearchSessions',
    'ToolSearchToolCallingAdvisor',
    'UnknownAdvisorParamWarning',
    'UsageAccumulator',
]

if not TYPE_CHECKING:  # type checkers see the imports above; an unknown name stays an error for them
    __getattr__, __dir__ = exports(
        __name__,
        globals(),
        {
            'toolweave.advisors.api': (
                'HIGHEST_PRECEDENCE',
                'LOWEST_PRECEDENCE',
                'Advisor',
                'BaseAdvisor',
                'CallAdvisor',
                'CallAdvisorChain',
                'ChatClientRequest',
                'ChatClientResponse',
                'StreamAdvisor',
                'StreamAdvisorChain',
                'UnknownAdvisorParamWarning',
            ),
            'toolweave.advisors.chain': ('DefaultAroundAdvisorChain',),
            'toolweave.advisors.eligibility': (
                'DefaultToolExecutionEligibilityChecker',
                'StrictToolExecutionEligibilityChecker',
                'ToolExecutionEligibilityChecker',
            ),
            'toolweave.advisors.memory': ('BaseChatMemoryAdvisor', 'MessageChatMemoryAdvisor'),
            'toolweave.advisors.model_advisors': ('ChatModelCallAdvisor', 'ChatModelStreamAdvisor'),
            'toolweave.advisors.structured_output': ('StructuredOutputAdvisor',),
            'toolweave.advisors.tool_calling': (
                'MAX_ROUNDS_FINISH_REASON',
                'REPEATED_TOOL_CALL_FINISH_REASON',
                'TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON',
                'ToolCallingAdvisor',
            ),
            'toolweave.advisors.tool_search': ('ToolSearchSessions', 'ToolSearchToolCallingAdvisor'),
            'toolweave.advisors.usage': ('UsageAccumulator',),
        },
    )
