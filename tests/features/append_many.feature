@pure
Feature: session::append-many
  Several messages are appended as one chain sharing one timestamp; one message-added event per
  entry, in order. Not idempotent.

  # Prevents: batch entries not chained to each other, or given per-entry clock values.
  Scenario: a batch is chained from the active leaf and shares one timestamp
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u0 | user | q    |
    And the clock is at 3000000
    When I call "session::append-many" with:
      """
      {"session_id": "s1", "messages": [
        {"role": "assistant", "content": [{"type": "text", "text": "a"}], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2},
        {"role": "user", "content": [{"type": "text", "text": "b"}], "timestamp": 1},
        {"role": "custom", "custom_type": "notice", "content": [], "timestamp": 4}]}
      """
    Then the response is {"entry_ids": ["e_001", "e_002", "e_003"], "last_entry_id": "e_003"}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u0, e_001, e_002, e_003"
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "e_002"}
    Then the response is:
      """
      {"entry": {"kind": "message", "id": "e_002", "parent_id": "e_001", "timestamp": 3000000, "revision": 0,
        "message": {"role": "user", "content": [{"type": "text", "text": "b"}], "timestamp": 1}}}
      """
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "e_003"}
    Then the response field "entry.timestamp" is 3000000
    When I call "session::get" with {"session_id": "s1"}
    Then the response contains {"meta": {"message_count": 4, "updated_at": 3000000}}

  # Prevents: a single batch event, events out of order, or every event pointing at the batch parent.
  Scenario: one message-added event per entry, in order, each with its own parent and the shared origin
    Given a session "s1" with metadata {"team": "x"}
    When I call "session::append-many" with:
      """
      {"session_id": "s1", "origin": {"batch": 7}, "messages": [
        {"role": "user", "content": [], "timestamp": 1},
        {"role": "function_result", "function_call_id": "c1", "function_id": "tool", "content": [], "timestamp": 3}]}
      """
    Then the events fired are "session::message-added, session::message-added"
    And event 1 is "session::message-added" with payload:
      """
      {"session_id": "s1", "entry_id": "e_001", "parent_id": null, "origin": {"batch": 7},
       "message": {"role": "user", "content": [], "timestamp": 1}, "timestamp": 1000000}
      """
    And event 2 is "session::message-added" with payload:
      """
      {"session_id": "s1", "entry_id": "e_002", "parent_id": "e_001", "origin": {"batch": 7},
       "message": {"role": "function_result", "function_call_id": "c1", "function_id": "tool", "content": [],
                   "details": null, "is_error": false, "timestamp": 3},
       "timestamp": 1000000}
      """
    And event 1 carries session metadata {"team": "x"}
    And event 2 carries session metadata {"team": "x"}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response field "messages.1.origin" is {"batch": 7}

  # Prevents: an empty batch being accepted as a silent no-op instead of rejected.
  Scenario: an empty batch is rejected and nothing changes
    Given a session "s1"
    When I call "session::append-many" with {"session_id": "s1", "messages": []}
    Then the call fails with "session/empty_batch"
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response contains {"meta": {"message_count": 0, "updated_at": 1000000}}

  # Prevents: the empty-batch check running before the session check.
  Scenario: an unknown session is reported before the empty batch
    When I call "session::append-many" with {"session_id": "ghost", "messages": []}
    Then the call fails with "session/not_found"
    And no events fired
    When I call "session::append-many" with {"session_id": "ghost", "messages": [{"role": "user", "content": [], "timestamp": 1}]}
    Then the call fails with "session/not_found"
    When I call "session::get" with {"session_id": "ghost"}
    Then the response is null

  # Prevents: an unknown explicit parent writing part of the batch or moving the leaf.
  Scenario: an explicit parent that does not exist is parent_not_found and nothing is written
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u0 | user | q    |
    When I call "session::append-many" with {"session_id": "s1", "parent_id": "nope", "messages": [{"role": "user", "content": [], "timestamp": 1}, {"role": "user", "content": [], "timestamp": 1}]}
    Then the call fails with "session/parent_not_found"
    And no events fired
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u0"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 1

  # Prevents: an explicit parent being ignored or not making the batch the active path.
  Scenario: an explicit parent on another branch starts the chain there and moves the leaf to the last entry
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | a  | user      | q    |
      | b  | assistant | x    |
      | c  | user      | q2   |
    When I call "session::append-many" with {"session_id": "s1", "parent_id": "a", "messages": [{"role": "user", "content": [], "timestamp": 1}, {"role": "user", "content": [], "timestamp": 1}]}
    Then the response is {"entry_ids": ["e_001", "e_002"], "last_entry_id": "e_002"}
    And event 1 is "session::message-added" containing {"entry_id": "e_001", "parent_id": "a"}
    And event 2 is "session::message-added" containing {"entry_id": "e_002", "parent_id": "e_001"}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "a, e_001, e_002"
    When I call "session::messages" with {"session_id": "s1", "from_entry_id": "c"}
    Then the response ids at "messages" are "a, b, c"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 5

  # Prevents: append-many deduplicating a redelivered batch (it has no idempotency key).
  Scenario: the same batch sent twice creates two sets of entries
    Given a session "s1"
    When I call "session::append-many" with {"session_id": "s1", "messages": [{"role": "user", "content": [{"type": "text", "text": "same"}], "timestamp": 1}]}
    Then the response is {"entry_ids": ["e_001"], "last_entry_id": "e_001"}
    When I call "session::append-many" with {"session_id": "s1", "messages": [{"role": "user", "content": [{"type": "text", "text": "same"}], "timestamp": 1}]}
    Then the response is {"entry_ids": ["e_002"], "last_entry_id": "e_002"}
    And the events fired are "session::message-added"
    And event 1 is "session::message-added" containing {"entry_id": "e_002", "parent_id": "e_001"}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "e_001, e_002"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 2

  # Prevents: a malformed message in the batch being skipped while the rest is written.
  Scenario: one malformed message rejects the whole batch
    Given a session "s1"
    When I call "session::append-many" with {"session_id": "s1", "messages": [{"role": "user", "content": [], "timestamp": 1}, {"role": "user", "content": "oops", "timestamp": 1}]}
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired
    When I call "session::messages" with {"session_id": "s1"}
    Then the response is {"messages": []}
