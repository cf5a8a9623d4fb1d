@pure
Feature: session::append
  One entry (a message or a custom bookkeeping entry) is added to the session tree, chained to the
  active leaf or to an explicit parent on any branch. The leaf always moves to a committed entry.
  Replaying an entry_id is a complete no-op that hands back the original entry.

  # Prevents: a root append emitting an omitted parent_id (instead of explicit null) or a wrong timestamp.
  Scenario: the first message is a root with an explicit null parent in the response and the event
    Given a session "s1"
    When I call "session::append" with:
      """
      {"session_id": "s1", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}}
      """
    Then the response is {"entry_id": "e_001", "parent_id": null, "timestamp": 1000000}
    And the events fired are "session::message-added"
    And event 1 is "session::message-added" with payload:
      """
      {"session_id": "s1", "entry_id": "e_001", "parent_id": null,
       "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1},
       "timestamp": 1000000}
      """
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "e_001"}
    Then the response is:
      """
      {"entry": {"kind": "message", "id": "e_001", "parent_id": null, "timestamp": 1000000, "revision": 0,
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}}}
      """

  # Prevents: appends without parent_id not chaining to the active leaf, or the count not following.
  Scenario: appends without a parent chain onto the active leaf and are counted
    Given a session "s1"
    And "s1" has entries:
      | role      | text  |
      | user      | q     |
      | assistant | a     |
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 9}}
    Then the response is {"entry_id": "e_003", "parent_id": "e_002", "timestamp": 1000000}
    And event 1 is "session::message-added" containing {"entry_id": "e_003", "parent_id": "e_002"}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "e_001, e_002, e_003"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 3

  # Prevents: updated_at not following the committed entry's timestamp (or created_at moving).
  Scenario: a committed append sets updated_at to the entry timestamp
    Given a session "s1"
    And the clock is at 2000000
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 5}}
    Then the response field "timestamp" is 2000000
    And event 1 is "session::message-added" containing {"timestamp": 2000000}
    When I call "session::get" with {"session_id": "s1"}
    Then the response contains {"meta": {"created_at": 1000000, "updated_at": 2000000, "message_count": 1}}

  # Prevents: custom entries being counted as messages, leaking a message key, or not moving the leaf.
  Scenario: a custom entry is appended, moves the leaf, bumps updated_at but is not counted
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    And the clock advances by 10 ms
    When I call "session::append" with:
      """
      {"session_id": "s1", "custom": {"custom_type": "compaction", "data": {"summary": "s"}}}
      """
    Then the response is {"entry_id": "e_001", "parent_id": "u1", "timestamp": 1000010}
    And the events fired are "session::message-added"
    And event 1 is "session::message-added" with payload:
      """
      {"session_id": "s1", "entry_id": "e_001", "parent_id": "u1",
       "custom": {"custom_type": "compaction", "data": {"summary": "s"}}, "timestamp": 1000010}
      """
    When I call "session::get" with {"session_id": "s1"}
    Then the response contains {"meta": {"message_count": 1, "updated_at": 1000010}}
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the response field "parent_id" is "e_001"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 2

  # Prevents: an omitted custom data being dropped instead of stored and emitted as explicit null.
  Scenario: custom entry data defaults to an explicit null
    Given a session "s1"
    When I call "session::append" with {"session_id": "s1", "custom": {"custom_type": "marker"}}
    Then event 1 is "session::message-added" with {"session_id": "s1", "entry_id": "e_001", "parent_id": null, "custom": {"custom_type": "marker", "data": null}, "timestamp": 1000000}
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "e_001"}
    Then the response is {"entry": {"kind": "custom", "id": "e_001", "parent_id": null, "timestamp": 1000000, "revision": 0, "custom_type": "marker", "data": null}}

  # Prevents: a request carrying both a message and a custom payload being half-applied.
  Scenario: message and custom together are rejected and nothing is written
    Given a session "s1"
    When I call "session::append" with:
      """
      {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 1},
       "custom": {"custom_type": "x", "data": 1}}
      """
    Then the call fails with "session/invalid_request"
    And no events fired
    When I call "session::messages" with {"session_id": "s1", "include_custom": true}
    Then the response is {"messages": []}
    When I call "session::get" with {"session_id": "s1"}
    Then the response contains {"meta": {"message_count": 0, "updated_at": 1000000}}

  # Prevents: an append with neither payload (or both sent as null) creating an empty entry.
  Scenario Outline: neither a message nor a custom payload is rejected
    Given a session "s1"
    When I call "session::append" with <payload>
    Then the call fails with "session/invalid_request"
    And no events fired
    When I call "session::messages" with {"session_id": "s1", "include_custom": true}
    Then the response is {"messages": []}

    Examples:
      | payload                                                  |
      | {"session_id": "s1"}                                     |
      | {"session_id": "s1", "message": null, "custom": null}    |
      | {"session_id": "s1", "entry_id": "x", "parent_id": "p"}  |

  # Prevents: the exclusivity check running before the session check (wrong error for unknown sessions).
  Scenario Outline: an unknown session is reported before the exclusivity rule
    When I call "session::append" with <payload>
    Then the call fails with "session/not_found"
    And no events fired
    When I call "session::get" with {"session_id": "ghost"}
    Then the response is null

    Examples:
      | payload                                                                                                             |
      | {"session_id": "ghost"}                                                                                             |
      | {"session_id": "ghost", "message": {"role": "user", "content": [], "timestamp": 1}, "custom": {"custom_type": "x"}} |
      | {"session_id": "ghost", "message": {"role": "user", "content": [], "timestamp": 1}}                                 |

  # Prevents: a malformed message (unknown role) reaching the store instead of failing as a shape error.
  Scenario: a malformed message is a shape error with no write
    Given a session "s1"
    When I call "session::append" with {"session_id": "s1", "message": {"role": "system", "content": [], "timestamp": 1}}
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 0

  # Prevents: a replayed entry_id overwriting the entry or answering with the new parent/timestamp.
  Scenario: replaying an entry_id with different content returns the original and changes nothing
    Given a session "s1"
    When I call "session::append" with {"session_id": "s1", "entry_id": "m1", "message": {"role": "user", "content": [{"type": "text", "text": "first"}], "timestamp": 1}}
    Then the response is {"entry_id": "m1", "parent_id": null, "timestamp": 1000000}
    Given the clock advances by 500 ms
    When I call "session::append" with:
      """
      {"session_id": "s1", "entry_id": "m1", "origin": {"turn": 2},
       "message": {"role": "assistant", "content": [{"type": "text", "text": "second"}],
                   "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}}
      """
    Then the response is {"entry_id": "m1", "parent_id": null, "timestamp": 1000000}
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "m1"}
    Then the response is:
      """
      {"entry": {"kind": "message", "id": "m1", "parent_id": null, "timestamp": 1000000, "revision": 0,
        "message": {"role": "user", "content": [{"type": "text", "text": "first"}], "timestamp": 1}}}
      """
    When I call "session::get" with {"session_id": "s1"}
    Then the response contains {"meta": {"message_count": 1, "updated_at": 1000000}}

  # Prevents: a replay moving the active leaf back to the replayed entry (or bumping the count).
  Scenario: replaying an older entry does not move the leaf
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | m1 | user      | q    |
      | m2 | assistant | a    |
    When I call "session::append" with {"session_id": "s1", "entry_id": "m1", "message": {"role": "user", "content": [], "timestamp": 7}}
    Then the response is {"entry_id": "m1", "parent_id": null, "timestamp": 1000000}
    And no "session::message-added" event fired
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 8}}
    Then the response field "parent_id" is "m2"
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "m1, m2, e_001"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 3

  # Prevents: validating the explicit parent before the idempotency lookup on a replay.
  Scenario: a replay with a nonexistent explicit parent still returns the original entry
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | m1 | user | q    |
    When I call "session::append" with {"session_id": "s1", "entry_id": "m1", "parent_id": "nope", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the response is {"entry_id": "m1", "parent_id": null, "timestamp": 1000000}
    And no events fired

  # Prevents: the idempotency lookup short-circuiting the exclusivity rule.
  Scenario: a replay without any payload is still rejected
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | m1 | user | q    |
    When I call "session::append" with {"session_id": "s1", "entry_id": "m1"}
    Then the call fails with "session/invalid_request"
    And no events fired

  # Prevents: a replay that swaps kinds (custom id re-sent as a message) creating or counting anything.
  Scenario: replaying a custom entry id with a message returns the custom entry unchanged
    Given a session "s1"
    And "s1" has entries:
      | id | role  | custom_type | text      |
      | k1 | entry | compaction  | {"n": 1}  |
    When I call "session::append" with {"session_id": "s1", "entry_id": "k1", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the response is {"entry_id": "k1", "parent_id": null, "timestamp": 1000000}
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "k1"}
    Then the response field "entry.kind" is "custom"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 0

  # Prevents: explicit parents being restricted to the active path, or not moving the leaf to the new branch.
  Scenario: an explicit parent on an abandoned branch is accepted and makes the new entry the active leaf
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | a  | user      | q    |
      | b  | assistant | a1   |
      | c  | user      | q2   |
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a"}
    And "s1" has entries:
      | id | role      | text |
      | d  | assistant | a2   |
    When I call "session::append" with {"session_id": "s1", "entry_id": "x", "parent_id": "b", "message": {"role": "user", "content": [], "timestamp": 3}}
    Then the response is {"entry_id": "x", "parent_id": "b", "timestamp": 1000000}
    And event 1 is "session::message-added" containing {"entry_id": "x", "parent_id": "b"}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "a, b, x"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 5

  # Prevents: an explicit parent equal to an ancestor leaving the leaf where it was.
  Scenario: an explicit parent that is the root still moves the leaf to the new entry
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | a  | user      | q    |
      | b  | assistant | a1   |
    When I call "session::append" with {"session_id": "s1", "entry_id": "b2", "parent_id": "a", "message": {"role": "assistant", "content": [], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}}
    Then the response field "parent_id" is "a"
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "a, b2"
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "b"}
    Then the response field "entry.parent_id" is "a"

  # Prevents: an explicit parent_id: null being taken as "make a new root" instead of "use the leaf".
  Scenario: an explicit null parent_id means the active leaf
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | a  | user | q    |
    When I call "session::append" with {"session_id": "s1", "parent_id": null, "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the response is {"entry_id": "e_001", "parent_id": "a", "timestamp": 1000000}

  # Prevents: an unknown explicit parent creating an orphan entry, moving the leaf or firing.
  Scenario: an explicit parent that does not exist is parent_not_found and nothing changes
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | a  | user | q    |
    And the clock advances by 5 ms
    When I call "session::append" with {"session_id": "s1", "entry_id": "n", "parent_id": "zzz", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the call fails with "session/parent_not_found"
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "n"}
    Then the response is null
    When I call "session::get" with {"session_id": "s1"}
    Then the response contains {"meta": {"message_count": 1, "updated_at": 1000000}}
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the response field "parent_id" is "a"

  # Prevents: parent validation being skipped on an empty session (explicit parent silently dropped).
  Scenario: an explicit parent on an empty session is parent_not_found
    Given a session "s1"
    When I call "session::append" with {"session_id": "s1", "parent_id": "p", "custom": {"custom_type": "x"}}
    Then the call fails with "session/parent_not_found"
    And no events fired
    When I call "session::messages" with {"session_id": "s1", "include_custom": true}
    Then the response is {"messages": []}

  # Prevents: origin being dropped from the event or the stored entry.
  Scenario: the origin is stored on the entry and echoed on the event
    Given a session "s1"
    When I call "session::append" with {"session_id": "s1", "origin": {"turn_id": "t1", "n": [1]}, "message": {"role": "user", "content": [], "timestamp": 1}}
    Then event 1 is "session::message-added" with {"session_id": "s1", "entry_id": "e_001", "parent_id": null, "message": {"role": "user", "content": [], "timestamp": 1}, "origin": {"turn_id": "t1", "n": [1]}, "timestamp": 1000000}
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "e_001"}
    Then the response field "entry.origin" is {"turn_id": "t1", "n": [1]}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response is {"messages": [{"entry_id": "e_001", "message": {"role": "user", "content": [], "timestamp": 1}, "origin": {"turn_id": "t1", "n": [1]}}]}

  # Prevents: events carrying stale or missing session metadata, so tenancy filters miss them.
  Scenario: the event carries the session metadata and reaches matching bindings only
    Given a session "s1" with metadata {"owner": "u1"}
    And a binding "mine" on "session::message-added" with config {"metadata": {"owner": "u1"}}
    And a binding "other" on "session::message-added" with config {"metadata": {"owner": "u2"}}
    And a binding "users" on "session::message-added" with config {"roles": ["user"]}
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then event 1 carries session metadata {"owner": "u1"}
    And binding "mine" received 1 event
    And binding "other" received nothing
    When I call "session::append" with {"session_id": "s1", "custom": {"custom_type": "note", "data": 1}}
    Then event 1 carries session metadata {"owner": "u1"}
    And binding "mine" received 2 events
    And binding "mine" last received {"custom": {"custom_type": "note", "data": 1}}
    And binding "users" received 1 event

  # Prevents: a session without metadata emitting an empty object instead of no metadata.
  Scenario: a session without metadata emits events with no metadata
    Given a session "s1"
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then event 1 carries session metadata null

  # Prevents: a custom entry's stored origin being dropped from its message-added event.
  Scenario: a custom entry's origin is echoed on its event but not on message items
    Given a session "s1"
    When I call "session::append" with {"session_id": "s1", "origin": {"hook": "mem"}, "custom": {"custom_type": "compaction", "data": {}}}
    Then event 1 is "session::message-added" with {"session_id": "s1", "entry_id": "e_001", "parent_id": null, "custom": {"custom_type": "compaction", "data": {}}, "origin": {"hook": "mem"}, "timestamp": 1000000}
    When I call "session::messages" with {"session_id": "s1", "include_custom": true}
    Then the response is {"messages": [{"entry_id": "e_001", "custom": {"custom_type": "compaction", "data": {}}}]}

  # Prevents: engine-injected unknown request fields (e.g. _caller_worker_id) failing the call.
  Scenario: unknown request fields are ignored
    Given a session "s1"
    When I call "session::append" with {"session_id": "s1", "_caller_worker_id": "w1", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the response is {"entry_id": "e_001", "parent_id": null, "timestamp": 1000000}
    And the events fired are "session::message-added"

  # Prevents: entries written by append-many or fork not counting as committed, so a replay "re-commits" them.
  Scenario: replaying ids created by append-many or fork is a no-op
    Given a session "s1"
    And I called "session::append-many" with {"session_id": "s1", "messages": [{"role": "user", "content": [], "timestamp": 1}, {"role": "user", "content": [], "timestamp": 1}]}
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "e_001"}
    When I call "session::append" with {"session_id": "s1", "entry_id": "e_002", "message": {"role": "user", "content": [], "timestamp": 9}}
    Then the response is {"entry_id": "e_002", "parent_id": "e_001", "timestamp": 1000000}
    And no events fired
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "e_001"
    When I call "session::fork" with {"session_id": "s1", "entry_id": "e_002"}
    And I call "session::append" with {"session_id": "s_001", "entry_id": "e_003", "message": {"role": "user", "content": [], "timestamp": 9}}
    Then the response is {"entry_id": "e_003", "parent_id": null, "timestamp": 1000000}
    And no events fired
    When I call "session::get" with {"session_id": "s_001"}
    Then the response field "meta.message_count" is 2
    When I call "session::messages" with {"session_id": "s_001"}
    Then the response ids at "messages" are "e_003, e_004"

  # Prevents: a restart losing the leaf, the count or the committed set (a retried append then lands twice).
  Scenario: the chain, the leaf and the replay guard survive a restart
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | m1 | user      | q    |
      | m2 | assistant | a    |
    When the store restarts
    And I call "session::append" with {"session_id": "s1", "entry_id": "m2", "message": {"role": "user", "content": [], "timestamp": 9}}
    Then the response is {"entry_id": "m2", "parent_id": "m1", "timestamp": 1000000}
    And no events fired
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 9}}
    Then the response is {"entry_id": "e_001", "parent_id": "m2", "timestamp": 1000000}
    When the store restarts
    And I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "m1, m2, e_001"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 3
