@pure
Feature: session::set-status
  The coarse lifecycle status. A reason is kept on working/done/error and cleared on idle; the
  call is a no-op only when both status and stored reason are unchanged.

  # Prevents: a status change not persisted, not announced, or announced without its reason.
  Scenario: idle to working with a reason stores it and fires status-changed
    Given a session "s1" with metadata {"owner": "u1"}
    And the clock advances by 10 ms
    When I call "session::set-status" with {"session_id": "s1", "status": "working", "reason": "thinking"}
    Then the response is {"status": "working", "previous_status": "idle"}
    And the events fired are "session::status-changed"
    And event 1 is "session::status-changed" with {"session_id": "s1", "status": "working", "previous_status": "idle", "status_reason": "thinking", "timestamp": 1000010}
    And event 1 carries session metadata {"owner": "u1"}
    And no "session::meta-updated" event fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response is:
      """
      {"meta": {"session_id": "s1", "title": "", "description": "", "status": "working",
        "status_reason": "thinking", "kind": "user", "metadata": {"owner": "u1"},
        "created_at": 1000000, "updated_at": 1000010, "message_count": 0}}
      """

  # Prevents: the old "reason kept only on error" rule dropping reasons on working/done.
  Scenario Outline: the reason is kept on working, done and error
    Given a session "s1"
    When I call "session::set-status" with {"session_id": "s1", "status": "<status>", "reason": "why"}
    Then the response is {"status": "<status>", "previous_status": "idle"}
    And event 1 is "session::status-changed" with {"session_id": "s1", "status": "<status>", "previous_status": "idle", "status_reason": "why", "timestamp": 1000000}
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.status_reason" is "why"

    Examples:
      | status  |
      | working |
      | done    |
      | error   |

  # Prevents: a reason surviving (or being stored) when the session goes back to idle.
  Scenario: going idle clears the reason even when one is supplied
    Given a session "s1"
    And I called "session::set-status" with {"session_id": "s1", "status": "error", "reason": "boom"}
    And the clock advances by 5 ms
    When I call "session::set-status" with {"session_id": "s1", "status": "idle", "reason": "ignored"}
    Then the response is {"status": "idle", "previous_status": "error"}
    And event 1 is "session::status-changed" with {"session_id": "s1", "status": "idle", "previous_status": "error", "timestamp": 1000005}
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.status" is "idle"
    And the response field "meta.status_reason" does not exist

  # Prevents: the v0.x rule treating a reason-only change as a no-op (live phase detail never reaches UIs).
  Scenario: a reason-only change re-emits with previous_status equal to status
    Given a session "s1"
    And I called "session::set-status" with {"session_id": "s1", "status": "working", "reason": "thinking"}
    And the clock advances by 3 ms
    When I call "session::set-status" with {"session_id": "s1", "status": "working", "reason": "calling tools"}
    Then the response is {"status": "working", "previous_status": "working"}
    And the events fired are "session::status-changed"
    And event 1 is "session::status-changed" with {"session_id": "s1", "status": "working", "previous_status": "working", "status_reason": "calling tools", "timestamp": 1000003}
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.status_reason" is "calling tools"
    And the response field "meta.updated_at" is 1000003

  # Prevents: dropping the reason (working "x" -> working without reason) being treated as a no-op.
  Scenario: removing the reason within the same status is a change
    Given a session "s1"
    And I called "session::set-status" with {"session_id": "s1", "status": "working", "reason": "thinking"}
    When I call "session::set-status" with {"session_id": "s1", "status": "working", "reason": null}
    Then the response is {"status": "working", "previous_status": "working"}
    And event 1 is "session::status-changed" with {"session_id": "s1", "status": "working", "previous_status": "working", "timestamp": 1000000}
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.status_reason" does not exist

  # Prevents: an unchanged status and reason writing, bumping updated_at or firing again.
  Scenario: the same status with the same reason is a silent no-op
    Given a session "s1"
    And I called "session::set-status" with {"session_id": "s1", "status": "done", "reason": "stopped"}
    And the clock advances by 50 ms
    When I call "session::set-status" with {"session_id": "s1", "status": "done", "reason": "stopped"}
    Then the response is {"status": "done", "previous_status": "done"}
    And no events fired
    And no "session::status-changed" event fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.updated_at" is 1000000

  # Prevents: idle -> idle with a (discarded) reason counting as a change and waking subscribers.
  Scenario: idle to idle is a no-op even with a reason
    Given a session "s1"
    And the clock advances by 50 ms
    When I call "session::set-status" with {"session_id": "s1", "status": "idle", "reason": "nothing to do"}
    Then the response is {"status": "idle", "previous_status": "idle"}
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.status_reason" does not exist
    And the response field "meta.updated_at" is 1000000

  # Prevents: set-status on an unknown id creating the session or failing with the wrong code.
  Scenario: an unknown session is not_found
    When I call "session::set-status" with {"session_id": "ghost", "status": "working"}
    Then the call fails with "session/not_found"
    And no events fired
    When I call "session::get" with {"session_id": "ghost"}
    Then the response is null

  # Prevents: accepting the unreleased "waiting" status or a missing status instead of rejecting the shape.
  Scenario Outline: a bad or missing status is an invalid request and nothing changes
    Given a session "s1"
    When I call "session::set-status" with <request>
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.status" is "idle"

    Examples:
      | request                                         |
      | {"session_id": "s1", "status": "waiting"}       |
      | {"session_id": "s1"}                            |
      | {"session_id": "s1", "status": null}            |
      | {"session_id": "s1", "status": "WORKING"}       |
