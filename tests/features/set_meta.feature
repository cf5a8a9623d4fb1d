@pure
Feature: session::set-meta
  Title, description and metadata: supplied fields replace, omitted ones stay; metadata is
  replaced wholesale; an all-absent call is a silent no-op, identical values still write and fire.

  # Prevents: a title-only update clobbering description/metadata, or a stale updated_at.
  Scenario: a title-only update keeps the other fields and announces the change
    Given a session "s1" with metadata {"owner": "u1"}
    And I called "session::set-meta" with {"session_id": "s1", "description": "old desc"}
    And the clock advances by 100 ms
    When I call "session::set-meta" with {"session_id": "s1", "title": "New"}
    Then the response is:
      """
      {"meta": {"session_id": "s1", "title": "New", "description": "old desc", "status": "idle",
        "kind": "user", "metadata": {"owner": "u1"}, "created_at": 1000000,
        "updated_at": 1000100, "message_count": 0}}
      """
    And the events fired are "session::meta-updated"
    And event 1 is "session::meta-updated" with {"session_id": "s1", "title": "New", "description": "old desc", "metadata": {"owner": "u1"}, "timestamp": 1000100}
    And event 1 carries session metadata {"owner": "u1"}
    And no "session::status-changed" event fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.title" is "New"
    And the response field "meta.description" is "old desc"
    And the response field "meta.updated_at" is 1000100

  # Prevents: metadata being merged key-by-key instead of replaced, or events filtered on the old owner.
  Scenario: metadata replaces the stored object wholesale
    Given a session "s1" with metadata {"owner": "u1", "team": "x"}
    When I call "session::set-meta" with {"session_id": "s1", "metadata": {"owner": "u2"}}
    Then the response field "meta.metadata" is {"owner": "u2"}
    And event 1 is "session::meta-updated" containing {"metadata": {"owner": "u2"}}
    And event 1 carries session metadata {"owner": "u2"}
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.metadata" is {"owner": "u2"}

  # Prevents: an empty metadata object being ignored (as if omitted) instead of clearing the keys.
  Scenario: an empty metadata object replaces the stored one with {}
    Given a session "s1" with metadata {"owner": "u1"}
    When I call "session::set-meta" with {"session_id": "s1", "metadata": {}}
    Then the events fired are "session::meta-updated"
    And event 1 is "session::meta-updated" containing {"metadata": {}}
    And event 1 carries session metadata {}
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.metadata" is {}

  # Prevents: the event carrying "metadata": null for a session without metadata (it must be omitted).
  Scenario: the event omits metadata when the session has none
    Given a session "s1"
    When I call "session::set-meta" with {"session_id": "s1", "title": "T"}
    Then event 1 is "session::meta-updated" with {"session_id": "s1", "title": "T", "description": "", "timestamp": 1000000}
    And event 1 carries session metadata null
    And the response field "meta.metadata" does not exist

  # Prevents: an empty (or all-null) set-meta writing, bumping updated_at or waking subscribers.
  Scenario Outline: a call with no fields is a silent no-op
    Given a session "s1" with metadata {"owner": "u1"}
    And the clock advances by 100 ms
    When I call "session::set-meta" with <request>
    Then the response is:
      """
      {"meta": {"session_id": "s1", "title": "", "description": "", "status": "idle",
        "kind": "user", "metadata": {"owner": "u1"}, "created_at": 1000000,
        "updated_at": 1000000, "message_count": 0}}
      """
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.updated_at" is 1000000

    Examples:
      | request                                                                  |
      | {"session_id": "s1"}                                                     |
      | {"session_id": "s1", "title": null, "description": null, "metadata": null} |

  # Prevents: "unchanged" detection suppressing the write and the event for identical values.
  Scenario: re-sending identical values still writes and fires
    Given I called "session::ensure" with {"session_id": "s1", "title": "Same", "metadata": {"owner": "u1"}}
    And the clock advances by 7 ms
    When I call "session::set-meta" with {"session_id": "s1", "title": "Same", "metadata": {"owner": "u1"}}
    Then the events fired are "session::meta-updated"
    And event 1 is "session::meta-updated" with {"session_id": "s1", "title": "Same", "description": "", "metadata": {"owner": "u1"}, "timestamp": 1000007}
    And the response field "meta.updated_at" is 1000007

  # Prevents: set-meta resetting status, reason, kind, message_count or the parked draft.
  Scenario: set-meta never touches status, kind, message_count or the draft
    Given I called "session::ensure" with {"session_id": "s1", "kind": "automation"}
    And "s1" has entries:
      | id | role | text |
      | e1 | user | hi   |
    And I called "session::set-status" with {"session_id": "s1", "status": "working", "reason": "tools"}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::set-draft" with {"session_id": "s1", "draft": "wip", "attachment_ids": ["a_001"]}
    And the clock advances by 1 ms
    When I call "session::set-meta" with {"session_id": "s1", "title": "T", "description": "D", "metadata": {"k": 1}}
    Then the response is:
      """
      {"meta": {"session_id": "s1", "title": "T", "description": "D", "status": "working",
        "status_reason": "tools", "kind": "automation", "metadata": {"k": 1}, "draft": "wip",
        "draft_attachments": [{"attachment_id": "a_001", "session_id": "s1", "name": "a.txt",
          "mime": "text/plain", "size": 5,
          "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
          "created_at": 1000000}],
        "created_at": 1000000, "updated_at": 1000001, "message_count": 1}}
      """
    And the events fired are "session::meta-updated"

  # Prevents: set-meta on an unknown id creating the session or failing with the wrong code.
  Scenario: an unknown session is not_found and nothing is created
    When I call "session::set-meta" with {"session_id": "ghost", "title": "x"}
    Then the call fails with "session/not_found"
    And no events fired
    When I call "session::get" with {"session_id": "ghost"}
    Then the response is null

  # Prevents: a wrongly typed field being coerced, or partially applying the well-typed ones.
  Scenario: a wrongly typed field is rejected and nothing changes
    Given a session "s1" with metadata {"owner": "u1"}
    When I call "session::set-meta" with {"session_id": "s1", "title": "ok", "metadata": ["not", "an", "object"]}
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.title" is ""
    And the response field "meta.metadata" is {"owner": "u1"}
