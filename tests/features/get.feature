@pure
Feature: session::get
  Reading one session's metadata; unknown ids read as null, never as an error.

  # Prevents: get erroring on an unknown id instead of answering null.
  Scenario: an unknown session reads as null
    Given a session "s1"
    When I call "session::get" with {"session_id": "nope"}
    Then the response is null
    And no events fired

  # Prevents: get returning a stale or partial meta (optional fields emitted as null, kind dropped).
  Scenario: get returns the stored meta with optional fields omitted
    Given a session "s1"
    When I call "session::get" with {"session_id": "s1"}
    Then the response is:
      """
      {"meta": {"session_id": "s1", "title": "", "description": "", "status": "idle",
        "kind": "user", "created_at": 1000000, "updated_at": 1000000, "message_count": 0}}
      """
    And no events fired

  # Prevents: message_count counting custom entries, or get hiding status_reason / draft fields.
  Scenario: get reflects message_count, status_reason and the parked draft
    Given a session "s1" with metadata {"owner": "u1"}
    And "s1" has entries:
      | id | role      | text         | custom_type |
      | e1 | user      | hi           |             |
      | c1 | entry     | {"n": 1}     | bookmark    |
      | e2 | assistant | hello        |             |
    And I called "session::set-status" with {"session_id": "s1", "status": "error", "reason": "boom"}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::set-draft" with {"session_id": "s1", "draft": "typing", "attachment_ids": ["a_001"]}
    When I call "session::get" with {"session_id": "s1"}
    Then the response is:
      """
      {"meta": {"session_id": "s1", "title": "", "description": "", "status": "error",
        "status_reason": "boom", "kind": "user", "metadata": {"owner": "u1"}, "draft": "typing",
        "draft_attachments": [{"attachment_id": "a_001", "session_id": "s1", "name": "a.txt",
          "mime": "text/plain", "size": 5,
          "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
          "created_at": 1000000}],
        "created_at": 1000000, "updated_at": 1000000, "message_count": 2}}
      """

  # Prevents: a missing session_id being read as "" or null instead of failing the request shape.
  Scenario: get without a session_id is an invalid request
    When I call "session::get" with {}
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired

  # Prevents: serde filling a request struct from a JSON array by position (["s1"] read as session_id).
  Scenario: a request that is not a JSON object is rejected before any logic runs
    Given a session "s1"
    When I call "session::set-status" with:
      """
      ["s1", "working", "r"]
      """
    Then the call fails with "session/invalid_request"
    And the error message contains "expected a JSON object, got an array"
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.status" is "idle"
