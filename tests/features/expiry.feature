@pure
Feature: session::set-expiry and the sweep
  A session may be given a time to live (an extension, issue 37): expires_at in milliseconds since
  the epoch, set by session::set-expiry (checked before anything is read), swept by
  session::sweep — which the worker runs every second and at start — as a delete.

  # Prevents: an expired session outliving its expires_at, or one swept early.
  Scenario: the sweep deletes a session once its expires_at has passed
    Given a session "s1" with metadata {"owner": "u1"}
    And a session "s2"
    When I call "session::set-expiry" with {"session_id": "s1", "expires_at": 1000500}
    Then the response is {"session_id": "s1", "expires_at": 1000500}
    And no events fired
    When I call "session::sweep"
    Then the response is {"expired": 0, "purged": 0}
    Given the clock advances by 500 ms
    When I call "session::sweep"
    Then the response is {"expired": 1, "purged": 0}
    And the events fired are "session::deleted"
    And event 1 carries session metadata {"owner": "u1"}
    When I call "session::get" with {"session_id": "s1"}
    Then the response is null
    And the store holds the sessions "s2"

  # Prevents: a cleared expiry still deleting the session.
  Scenario: null clears the expiry
    Given a session "s1"
    And I called "session::set-expiry" with {"session_id": "s1", "expires_at": 1000001}
    When I call "session::set-expiry" with {"session_id": "s1", "expires_at": null}
    Then the response is {"session_id": "s1", "expires_at": null}
    Given the clock advances by 5 ms
    When I call "session::sweep"
    Then the response is {"expired": 0, "purged": 0}
    When I call "session::lifecycle" with {"session_id": "s1"}
    Then the response is {"session_id": "s1", "expires_at": null, "trashed_at": null, "purge_at": null}

  # Prevents: a malformed expires_at accepted (a session that never expires, or expires at once).
  Scenario Outline: a malformed expires_at is refused and changes nothing
    Given a session "s1"
    And the store is remembered
    When I call "session::set-expiry" with {"session_id": "s1", "expires_at": <value>}
    Then the call fails with "session/invalid_request"
    And the error message contains "expires_at must be milliseconds since the epoch"
    And no events fired
    And the store is as remembered

    Examples:
      | value                  |
      | "2026-12-31"           |
      | -1                     |
      | 1.5                    |
      | 253402300800000        |
      | true                   |
      | {"at": 1}              |

  # Prevents: a missing expires_at read as "never", or an expiry set on an unknown session.
  Scenario: expires_at is required and the session must exist
    Given a session "s1"
    When I call "session::set-expiry" with {"session_id": "s1"}
    Then the call fails with "session/invalid_request"
    When I call "session::set-expiry" with {"session_id": "nope", "expires_at": 1}
    Then the call fails with "session/not_found"
    When I call "session::lifecycle" with {"session_id": "nope"}
    Then the response is null

  # Prevents: a trashed session that expires staying in the trash, or firing a second deleted.
  Scenario: a trashed session whose expiry passes is removed without a second event
    Given a session "s1"
    And I called "session::set-expiry" with {"session_id": "s1", "expires_at": 1000100}
    And I called "session::trash" with {"session_id": "s1"}
    And the clock advances by 100 ms
    When I call "session::sweep"
    Then the response is {"expired": 1, "purged": 0}
    And no events fired
    And the store holds the sessions ""

  # Prevents: a handler panic when the refused value's text is cut inside a character.
  Scenario: a long non-ASCII expires_at is refused, its echo cut at a character boundary
    Given a session "s1"
    When I call "session::set-expiry" with {"session_id": "s1", "expires_at": "ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé"}
    Then the call fails with "session/invalid_request"
    And the error message contains "expires_at must be milliseconds since the epoch"
