"""The advisor chain and the tool loop that runs on it."""

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
)
from toolweave.advisors.chain import DefaultAroundAdvisorChain
from toolweave.advisors.eligibility import (
    DefaultToolExecutionEligibilityChecker,
    StrictToolExecutionEligibilityChecker,
    ToolExecutionEligibilityChecker,
)
from toolweave.advisors.model_advisors import ChatModelCallAdvisor, ChatModelStreamAdvisor
from toolweave.advisors.tool_calling import TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON, ToolCallingAdvisor
from toolweave.advisors.usage import UsageAccumulator

__all__ = [
    'HIGHEST_PRECEDENCE',
    'LOWEST_PRECEDENCE',
    'TOOL_CALL_LIMIT_EXCEEDED_FINISH_REASON',
    'Advisor',
    'BaseAdvisor',
    'CallAdvisor',
    'CallAdvisorChain',
    'ChatClientRequest',
    'ChatClientResponse',
    'ChatModelCallAdvisor',
    'ChatModelStreamAdvisor',
    'DefaultAroundAdvisorChain',
    'DefaultToolExecutionEligibilityChecker',
    'StreamAdvisor',
    'StreamAdvisorChain',
    'StrictToolExecutionEligibilityChecker',
    'ToolCallingAdvisor',
    'ToolExecutionEligibilityChecker',
    'UsageAccumulator',
]
