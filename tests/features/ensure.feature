@pure
Feature: session::ensure
  Ensure creates a session under the caller's id exactly once; later calls return it untouched.

  # Prevents: ensure ignoring the caller's id or fields, or not announcing the session it creates.
  Scenario: ensure creates the session under the caller's id
    When I call "session::ensure" with {"session_id": "chat-1", "title": "Hello", "description": "d", "metadata": {"owner": "u1"}, "kind": "e2e"}
    Then the response is:
      """
      {"session_id": "chat-1", "created": true, "meta": {"session_id": "chat-1", "title": "Hello",
        "description": "d", "status": "idle", "kind": "e2e", "metadata": {"owner": "u1"},
        "created_at": 1000000, "updated_at": 1000000, "message_count": 0}}
      """
    And the events fired are "session::created"
    And event 1 is "session::created" with {"session_id": "chat-1", "title": "Hello", "description": "d", "status": "idle", "created_at": 1000000}
    And event 1 carries session metadata {"owner": "u1"}
    When I call "session::get" with {"session_id": "chat-1"}
    Then the response field "meta.kind" is "e2e"

  # Prevents: a second ensure overwriting title/metadata, bumping updated_at or re-firing created.
  Scenario: ensuring an existing session returns it unchanged and fires nothing
    Given a session "chat-1" with metadata {"owner": "u1"}
    And I called "session::set-status" with {"session_id": "chat-1", "status": "working", "reason": "busy"}
    And the clock advances by 50 ms
    When I call "session::ensure" with {"session_id": "chat-1", "title": "Other", "metadata": {"owner": "u2"}, "kind": "automation"}
    Then the response is:
      """
      {"session_id": "chat-1", "created": false, "meta": {"session_id": "chat-1", "title": "",
        "description": "", "status": "working", "status_reason": "busy", "kind": "user",
        "metadata": {"owner": "u1"}, "created_at": 1000000, "updated_at": 1000000,
        "message_count": 0}}
      """
    And no events fired
    And no "session::created" event fired
    When I call "session::get" with {"session_id": "chat-1"}
    Then the response field "meta.title" is ""
    And the response field "meta.metadata" is {"owner": "u1"}
    And the response field "meta.updated_at" is 1000000

  # Prevents: the empty string being accepted as a session id (and creating an unaddressable session).
  Scenario: an empty session id is an invalid request
    When I call "session::ensure" with {"session_id": ""}
    Then the call fails with "session/invalid_request"
    And no events fired
    When I call "session::list"
    Then the response is {"sessions": []}

  # Prevents: rejecting more than the exact empty string (ids are arbitrary, whitespace included).
  Scenario: a whitespace-only id is a valid id
    When I call "session::ensure" with {"session_id": " "}
    Then the response field "created" is true
    And the response field "session_id" is " "
    And the events fired are "session::created"
    When I call "session::get" with {"session_id": " "}
    Then the response field "meta.session_id" is " "

  # Prevents: ids with path separators, spaces or non-ASCII being rejected, altered or aliased.
  Scenario: arbitrary ids round-trip verbatim and stay distinct
    When I call "session::ensure" with {"session_id": "../escape/chat 42:?"}
    Then the response field "created" is true
    When I call "session::ensure" with {"session_id": "café/ü"}
    Then the response field "created" is true
    When I call "session::ensure" with {"session_id": "..%2Fescape%2Fchat%2042%3A%3F"}
    Then the response field "created" is true
    When I call "session::get" with {"session_id": "../escape/chat 42:?"}
    Then the response field "meta.session_id" is "../escape/chat 42:?"
    When I call "session::list" with {"order": "created_asc"}
    Then the response ids at "sessions" are "..%2Fescape%2Fchat%2042%3A%3F, ../escape/chat 42:?, café/ü"

  # Prevents: a missing or null required session_id being defaulted instead of rejected.
  Scenario Outline: ensure without a usable session_id is rejected before any write
    When I call "session::ensure" with <request>
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired

    Examples:
      | request                    |
      | {"title": "x"}             |
      | {"session_id": null}       |
      | {"session_id": 42}         |

  # Prevents: null optional fields on ensure being treated differently from omitted ones.
  Scenario: null optional fields on ensure mean defaults
    When I call "session::ensure" with {"session_id": "s1", "title": null, "description": null, "metadata": null, "kind": null}
    Then the response is:
      """
      {"session_id": "s1", "created": true, "meta": {"session_id": "s1", "title": "",
        "description": "", "status": "idle", "kind": "user", "created_at": 1000000,
        "updated_at": 1000000, "message_count": 0}}
      """
    And event 1 carries session metadata null
