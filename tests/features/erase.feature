@pure
Feature: session::erase
  Erasure (an extension, issue 37) deletes every session a session_id or a metadata filter names,
  each announced with session::deleted, and answers how many sessions and bytes went. A filter
  that names every session needs all: true.

  # Prevents: a tenant's erase missing one of its sessions, or reaching another tenant's.
  Scenario: a metadata filter erases exactly the matching sessions
    Given a session "a1" with metadata {"owner": "u1", "team": "x"}
    And a session "a2" with metadata {"owner": "u1"}
    And a session "b1" with metadata {"owner": "u2"}
    And "a1" has entries:
      | id | role | text        |
      | e1 | user | my SSN is 1 |
    When I call "session::erase" with {"metadata": {"owner": "u1"}}
    Then the response field "erased" is 2
    And the events fired are "session::deleted, session::deleted"
    When I call "session::list"
    Then the "session_id" values at "sessions" are "b1"
    When I call "session::get" with {"session_id": "a1"}
    Then the response is null

  # Prevents: erase by id reporting bytes it did not remove, or failing on an unknown id.
  Scenario: erase by session_id counts the session and its bytes, an unknown id nothing
    Given a session "s1"
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    When I call "session::erase" with {"session_id": "s1"}
    Then the response field "erased" is 1
    And the response field "bytes" exists
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response is null
    When I call "session::erase" with {"session_id": "s1"}
    Then the response is {"erased": 0, "bytes": 0}
    And no events fired

  # Prevents: an empty filter (everything) erasing every session by accident.
  Scenario: an empty filter is refused unless all is true, and nothing changes
    Given a session "s1" with metadata {"owner": "u1"}
    And a session "s2"
    When I call "session::erase" with {}
    Then the call fails with "session/invalid_request"
    When I call "session::erase" with {"metadata": {}}
    Then the call fails with "session/invalid_request"
    When I call "session::erase" with {"session_id": "s1", "metadata": {"owner": "u1"}}
    Then the call fails with "session/invalid_request"
    When I call "session::list"
    Then the "session_id" values at "sessions" are "s2, s1"
    When I call "session::erase" with {"all": true}
    Then the response field "erased" is 2
    When I call "session::list"
    Then the response is {"sessions": []}
