@pure
Feature: session::messages
  The active path (or a chosen branch) root-first as items, filtered by role, custom entries only
  on request, paged by an entry cursor or an after_entry_id watermark.

  # Prevents: ordering the transcript by timestamp or id instead of the parent chain.
  Scenario: items follow the parent chain, not timestamps or ids
    Given a session "s1"
    And the clock is at 5000000
    And "s1" has entries:
      | id | role | text |
      | z  | user | 1st  |
    And the clock is at 4000000
    And "s1" has entries:
      | id | role      | text |
      | m  | assistant | 2nd  |
    And the clock is at 3000000
    And "s1" has entries:
      | id | role | text |
      | a  | user | 3rd  |
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "z, m, a"
    And the response field "next_cursor" does not exist
    And no events fired

  # Prevents: optional message fields emitted as null (or required-null ones omitted) in items.
  Scenario: items keep the null-versus-omitted rules of every message shape
    Given a session "s1"
    And I called "session::append" with {"session_id": "s1", "entry_id": "u", "message": {"role": "user", "content": [{"type": "text", "text": "q"}], "timestamp": 1}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "a", "message": {"role": "assistant", "content": [{"type": "thinking", "text": "hm"}, {"type": "function_call", "id": "c1", "function_id": "f"}], "stop_reason": "function_call", "model": "m", "provider": "p", "timestamp": 2}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "r", "message": {"role": "function_result", "function_call_id": "c1", "function_id": "f", "content": [], "timestamp": 3}}
    And I called "session::append" with {"session_id": "s1", "entry_id": "n", "message": {"role": "custom", "custom_type": "notice", "content": [], "timestamp": 4}}
    When I call "session::messages" with {"session_id": "s1"}
    Then the response is:
      """
      {"messages": [
        {"entry_id": "u", "message": {"role": "user", "content": [{"type": "text", "text": "q"}], "timestamp": 1}},
        {"entry_id": "a", "message": {"role": "assistant", "content": [{"type": "thinking", "text": "hm"},
          {"type": "function_call", "id": "c1", "function_id": "f", "arguments": null}],
          "stop_reason": "function_call", "model": "m", "provider": "p", "timestamp": 2}},
        {"entry_id": "r", "message": {"role": "function_result", "function_call_id": "c1", "function_id": "f",
          "content": [], "details": null, "is_error": false, "timestamp": 3}},
        {"entry_id": "n", "message": {"role": "custom", "custom_type": "notice", "content": [], "timestamp": 4}}]}
      """

  # Prevents: custom entries leaking by default, or carrying origin / a message key when included.
  Scenario: custom entries appear only with include_custom, in place, without origin
    Given a session "s1"
    And "s1" has entries:
      | id | role  | text        | custom_type | origin       |
      | u1 | user  | q           |             | {"turn": 1}  |
      | k1 | entry | {"keep": 2} | compaction  | {"turn": 1}  |
      | u2 | user  | q2          |             |              |
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "u1, u2"
    When I call "session::messages" with {"session_id": "s1", "include_custom": null}
    Then the response ids at "messages" are "u1, u2"
    When I call "session::messages" with {"session_id": "s1", "include_custom": true}
    Then the response is:
      """
      {"messages": [
        {"entry_id": "u1", "message": {"role": "user", "content": [{"type": "text", "text": "q"}], "timestamp": 1}, "origin": {"turn": 1}},
        {"entry_id": "k1", "custom": {"custom_type": "compaction", "data": {"keep": 2}}},
        {"entry_id": "u2", "message": {"role": "user", "content": [{"type": "text", "text": "q2"}], "timestamp": 1}}]}
      """

  # Prevents: a roles filter letting custom entries through, or roles: [] meaning "all".
  Scenario: the roles filter selects message roles and always drops custom entries
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text | custom_type |
      | u1 | user      | q    |             |
      | a1 | assistant | a    |             |
      | k1 | entry     | 1    | bookmark    |
      | n1 | custom    | n    | notice      |
      | a2 | assistant | b    |             |
    When I call "session::messages" with {"session_id": "s1", "roles": ["assistant"]}
    Then the response ids at "messages" are "a1, a2"
    When I call "session::messages" with {"session_id": "s1", "roles": ["user", "custom"], "include_custom": true}
    Then the response ids at "messages" are "u1, n1"
    When I call "session::messages" with {"session_id": "s1", "roles": [], "include_custom": true}
    Then the response is {"messages": []}
    When I call "session::messages" with {"session_id": "s1", "roles": null, "include_custom": true}
    Then the response ids at "messages" are "u1, a1, k1, n1, a2"

  # Prevents: from_entry_id ignoring the chosen entry (returning the active path) or cutting the wrong end.
  Scenario: from_entry_id reads the branch that ends at any entry
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | a    |
      | u2 | user      | q2   |
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a1"}
    And "s1" has entries:
      | id | role | text |
      | u3 | user | alt  |
    When I call "session::messages" with {"session_id": "s1", "from_entry_id": "u2"}
    Then the response ids at "messages" are "u1, a1, u2"
    When I call "session::messages" with {"session_id": "s1", "from_entry_id": "a1"}
    Then the response ids at "messages" are "u1, a1"
    When I call "session::messages" with {"session_id": "s1", "from_entry_id": null}
    Then the response ids at "messages" are "u1, a1, u3"

  # Prevents: an unknown from_entry_id silently falling back to the active path.
  Scenario: an unknown from_entry_id is entry_not_found
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    When I call "session::messages" with {"session_id": "s1", "from_entry_id": "nope"}
    Then the call fails with "session/entry_not_found"

  # Prevents: paging that skips or repeats items, or a next_cursor on the last page.
  Scenario: cursor paging walks the path without gaps and ends without next_cursor
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | e1 | user      | 1    |
      | e2 | assistant | 2    |
      | e3 | user      | 3    |
      | e4 | assistant | 4    |
      | e5 | user      | 5    |
    When I call "session::messages" with {"session_id": "s1", "limit": 2}
    Then the response ids at "messages" are "e1, e2"
    When I call "session::messages" with {"session_id": "s1", "limit": 2} and the last next_cursor
    Then the response ids at "messages" are "e3, e4"
    When I call "session::messages" with {"session_id": "s1", "limit": 2} and the last next_cursor
    Then the response ids at "messages" are "e5"
    And the response field "next_cursor" does not exist

  # Prevents: a next_cursor pointing at an empty page when the last page is exactly full.
  Scenario: an exactly full last page has no next_cursor
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | e1 | user | 1    |
      | e2 | user | 2    |
    When I call "session::messages" with {"session_id": "s1", "limit": 2}
    Then the response ids at "messages" are "e1, e2"
    And the response field "next_cursor" does not exist

  # Prevents: limit handling ignoring the clamp (0 → 1, above max → max) or the configured default.
  Scenario: limits are clamped and default to the configured page size
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | e1 | user | 1    |
      | e2 | user | 2    |
      | e3 | user | 3    |
      | e4 | user | 4    |
    And the default list limit is 2
    And the max list limit is 3
    When I call "session::messages" with {"session_id": "s1", "limit": 0}
    Then the response ids at "messages" are "e1"
    When I call "session::messages" with {"session_id": "s1", "limit": 100}
    Then the response ids at "messages" are "e1, e2, e3"
    When I call "session::messages" with {"session_id": "s1"}
    Then the response ids at "messages" are "e1, e2"
    When I call "session::messages" with {"session_id": "s1"} and the last next_cursor
    Then the response ids at "messages" are "e3, e4"
    And the response field "next_cursor" does not exist

  # Prevents: after_entry_id being inclusive, or overriding an explicit cursor.
  Scenario: after_entry_id returns strictly later items and is ignored when a cursor is sent
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | e1 | user | 1    |
      | e2 | user | 2    |
      | e3 | user | 3    |
      | e4 | user | 4    |
    When I call "session::messages" with {"session_id": "s1", "after_entry_id": "e2"}
    Then the response ids at "messages" are "e3, e4"
    When I call "session::messages" with {"session_id": "s1", "after_entry_id": "e4"}
    Then the response is {"messages": []}
    When I call "session::messages" with {"session_id": "s1", "limit": 1}
    And I call "session::messages" with {"session_id": "s1", "after_entry_id": "e3"} and the last next_cursor
    Then the response ids at "messages" are "e2, e3, e4"

  # Prevents: watermarks that are not on the filtered path silently restarting from the top.
  Scenario Outline: an after_entry_id that is not on the filtered path is invalid_cursor
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text | custom_type |
      | u1 | user      | q    |             |
      | k1 | entry     | 1    | bookmark    |
      | a1 | assistant | a    |             |
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "u1"}
    And "s1" has entries:
      | id | role      | text |
      | a2 | assistant | alt  |
    When I call "session::messages" with <payload>
    Then the call fails with "session/invalid_cursor"

    Examples:
      | payload                                                                  |
      | {"session_id": "s1", "after_entry_id": "a1"}                             |
      | {"session_id": "s1", "after_entry_id": "nope"}                           |
      | {"session_id": "s1", "after_entry_id": "k1"}                             |
      | {"session_id": "s1", "after_entry_id": "u1", "roles": ["assistant"]}     |

  # Prevents: a cursor from another filter or an abandoned branch being accepted (well-formed {"id":"a1"} cursor).
  Scenario: a cursor that is not on the current filtered path is invalid_cursor
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text |
      | u1 | user      | q    |
      | a1 | assistant | a    |
      | u2 | user      | q2   |
    When I call "session::messages" with {"session_id": "s1", "limit": 2}
    And I call "session::messages" with {"session_id": "s1", "roles": ["user"]} and the last next_cursor
    Then the call fails with "session/invalid_cursor"
    When I call "session::set-active-leaf" with {"session_id": "s1", "entry_id": "u1"}
    And I call "session::messages" with {"session_id": "s1", "cursor": "eyJpZCI6ImExIn0="}
    Then the call fails with "session/invalid_cursor"
    When I call "session::messages" with {"session_id": "s1", "from_entry_id": "u2", "cursor": "eyJpZCI6ImExIn0="}
    Then the response ids at "messages" are "u2"

  # Prevents: malformed cursors crashing or being treated as "start from the top".
  Scenario Outline: a malformed cursor is invalid_cursor
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    When I call "session::messages" with {"session_id": "s1", "cursor": "<cursor>"}
    Then the call fails with "session/invalid_cursor"

    Examples:
      | cursor       |
      | not base64!! |
      | aGVsbG8=     |
      | e30=         |

  # Prevents: a session without a leaf erroring, or validating anchors it has nothing to match against.
  Scenario: a session with no entries returns an empty page without next_cursor
    Given a session "s1"
    When I call "session::messages" with {"session_id": "s1"}
    Then the response is {"messages": []}
    When I call "session::messages" with {"session_id": "s1", "after_entry_id": "whatever", "include_custom": true}
    Then the response is {"messages": []}
    When I call "session::messages" with {"session_id": "s1", "cursor": "garbage"}
    Then the response is {"messages": []}

  # Prevents: reads of unknown sessions returning an empty page, or later checks overtaking earlier ones.
  Scenario: check order is session, then from_entry_id, then the cursor
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    When I call "session::messages" with {"session_id": "ghost", "from_entry_id": "nope", "cursor": "garbage"}
    Then the call fails with "session/not_found"
    When I call "session::messages" with {"session_id": "s1", "from_entry_id": "nope", "cursor": "garbage"}
    Then the call fails with "session/entry_not_found"

  # Prevents: a negative limit being wrapped or clamped instead of rejected as a shape error.
  Scenario: a negative limit is a shape error
    Given a session "s1"
    When I call "session::messages" with {"session_id": "s1", "limit": -1}
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"

  # Prevents: image elision missing in items, or applied when the reader asked for the bytes.
  Scenario: include_image_data false blanks linked images in items
    Given a session "s1"
    And I called "session::append" with {"session_id": "s1", "message": {"role": "user", "timestamp": 1, "content": [{"type": "image", "mime": "image/png", "data": "AAAA", "attachment_id": "a_1"}, {"type": "image", "mime": "image/png", "data": "BBBB"}]}}
    When I call "session::messages" with {"session_id": "s1", "include_image_data": false}
    Then the response field "messages.0.message.content" is [{"type": "image", "mime": "image/png", "data": "", "attachment_id": "a_1"}, {"type": "image", "mime": "image/png", "data": "BBBB"}]
    When I call "session::messages" with {"session_id": "s1"}
    Then the response field "messages.0.message.content.0.data" is "AAAA"
