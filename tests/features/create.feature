@pure
Feature: session::create
  A new session starts idle and empty, and subscribers hear about it once.

  # Prevents: a created session missing defaults (title "", kind user) or a wrong timestamp.
  Scenario: create with no fields gives an idle, empty user session
    When I call "session::create" with {}
    Then the response is:
      """
      {"session_id": "s_001", "meta": {"session_id": "s_001", "title": "", "description": "",
        "status": "idle", "kind": "user", "created_at": 1000000, "updated_at": 1000000,
        "message_count": 0}}
      """
    And the events fired are "session::created"
    And event 1 is "session::created" with {"session_id": "s_001", "title": "", "description": "", "status": "idle", "created_at": 1000000}
    And event 1 carries session metadata null

  # Prevents: a non-string title being coerced and stored instead of rejected before any write.
  Scenario: a wrongly typed title is rejected and nothing is created
    When I call "session::create" with {"title": 12345}
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired
    When I call "session::list"
    Then the response is {"sessions": []}
