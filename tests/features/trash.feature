@pure
Feature: session::trash, session::restore, session::list-trash
  Trash (an extension, issue 37) hides a session from every seed read and list while keeping all
  it holds; restore brings it back exactly as it was. To the seed's triggers a trash is a delete
  and a restore a creation. session::list-trash lists what is in the trash; the sweep purges it
  after trash_retention_secs.

  # Prevents: a restored session differing from what was trashed (meta, entries, leaf, attachments).
  # Its feed starts a new epoch: a replica takes a snapshot rather than replaying a delete.
  Scenario: trash then restore gives the session back byte for byte
    Given a session "s1" with metadata {"owner": "u1"}
    And "s1" has entries:
      | id | role      | text  |
      | e1 | user      | hi    |
      | e2 | assistant | hello |
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And the store is remembered
    And the clock advances by 10 ms
    When I call "session::trash" with {"session_id": "s1"}
    Then the response is {"trashed": true, "purge_at": 2593000010}
    And the events fired are "session::deleted"
    And event 1 carries session metadata {"owner": "u1"}
    When I call "session::restore" with {"session_id": "s1"}
    Then the response is {"restored": true}
    And the events fired are "session::created"
    And the store is as remembered, its feed aside
    When I call "session::lifecycle" with {"session_id": "s1"}
    Then the response is {"session_id": "s1", "expires_at": null, "trashed_at": null, "purge_at": null}

  # Prevents: a trashed session leaking through a seed read, a list, or an id-based read.
  Scenario: a trashed session is seen by no seed read and is listed only by list-trash
    Given a session "s1" with metadata {"owner": "u1"}
    And a session "s2"
    And "s1" has entries:
      | id | role | text |
      | e1 | user | hi   |
    And I called "session::put-attachment" with {"session_id": "s1", "name": "a.txt", "mime": "text/plain", "data": "aGVsbG8="}
    And I called "session::trash" with {"session_id": "s1"}
    When I call "session::get" with {"session_id": "s1"}
    Then the response is null
    When I call "session::list"
    Then the "session_id" values at "sessions" are "s2"
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "e1"}
    Then the response is null
    When I call "session::get-attachment" with {"session_id": "s1", "attachment_id": "a_001"}
    Then the response is null
    When I call "session::messages" with {"session_id": "s1"}
    Then the call fails with "session/not_found"
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 1}}
    Then the call fails with "session/not_found"
    When I call "session::list-trash"
    Then the response field "total" is 1
    And the "meta.session_id" values at "sessions" are "s1"
    When I call "session::list-trash" with {"metadata": {"owner": "u2"}}
    Then the response is {"sessions": [], "total": 0}
    When I call "session::lifecycle" with {"session_id": "s1"}
    Then the response is {"session_id": "s1", "expires_at": null, "trashed_at": 1000000, "purge_at": 2593000000}

  # Prevents: a re-created id overwriting a trashed session, or trash/restore of the wrong state.
  Scenario: trash and restore answer false where there is nothing to do, and ensure refuses a trashed id
    Given a session "s1"
    When I call "session::trash" with {"session_id": "nope"}
    Then the response is {"trashed": false}
    And no events fired
    When I call "session::restore" with {"session_id": "s1"}
    Then the response is {"restored": false}
    And no events fired
    Given I called "session::trash" with {"session_id": "s1"}
    When I call "session::trash" with {"session_id": "s1"}
    Then the response is {"trashed": false}
    When I call "session::ensure" with {"session_id": "s1"}
    Then the call fails with "session/invalid_request"
    And the error message contains "in the trash"
    When I call "session::delete" with {"session_id": "s1"}
    Then the response is {"deleted": false}
    When I call "session::restore" with {"session_id": "s1"}
    Then the response is {"restored": true}
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.session_id" is "s1"

  # Prevents: the trash never emptying, or purging before trash_retention_secs.
  Scenario: the sweep purges a trashed session after the trash retention, not before
    Given the trash retention is 60 seconds
    And a session "s1"
    And a session "s2"
    And I called "session::trash" with {"session_id": "s1"}
    And the clock advances by 59999 ms
    When I call "session::sweep"
    Then the response is {"expired": 0, "purged": 0}
    Given the clock advances by 1 ms
    When I call "session::sweep"
    Then the response is {"expired": 0, "purged": 1}
    And no events fired
    When I call "session::list-trash"
    Then the response is {"sessions": [], "total": 0}
    When I call "session::restore" with {"session_id": "s1"}
    Then the response is {"restored": false}
    And the store holds the sessions "s2"

  # Prevents: an erasure missing sessions in the trash (GDPR: every trace goes).
  Scenario: erase reaches trashed sessions
    Given a session "s1" with metadata {"owner": "u1"}
    And a session "s2" with metadata {"owner": "u1"}
    And I called "session::trash" with {"session_id": "s1"}
    When I call "session::erase" with {"metadata": {"owner": "u1"}}
    Then the response field "erased" is 2
    And the events fired are "session::deleted"
    And the store holds the sessions ""
    When I call "session::list-trash"
    Then the response is {"sessions": [], "total": 0}

  # Prevents: the trash or an expiry lost across a restart.
  Scenario: trash and expiry survive a restart
    Given a session "s1"
    And a session "s2"
    And I called "session::trash" with {"session_id": "s1"}
    And I called "session::set-expiry" with {"session_id": "s2", "expires_at": 5000000}
    When the store restarts
    And I call "session::list"
    Then the "session_id" values at "sessions" are "s2"
    When I call "session::lifecycle" with {"session_id": "s2"}
    Then the response field "expires_at" is 5000000
    When I call "session::restore" with {"session_id": "s1"}
    Then the response is {"restored": true}
