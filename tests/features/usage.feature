@pure
Feature: session::usage
  Usage totals (issue 38): the input, output, cache_read, cache_write and reasoning tokens and the
  cost_usd that assistant messages carry in usage, and the messages by role, summed for the branch
  ending at a leaf (default: the active leaf) and for the whole session. The store keeps them as
  entries are written, so a read does not grow with the session; an update-message that
  replaces usage takes the old one out; a replay rebuilds them exactly.

  Scenario: totals of the active branch, another branch and the whole session
    Given a session "s1"
    And I called "session::append" with {"session_id": "s1", "entry_id": "u1", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "a1", "message": {"role": "assistant", "content": [{"type": "text", "text": "one"}], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2, "usage": {"input": 100, "output": 20, "cache_read": 50, "cache_write": 5, "reasoning": 3, "cost_usd": 0.25}}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "b1", "parent_id": "u1", "message": {"role": "assistant", "content": [{"type": "text", "text": "two"}], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 3, "usage": {"input": 7, "output": 3, "cost_usd": 0.125}}}
    When I call "session::usage" with {"session_id": "s1"}
    Then the response is {"session_id": "s1", "leaf": "b1", "branch": {"input": 7, "output": 3, "cache_read": 0, "cache_write": 0, "reasoning": 0, "cost_usd": 0.125, "messages": {"user": 1, "assistant": 1, "function_result": 0, "custom": 0}}, "session": {"input": 107, "output": 23, "cache_read": 50, "cache_write": 5, "reasoning": 3, "cost_usd": 0.375, "messages": {"user": 1, "assistant": 2, "function_result": 0, "custom": 0}}}
    When I call "session::usage" with {"session_id": "s1", "leaf": "a1"}
    Then the response contains {"leaf": "a1", "branch": {"input": 100, "output": 20, "cache_read": 50, "cache_write": 5, "reasoning": 3, "cost_usd": 0.25, "messages": {"user": 1, "assistant": 1, "function_result": 0, "custom": 0}}}
    When I call "session::usage" with {"session_id": "s1", "leaf": "u1"}
    Then the response contains {"branch": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "reasoning": 0, "cost_usd": 0.0, "messages": {"user": 1, "assistant": 0, "function_result": 0, "custom": 0}}}

  # Prevents: a replaced usage counted twice, or a replay that disagrees with the kept totals.
  Scenario: update-message replacing usage takes the old one out, and a restart agrees
    Given a session "s1"
    And I called "session::append" with {"session_id": "s1", "entry_id": "a1", "message": {"role": "assistant", "content": [], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2, "usage": {"input": 100, "output": 20, "cost_usd": 0.25}}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "a2", "message": {"role": "assistant", "content": [], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 3, "usage": {"input": 1, "output": 2}}}
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "done"}], "usage": {"input": 40, "output": 4}}
    Then the response contains {"updated": true}
    When I call "session::usage" with {"session_id": "s1"}
    Then the response contains {"branch": {"input": 41, "output": 6, "cache_read": 0, "cache_write": 0, "reasoning": 0, "cost_usd": 0.0, "messages": {"user": 0, "assistant": 2, "function_result": 0, "custom": 0}}}
    And the response field "session.input" is 41
    When the store restarts
    And I call "session::usage" with {"session_id": "s1"}
    Then the response field "branch.input" is 41
    And the response field "session.output" is 6
    And no events fired

  Scenario: a session without entries has zero totals and no leaf
    Given a session "s1"
    When I call "session::usage" with {"session_id": "s1"}
    Then the response is {"session_id": "s1", "leaf": null, "branch": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "reasoning": 0, "cost_usd": 0.0, "messages": {"user": 0, "assistant": 0, "function_result": 0, "custom": 0}}, "session": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "reasoning": 0, "cost_usd": 0.0, "messages": {"user": 0, "assistant": 0, "function_result": 0, "custom": 0}}}

  Scenario: bad input is refused and changes nothing
    Given a session "s1"
    When I call "session::usage" with {"session_id": "nope"}
    Then the call fails with "session/not_found"
    When I call "session::usage" with {"session_id": "s1", "leaf": "nope"}
    Then the call fails with "session/entry_not_found"
    When I call "session::usage" with {"session_id": 5}
    Then the call fails with "session/invalid_request"
    And no events fired
