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

  # Prevents: supplied title/description/metadata/kind being dropped, or the event leaking kind/metadata into its payload.
  Scenario: create with every field stores them and announces the session once
    Given the clock is at 2000000
    When I call "session::create" with {"title": "Trip", "description": "Planning", "metadata": {"owner": "u1", "tags": ["a", "b"]}, "kind": "automation"}
    Then the response is:
      """
      {"session_id": "s_001", "meta": {"session_id": "s_001", "title": "Trip", "description": "Planning",
        "status": "idle", "kind": "automation", "metadata": {"owner": "u1", "tags": ["a", "b"]},
        "created_at": 2000000, "updated_at": 2000000, "message_count": 0}}
      """
    And the events fired are "session::created"
    And event 1 is "session::created" with {"session_id": "s_001", "title": "Trip", "description": "Planning", "status": "idle", "created_at": 2000000}
    And event 1 carries session metadata {"owner": "u1", "tags": ["a", "b"]}
    When I call "session::get" with {"session_id": "s_001"}
    Then the response is:
      """
      {"meta": {"session_id": "s_001", "title": "Trip", "description": "Planning",
        "status": "idle", "kind": "automation", "metadata": {"owner": "u1", "tags": ["a", "b"]},
        "created_at": 2000000, "updated_at": 2000000, "message_count": 0}}
      """

  # Prevents: an explicit empty metadata object being normalised away instead of stored as {}.
  Scenario: an explicit empty metadata object is stored as {}
    When I call "session::create" with {"metadata": {}}
    Then the response field "meta.metadata" is {}
    And event 1 carries session metadata {}
    When I call "session::get" with {"session_id": "s_001"}
    Then the response field "meta.metadata" is {}

  # Prevents: null optional fields being rejected or stored as null instead of meaning "omitted".
  Scenario: null for every optional field behaves like omission
    When I call "session::create" with {"title": null, "description": null, "metadata": null, "kind": null}
    Then the response is:
      """
      {"session_id": "s_001", "meta": {"session_id": "s_001", "title": "", "description": "",
        "status": "idle", "kind": "user", "created_at": 1000000, "updated_at": 1000000,
        "message_count": 0}}
      """
    And the events fired are "session::created"
    And event 1 carries session metadata null

  # Prevents: an unknown kind (or non-object metadata) being accepted and persisted.
  Scenario Outline: a malformed create is rejected before any write
    When I call "session::create" with <request>
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
    And no events fired
    When I call "session::list"
    Then the response is {"sessions": []}

    Examples:
      | request                     |
      | {"kind": "robot"}           |
      | {"metadata": "owner"}       |
      | {"description": ["x"]}      |

  # Prevents: engine-injected unknown fields failing the call, or two creates sharing an id.
  Scenario: unknown request fields are ignored and every create gets a fresh id
    When I call "session::create" with {"title": "one", "_caller_worker_id": "w_9"}
    Then the response field "session_id" is "s_001"
    And the events fired are "session::created"
    When I call "session::create" with {"title": "two"}
    Then the response field "session_id" is "s_002"
    And event 1 is "session::created" containing {"session_id": "s_002", "title": "two"}
    When I call "session::list" with {"order": "created_asc"}
    Then the response ids at "sessions" are "s_001, s_002"
    And no events fired
