@pure
Feature: session::delete
  Delete removes entries, leaf, attachments and meta, announces it once (filtered on the metadata
  as it was before deletion) and leaves forks alone.

  # Prevents: delete leaving entries/attachments behind, or the event filtered on missing metadata.
  Scenario: deleting a session removes everything and fires deleted once
    Given a session "s1" with metadata {"owner": "u1"}
    And "s1" has entries:
      | id | role | text |
      | e1 | user | hi   |
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And the clock advances by 30 ms
    When I call "session::delete" with {"session_id": "s1"}
    Then the response is {"deleted": true}
    And the events fired are "session::deleted"
    And event 1 is "session::deleted" with {"session_id": "s1", "timestamp": 1000030}
    And event 1 carries session metadata {"owner": "u1"}
    When I call "session::get" with {"session_id": "s1"}
    Then the response is null
    When I call "session::list"
    Then the response is {"sessions": []}
    When I call "session::messages" with {"session_id": "s1"}
    Then the call fails with "session/not_found"
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response is null
    When I call "session::store::list-entries" with {"session_id": "s1"}
    Then the response is {"entries": []}
    When I call "session::store::get-active-leaf" with {"session_id": "s1"}
    Then the response is {"entry_id": null}

  # Prevents: a repeated delete firing a second deleted event or erroring.
  Scenario: a second delete answers false and fires nothing
    Given a session "s1"
    And I called "session::delete" with {"session_id": "s1"}
    When I call "session::delete" with {"session_id": "s1"}
    Then the response is {"deleted": false}
    And no events fired
    And no "session::deleted" event fired

  # Prevents: deleting an unknown id erroring or announcing a deletion that never happened.
  Scenario: deleting an unknown session answers false without an event
    Given a session "s1"
    When I call "session::delete" with {"session_id": "ghost"}
    Then the response is {"deleted": false}
    And no events fired
    When I call "session::list"
    Then the response ids at "sessions" are "s1"

  # Prevents: a re-created id resurrecting old entries, leaf, attachments, count or metadata.
  Scenario: re-ensuring a deleted id starts empty
    Given a session "s1" with metadata {"owner": "u1"}
    And "s1" has entries:
      | id | role      | text  |
      | e1 | user      | hi    |
      | e2 | assistant | hello |
    And I called "session::set-status" with {"session_id": "s1", "status": "working", "reason": "r"}
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::set-draft" with {"session_id": "s1", "draft": "d", "attachment_ids": ["a_001"]}
    And I called "session::delete" with {"session_id": "s1"}
    And the clock advances by 9 ms
    When I call "session::ensure" with {"session_id": "s1"}
    Then the response is:
      """
      {"session_id": "s1", "created": true, "meta": {"session_id": "s1", "title": "",
        "description": "", "status": "idle", "kind": "user", "created_at": 1000009,
        "updated_at": 1000009, "message_count": 0}}
      """
    And the events fired are "session::created"
    When I call "session::messages" with {"session_id": "s1"}
    Then the response is {"messages": []}
    When I call "session::list-attachments" with {"session_id": "s1"}
    Then the response is {"attachments": []}
    When I call "session::store::get-active-leaf" with {"session_id": "s1"}
    Then the response is {"entry_id": null}
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "e1"}
    Then the response is null

  # Prevents: delete cascading into forks (they are independent copies).
  Scenario: forks of a deleted session are untouched
    Given a session "src" with metadata {"owner": "u1"}
    And "src" has entries:
      | id | role      | text  |
      | e1 | user      | hi    |
      | e2 | assistant | hello |
    And I called "session::fork" with {"session_id": "src", "entry_id": "e2"}
    When I call "session::delete" with {"session_id": "src"}
    Then the response is {"deleted": true}
    And the events fired are "session::deleted"
    And event 1 is "session::deleted" with {"session_id": "src", "timestamp": 1000000}
    When I call "session::get" with {"session_id": "s_001"}
    Then the response contains {"meta": {"session_id": "s_001", "forked_from": "src", "message_count": 2, "metadata": {"owner": "u1"}}}
    When I call "session::messages" with {"session_id": "s_001"}
    Then the response field "messages" has 2 items
    And the response field "messages.1.message.content" is [{"type": "text", "text": "hello"}]

  # Prevents: one delete removing other sessions' data.
  Scenario: deleting one session leaves the others intact
    Given a session "a"
    And a session "b"
    And "b" has entries:
      | id | role | text |
      | e1 | user | hi   |
    And I called "session::put-attachment" with {"session_id": "b", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    When I call "session::delete" with {"session_id": "a"}
    Then the events fired are "session::deleted"
    When I call "session::list"
    Then the response ids at "sessions" are "b"
    When I call "session::messages" with {"session_id": "b"}
    Then the response ids at "messages" are "e1"
    When I call "session::list-attachments" with {"session_id": "b"}
    Then the "attachment_id" values at "attachments" are "a_001"

  # Prevents: a missing session_id being read as "" and silently answering false.
  Scenario: delete without a session_id is an invalid request
    When I call "session::delete" with {}
    Then the call fails with "session/invalid_request"
    And no events fired
