@pure
Feature: session::update-message
  A message entry's content is replaced (streaming), its revision goes up by one and
  message-updated fires with the full message. Optimistic concurrency via expected_revision.

  # Prevents: an update not bumping the revision, touching the entry timestamp, or emitting a partial message.
  Scenario: updating an assistant message replaces its content and bumps the revision
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant |      |
    And the clock advances by 100 ms
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "hello"}]}
    Then the response is {"updated": true, "revision": 1}
    And the events fired are "session::message-updated"
    And event 1 is "session::message-updated" with payload:
      """
      {"session_id": "s1", "entry_id": "a1", "revision": 1, "timestamp": 1000100,
       "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}], "stop_reason": "end",
                   "model": "m", "provider": "p", "timestamp": 2}}
      """
    And event 1 carries session metadata null
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response is:
      """
      {"entry": {"kind": "message", "id": "a1", "parent_id": "u1", "timestamp": 1000000, "revision": 1,
        "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}], "stop_reason": "end",
                    "model": "m", "provider": "p", "timestamp": 2}}}
      """
    When I call "session::get" with {"session_id": "s1"}
    Then the response contains {"meta": {"updated_at": 1000100, "message_count": 2}}

  # Prevents: revisions jumping, or a matching expected_revision being refused.
  Scenario: every update adds exactly one and a matching expected_revision is accepted
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | a1 | assistant | x    |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "xy"}]}
    Then the response is {"updated": true, "revision": 1}
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "xyz"}], "expected_revision": 1}
    Then the response is {"updated": true, "revision": 2}
    And event 1 is "session::message-updated" containing {"revision": 2}
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [], "expected_revision": null}
    Then the response is {"updated": true, "revision": 3}
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "entry.revision" is 3
    And the response field "entry.message.content" is []

  # Prevents: a stale writer overwriting content (or an event firing) on a revision mismatch.
  Scenario: a revision mismatch writes nothing and reports the current revision
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | a1 | assistant | v0   |
    And I called "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "v1"}]}
    And the clock advances by 50 ms
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "stale"}], "expected_revision": 0}
    Then the response is {"updated": false, "revision": 1}
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "entry.message.content" is [{"type": "text", "text": "v1"}]
    And the response field "entry.revision" is 1
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.updated_at" is 1000000

  # Prevents: usage/details validation running before the revision check (a mismatch must win).
  Scenario Outline: a revision mismatch wins over invalid usage or details
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    When I call "session::update-message" with <payload>
    Then the response is {"updated": false, "revision": 0}
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "u1"}
    Then the response field "entry.message.content" is [{"type": "text", "text": "q"}]

    Examples:
      | payload                                                                                               |
      | {"session_id": "s1", "entry_id": "u1", "content": [], "expected_revision": 4, "usage": {"input": 1}}  |
      | {"session_id": "s1", "entry_id": "u1", "content": [], "expected_revision": 4, "details": {"d": 1}}    |

  # Prevents: custom bookkeeping entries being editable (or the kind check running after the revision check).
  Scenario Outline: a custom entry cannot be updated
    Given a session "s1"
    And "s1" has entries:
      | id | role  | custom_type | text     |
      | k1 | entry | compaction  | {"n": 1} |
    When I call "session::update-message" with <payload>
    Then the call fails with "session/invalid_entry_kind"
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "k1"}
    Then the response is {"entry": {"kind": "custom", "id": "k1", "parent_id": null, "timestamp": 1000000, "revision": 0, "custom_type": "compaction", "data": {"n": 1}}}

    Examples:
      | payload                                                                         |
      | {"session_id": "s1", "entry_id": "k1", "content": []}                           |
      | {"session_id": "s1", "entry_id": "k1", "content": [], "expected_revision": 9}   |

  # Prevents: usage being attached to a non-assistant message, or the content being replaced before the error.
  Scenario Outline: usage on a non-assistant message is invalid_entry_kind and nothing is written
    Given a session "s1"
    And "s1" has entries:
      | id | role   | text | answers | custom_type |
      | m1 | <role> | old  | c1      | note        |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "m1", "content": [{"type": "text", "text": "new"}], "usage": {"output": 3}}
    Then the call fails with "session/invalid_entry_kind"
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "m1"}
    Then the response field "entry.message.content" is [{"type": "text", "text": "old"}]
    And the response field "entry.revision" is 0

    Examples:
      | role            |
      | user            |
      | function_result |
      | custom          |

  # Prevents: final usage being dropped, or a null usage being treated as a value on other roles.
  Scenario: usage is set on an assistant message and null usage means absent
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | a    |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "done"}], "usage": {"input": 10, "output": 5, "cost_usd": 0.5}}
    Then the response is {"updated": true, "revision": 1}
    And event 1 is "session::message-updated" containing {"message": {"role": "assistant", "content": [{"type": "text", "text": "done"}], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2, "usage": {"input": 10, "output": 5, "cost_usd": 0.5}}}
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "u1", "content": [], "usage": null}
    Then the response is {"updated": true, "revision": 1}

  # Prevents: details being accepted on user/assistant messages (which have no details field).
  Scenario Outline: details on a user or assistant message is details_not_supported
    Given a session "s1"
    And "s1" has entries:
      | id | role   | text |
      | m1 | <role> | old  |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "m1", "content": [], "details": {"x": 1}}
    Then the call fails with "session/details_not_supported"
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "m1"}
    Then the response field "entry.message.content" is [{"type": "text", "text": "old"}]
    And the response field "entry.revision" is 0

    Examples:
      | role      |
      | user      |
      | assistant |

  # Prevents: an explicit details: null being treated as a value (and rejected on a user message).
  Scenario: details null is the same as no details
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "u1", "content": [{"type": "text", "text": "q!"}], "details": null}
    Then the response is {"updated": true, "revision": 1}
    And the events fired are "session::message-updated"

  # Prevents: function_result details not being replaced, or being wiped by a content-only update.
  Scenario: function_result details are replaced when given and kept when absent
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text | answers |
      | r1 | function_result | raw  | c1      |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "r1", "content": [{"type": "text", "text": "ok"}]}
    Then the response is {"updated": true, "revision": 1}
    And event 1 is "session::message-updated" containing {"message": {"role": "function_result", "function_call_id": "c1", "function_id": "tool", "content": [{"type": "text", "text": "ok"}], "details": {"raw": "raw"}, "is_error": false, "timestamp": 3}}
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "r1", "content": [], "details": {"rows": 2}}
    Then the response is {"updated": true, "revision": 2}
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "r1"}
    Then the response field "entry.message" is {"role": "function_result", "function_call_id": "c1", "function_id": "tool", "content": [], "details": {"rows": 2}, "is_error": false, "timestamp": 3}

  # Prevents: details on a custom message being refused or not stored.
  Scenario: details are set on a custom message
    Given a session "s1"
    And "s1" has entries:
      | id | role   | text | custom_type |
      | n1 | custom | hi   | notice      |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "n1", "content": [{"type": "text", "text": "hey"}], "details": {"level": "warn"}}
    Then the response is {"updated": true, "revision": 1}
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "n1"}
    Then the response field "entry.message" is {"role": "custom", "custom_type": "notice", "content": [{"type": "text", "text": "hey"}], "details": {"level": "warn"}, "timestamp": 4}

  # Prevents: the request origin overwriting the stored origin, or the stored origin leaking onto the event.
  Scenario: the request origin is echoed on the event but never stored
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text | origin        |
      | a1 | assistant | a    | {"turn": 1}   |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [], "origin": {"stream": 2}}
    Then event 1 is "session::message-updated" containing {"origin": {"stream": 2}, "revision": 1}
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "entry.origin" is {"turn": 1}
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": []}
    Then event 1 is "session::message-updated" with {"session_id": "s1", "entry_id": "a1", "revision": 2, "timestamp": 1000000, "message": {"role": "assistant", "content": [], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response field "messages.0.origin" is {"turn": 1}

  # Prevents: updates being limited to the active path (streaming into a message on an abandoned branch).
  Scenario: an entry off the active path can be updated without changing the active path
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | old  |
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "u1"}
    And "s1" has entries:
      | id | role      | text |
      | a2 | assistant | alt  |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "new"}]}
    Then the response is {"updated": true, "revision": 1}
    And the events fired are "session::message-updated"
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, a2"
    When I call "session::messages" with {"session_id": "s1", "from_entry_id": "a1"}
    Then the response field "messages.1.message.content" is [{"type": "text", "text": "new"}]

  # Prevents: the entry lookup running before the session check, or unknown entries being created.
  Scenario: unknown session and unknown entry
    Given a session "s1"
    When I call "session::update-message" with {"session_id": "ghost", "entry_id": "nope", "content": []}
    Then the call fails with "session/not_found"
    And no events fired
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "nope", "content": []}
    Then the call fails with "session/entry_not_found"
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "nope"}
    Then the response is null

  # Prevents: message-updated filters seeing the wrong metadata or role.
  Scenario: bindings filter updates by role and session metadata
    Given a session "s1" with metadata {"owner": "u1"}
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | a    |
    And a binding "asst" on "session::message-updated" with config {"session_id": "s1", "roles": ["assistant"], "metadata": {"owner": "u1"}}
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "u1", "content": []}
    Then event 1 carries session metadata {"owner": "u1"}
    And binding "asst" received nothing
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": []}
    Then binding "asst" received 1 event
    And binding "asst" last received {"entry_id": "a1", "revision": 1}

  # Prevents: a missing content being treated as "clear the content".
  Scenario: content is required
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "u1"}
    Then the call fails with "session/invalid_request"
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "u1"}
    Then the response field "entry.revision" is 0

  # Prevents: a restart replaying an older snapshot of an updated entry (content or revision going back).
  Scenario: updated content and revision survive a restart and the revision check still holds
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | a1 | assistant | v0   |
    And I called "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "v1"}]}
    When the store restarts
    And I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "entry.revision" is 1
    And the response field "entry.message.content" is [{"type": "text", "text": "v1"}]
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [], "expected_revision": 0}
    Then the response is {"updated": false, "revision": 1}
    When I call "session::update-message" with {"session_id": "s1", "entry_id": "a1", "content": [{"type": "text", "text": "v2"}], "expected_revision": 1}
    Then the response is {"updated": true, "revision": 2}
    When the store restarts
    And I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response field "entry.revision" is 2
    And the response field "entry.message.content" is [{"type": "text", "text": "v2"}]
