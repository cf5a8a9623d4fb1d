@pure
Feature: Branching
  A branch switch followed by an append creates a sibling branch; the abandoned branch stays
  readable by id and by branch view, and every entry keeps counting.

  Background:
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | a    |
      | u2 | user      | q2   |
      | a2 | assistant | a2   |

  # Prevents: appends after a switch chaining onto the old leaf instead of the switched-to entry.
  Scenario: an append after a branch switch creates a sibling branch
    Given I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a1"}
    When I call "session::append" with {"session_id": "s1", "entry_id": "u3", "message": {"role": "user", "content": [{"type": "text", "text": "other"}], "timestamp": 1}}
    Then the response is {"entry_id": "u3", "parent_id": "a1", "timestamp": 1000000}
    And event 1 is "session::message-added" containing {"entry_id": "u3", "parent_id": "a1"}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, a1, u3"
    When I call "session::get" with {"session_id": "s1"}
    Then the response field "meta.message_count" is 5

  # Prevents: the abandoned branch becoming unreachable (or being deleted) after a branch switch.
  Scenario: the abandoned branch stays readable via get-message and from_entry_id
    Given I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a1"}
    And "s1" has entries:
      | id | role | text  |
      | u3 | user | other |
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "a2"}
    Then the response is {"entry": {"kind": "message", "id": "a2", "parent_id": "u2", "timestamp": 1000000, "revision": 0, "message": {"role": "assistant", "content": [{"type": "text", "text": "a2"}], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}}}
    When I call "session::messages" with {"session_id": "s1", "from_entry_id": "a2"}
    Then the response ids at "messages" are "u1, a1, u2, a2"
    When I call "session::messages-tail" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, a1, u3"

  # Prevents: switching back to the old branch losing entries of either branch.
  Scenario: switching back restores the old branch and keeps the new one
    Given I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a1"}
    And "s1" has entries:
      | id | role | text  |
      | u3 | user | other |
    And the clock advances by 50 ms
    When I call "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a2"}
    Then no events fired
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, a1, u2, a2"
    When I call "session::messages" with {"session_id": "s1", "from_entry_id": "u3"}
    Then the response ids at "messages" are "u1, a1, u3"
    When I call "session::get" with {"session_id": "s1"}
    Then the response contains {"meta": {"updated_at": 1000000, "message_count": 5}}

  # Prevents: append-many ignoring a branch switch (the batch must start from the switched-to entry).
  Scenario: append-many after a switch also branches
    Given I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "u1"}
    When I call "session::append-many" with {"session_id": "s1", "messages": [{"role": "assistant", "content": [], "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}]}
    Then event 1 is "session::message-added" containing {"entry_id": "e_001", "parent_id": "u1"}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, e_001"

  # Prevents: watermarks from the abandoned branch being honoured after a switch (callers must reload).
  Scenario: anchors from the abandoned branch are invalid after a switch
    Given I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a1"}
    When I call "session::messages" with {"session_id": "s1", "after_entry_id": "u2"}
    Then the call fails with "session/invalid_cursor"
    When I call "session::messages-tail" with {"session_id": "s1", "before_entry_id": "a2"}
    Then the call fails with "session/invalid_cursor"
    When I call "session::messages" with {"session_id": "s1", "after_entry_id": "u1"}
    Then the response ids at "messages" are "a1"
