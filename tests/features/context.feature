@pure
Feature: session::compact and session::context
  Compaction records (issue 38) are plain custom entries of type "compaction" (v1.0.32 replays
  them); session::compact checks them before it appends one. session::context answers what a
  model is given for a branch: the newest valid compaction on that branch, then the message
  entries from its first kept entry to the leaf, with a token estimate and, under a token_budget,
  the oldest whole turns dropped.

  # Prevents: the summary returned as a stored message, or the compacted part still sent.
  Scenario: the context starts at the compaction's first kept entry, summary apart
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text  |
      | e1 | user      | one   |
      | e2 | assistant | two   |
      | e3 | user      | three |
      | e4 | assistant | four  |
    When I call "session::compact" with {"session_id": "s1", "summary": "they counted", "first_kept_entry_id": "e3", "tokens_before": 100, "entry_id": "c1"}
    Then the response contains {"entry_id": "c1", "parent_id": "e4"}
    And the events fired are "session::message-added"
    Given "s1" has entries:
      | id | role | text |
      | e5 | user | five |
    When I call "session::context" with {"session_id": "s1"}
    Then the response contains {"session_id": "s1", "leaf": "e5", "compaction": {"entry_id": "c1", "summary": "they counted", "first_kept_entry_id": "e3", "tokens_before": 100}, "ignored": []}
    And the "entry_id" values at "messages" are "e3, e4, e5"
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "c1"}
    Then the response field "entry.custom_type" is "compaction"

  # Prevents: a sibling branch's newer compaction hiding the right one (cloudflare/agents 2120).
  Scenario: only a compaction on the branch itself applies
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | e1 | user      | a    |
      | e2 | assistant | b    |
      | e3 | user      | c    |
      | e4 | assistant | d    |
    And I called "session::compact" with {"session_id": "s1", "summary": "branch A", "first_kept_entry_id": "e3", "entry_id": "ca"}
    And "s1" has entries:
      | id | role      | text | parent |
      | f3 | user      | x    | e2     |
      | f4 | assistant | y    |        |
    And I called "session::compact" with {"session_id": "s1", "summary": "branch B", "first_kept_entry_id": "f4", "entry_id": "cb"}
    When I call "session::context" with {"session_id": "s1", "leaf": "ca"}
    Then the response field "compaction.summary" is "branch A"
    And the "entry_id" values at "messages" are "e3, e4"
    When I call "session::context" with {"session_id": "s1"}
    Then the response field "compaction.summary" is "branch B"
    And the "entry_id" values at "messages" are "f4"
    When I call "session::context" with {"session_id": "s1", "leaf": "e2"}
    Then the response contains {"compaction": null, "leaf": "e2"}
    And the "entry_id" values at "messages" are "e1, e2"

  # Prevents: an invalid compaction record (appended with plain append) breaking the context.
  Scenario: an invalid compaction record is ignored with its reason
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | e1 | user      | a    |
      | e2 | assistant | b    |
    And I called "session::compact" with {"session_id": "s1", "summary": "good", "first_kept_entry_id": "e2", "entry_id": "c1"}
    When I call "session::append" with {"session_id": "s1", "entry_id": "bad", "custom": {"custom_type": "compaction", "data": {"summary": "lost", "first_kept_entry_id": "nope"}}}
    Then the call succeeds
    When I call "session::append" with {"session_id": "s1", "entry_id": "odd", "custom": {"custom_type": "compaction", "data": {"note": 1}}}
    And I call "session::context" with {"session_id": "s1"}
    Then the response field "compaction.entry_id" is "c1"
    And the "entry_id" values at "ignored" are "odd, bad"
    And the response field "ignored.1.reason" is "first_kept_entry_id nope is not on the path before the compaction"
    And the "entry_id" values at "messages" are "e2"

  # Prevents: a compaction cut between a function call and its result, or off the branch.
  Scenario: compact refuses a cut that splits a call from its result, or an entry off the path
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text | calls | answers |
      | e1 | user            | q    |       |         |
      | e2 | assistant       | go   | k1    |         |
      | e3 | function_result | r    |       | k1      |
      | e4 | assistant       | done |       |         |
    And the store is remembered
    When I call "session::compact" with {"session_id": "s1", "summary": "s", "first_kept_entry_id": "e3"}
    Then the call fails with "session/invalid_request"
    And the error message contains "separates function call k1 from its result"
    And no events fired
    When I call "session::compact" with {"session_id": "s1", "summary": "s", "first_kept_entry_id": "zz"}
    Then the call fails with "session/invalid_request"
    And the error message contains "is not on the path"
    When I call "session::compact" with {"session_id": "s1", "summary": "s", "first_kept_entry_id": "e4", "parent_id": "e2"}
    Then the call fails with "session/invalid_request"
    And the store is as remembered
    When I call "session::compact" with {"session_id": "s1", "summary": "s", "first_kept_entry_id": "e2"}
    Then the call succeeds

  # Prevents: a budget that splits a call from its result, or drops the newest turn.
  Scenario: a token budget drops the oldest whole turns, never a call from its result
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text                             | calls | answers |
      | u1 | user            | aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa |       |         |
      | a1 | assistant       | bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb | k1    |         |
      | r1 | function_result | cccccccccccccccccccccccccccccccc |       | k1      |
      | u2 | user            | dd                               |       |         |
      | a2 | assistant       | ee                               |       |         |
    When I call "session::context" with {"session_id": "s1", "token_budget": 1000000}
    Then the "entry_id" values at "messages" are "u1, a1, r1, u2, a2"
    And the response field "dropped" is absent
    When I call "session::context" with {"session_id": "s1", "token_budget": 1}
    Then the "entry_id" values at "messages" are "u2, a2"
    And the response contains {"dropped": {"turns": 1, "messages": 3, "first_kept_entry_id": "u2", "over_budget": true}}
    Given "s1" has entries:
      | id | role            | text | calls | answers |
      | a3 | assistant       | go   | k2    |         |
      | u3 | user            | wait |       |         |
      | r3 | function_result | late |       | k2      |
    When I call "session::context" with {"session_id": "s1", "token_budget": 1}
    Then the "entry_id" values at "messages" are "u2, a2, a3, u3, r3"
    And the response contains {"dropped": {"turns": 1, "messages": 3, "first_kept_entry_id": "u2", "over_budget": true}}

  # Prevents: a zero or negative budget, or an unknown leaf, answered as if valid.
  Scenario: bad budgets and unknown leaves are refused
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | e1 | user | a    |
    When I call "session::context" with {"session_id": "s1", "token_budget": 0}
    Then the call fails with "session/invalid_request"
    When I call "session::context" with {"session_id": "s1", "token_budget": -5}
    Then the call fails with "session/invalid_request"
    When I call "session::context" with {"session_id": "s1", "leaf": "nope"}
    Then the call fails with "session/entry_not_found"
    When I call "session::context" with {"session_id": "nope"}
    Then the call fails with "session/not_found"
    When I call "session::context" with {"session_id": "s1"}
    Then the response contains {"leaf": "e1", "compaction": null, "ignored": []}
