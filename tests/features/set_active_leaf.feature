@pure
Feature: session::set-active-leaf
  Moves the active leaf to any entry of the session (branch switch). Event-silent and
  updated_at-neutral.

  # Prevents: a branch switch firing events or bumping updated_at / message_count.
  Scenario: switching to an inner entry shortens the active path silently
    Given a session "s1"
    And a binding "added" on "session::message-added" with config {}
    And a binding "meta" on "session::meta-updated" with config {}
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | a    |
      | u2 | user      | q2   |
    And the clock advances by 500 ms
    When I call "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a1"}
    Then the response is {"active_leaf": "a1"}
    And no events fired
    And binding "added" received 3 events
    And binding "meta" received nothing
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, a1"
    When I call "session::get" with {"session_id": "s1"}
    Then the response contains {"meta": {"updated_at": 1000000, "message_count": 3}}

  # Prevents: set-active-leaf only accepting entries of the active path.
  Scenario: any branch's entry can become the leaf
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text | parent |
      | u1 | user      | q    |        |
      | a1 | assistant | a    |        |
      | b1 | assistant | b    | u1     |
    When I call "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a1"}
    Then the response is {"active_leaf": "a1"}
    When I call "session::messages-tail" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, a1"
    When I call "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a1"}
    Then the response is {"active_leaf": "a1"}
    And no events fired

  # Prevents: custom entries being refused as leaves (the path then ends at the bookkeeping entry).
  Scenario: a custom entry can be the leaf
    Given a session "s1"
    And "s1" has entries:
      | id | role  | text | custom_type |
      | u1 | user  | q    |             |
      | k1 | entry | 1    | bookmark    |
      | u2 | user  | q2   |             |
    When I call "session::set-active-leaf" with {"session_id": "s1", "entry_id": "k1"}
    Then the response is {"active_leaf": "k1"}
    When I call "session::messages" with {"session_id": "s1", "include_custom": true}
    Then the response ids at "messages" are "u1, k1"
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1"

  # Prevents: an unknown entry moving the leaf to nowhere (breaking every path read).
  Scenario: an unknown entry is entry_not_found and the leaf stays
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
      | u2 | user | q2   |
    When I call "session::set-active-leaf" with {"session_id": "s1", "entry_id": "nope"}
    Then the call fails with "session/entry_not_found"
    And no events fired
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, u2"

  # Prevents: a leaf being set on a session that does not exist (resurrecting it half-way).
  Scenario: an unknown session is not_found
    When I call "session::set-active-leaf" with {"session_id": "ghost", "entry_id": "u1"}
    Then the call fails with "session/not_found"
    When I call "session::get" with {"session_id": "ghost"}
    Then the response is null

  # Prevents: a request without entry_id clearing the leaf instead of being rejected.
  Scenario: entry_id is required
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    When I call "session::set-active-leaf" with {"session_id": "s1", "entry_id": null}
    Then the call fails with "session/invalid_request"
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1"

  # Prevents: a branch switch living only in memory (a restart putting the leaf back on the last append).
  Scenario: a switched leaf survives a restart and the next append chains from it
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text | parent |
      | u1 | user      | q    |        |
      | a1 | assistant | a    |        |
      | b1 | assistant | b    | u1     |
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a1"}
    When the store restarts
    And I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, a1"
    When I call "session::append" with {"session_id": "s1", "message": {"role": "user", "content": [], "timestamp": 1}}
    Then the response field "parent_id" is "a1"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 4
