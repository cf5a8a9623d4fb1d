@pure
Feature: session::messages-range
  Whole entries of the (unfiltered) active path, by inclusive span or by an id list, paged by an
  entry cursor. Never elided: this is how a reader swaps placeholders for content.

  Background:
    Given a session "s1"
    And "s1" has entries:
      | id | role            | text | calls | answers | custom_type | origin      |
      | u1 | user            | go   |       |         |             | {"turn": 1} |
      | a1 | assistant       |      | c1    |         |             |             |
      | r1 | function_result | o1   |       | c1      |             |             |
      | k1 | entry           | {}   |       |         | compaction  | {"turn": 1} |
      | a2 | assistant       |      | c2    |         |             |             |
      | r2 | function_result | o2   |       | c2      |             |             |
      | a3 | assistant       | done |       |         |             |             |
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "a2"}
    And "s1" has entries:
      | id | role            | text | answers |
      | x2 | function_result | alt  | c2      |
      | x3 | assistant       | alt  |         |

  # Prevents: spans that are not inclusive, skip custom entries, or come back elided.
  Scenario: a from/to span returns every entry between them, inclusive and whole
    When I call "session::messages-range" with {"session_id": "s1", "from_entry_id": "a1", "to_entry_id": "a2"}
    Then the response is:
      """
      {"messages": [
        {"entry_id": "a1", "message": {"role": "assistant", "content": [
          {"type": "function_call", "id": "c1", "function_id": "tool", "arguments": {"q": "c1"}}],
          "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}},
        {"entry_id": "r1", "message": {"role": "function_result", "function_call_id": "c1", "function_id": "tool",
          "content": [{"type": "text", "text": "o1"}], "details": {"raw": "o1"}, "is_error": false, "timestamp": 3}},
        {"entry_id": "k1", "custom": {"custom_type": "compaction", "data": {}}},
        {"entry_id": "a2", "message": {"role": "assistant", "content": [
          {"type": "function_call", "id": "c2", "function_id": "tool", "arguments": {"q": "c2"}}],
          "stop_reason": "end", "model": "m", "provider": "p", "timestamp": 2}}]}
      """
    And no events fired
    When I call "session::messages-range" with {"session_id": "s1", "from_entry_id": "u1", "to_entry_id": "u1", "entry_ids": null}
    Then the response is {"messages": [{"entry_id": "u1", "origin": {"turn": 1}, "message": {"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 1}}]}

  # Prevents: id lists returned in request order or with duplicates.
  Scenario: entry_ids come back in path order with duplicates folded
    When I call "session::messages-range" with {"session_id": "s1", "entry_ids": ["x3", "u1", "k1", "u1", "x2"]}
    Then the response ids at "messages" are "u1, k1, x2, x3"
    And the elided items at "messages" are ""
    When I call "session::messages-range" with {"session_id": "s1", "entry_ids": []}
    Then the response is {"messages": []}

  # Prevents: a malformed selector being guessed at instead of rejected.
  Scenario Outline: anything but exactly one selector form is invalid_request
    When I call "session::messages-range" with <payload>
    Then the call fails with "session/invalid_request"
    And no events fired

    Examples:
      | payload                                                                                   |
      | {"session_id": "s1"}                                                                      |
      | {"session_id": "s1", "from_entry_id": "u1"}                                               |
      | {"session_id": "s1", "to_entry_id": "a2"}                                                 |
      | {"session_id": "s1", "to_entry_id": "a2", "entry_ids": ["u1"]}                            |
      | {"session_id": "s1", "from_entry_id": "u1", "to_entry_id": "a2", "entry_ids": ["u1"]}     |
      | {"session_id": "s1", "from_entry_id": null, "to_entry_id": null, "entry_ids": null}      |
      | {"session_id": "s1", "from_entry_id": "nope"}                                             |

  # Prevents: selector checks running before the session check.
  Scenario: an unknown session is not_found before the selector checks
    When I call "session::messages-range" with {"session_id": "ghost"}
    Then the call fails with "session/not_found"
    When I call "session::messages-range" with {"session_id": "ghost", "entry_ids": ["u1"]}
    Then the call fails with "session/not_found"

  # Prevents: conflating ids that exist nowhere with ids on another branch (or checking ids out of order).
  Scenario Outline: unknown ids are entry_not_found, ids on another branch are invalid_cursor
    When I call "session::messages-range" with <payload>
    Then the call fails with "<code>"

    Examples:
      | payload                                                                  | code                    |
      | {"session_id": "s1", "from_entry_id": "nope", "to_entry_id": "a2"}       | session/entry_not_found |
      | {"session_id": "s1", "from_entry_id": "u1", "to_entry_id": "nope"}       | session/entry_not_found |
      | {"session_id": "s1", "from_entry_id": "u1", "to_entry_id": "a3"}         | session/invalid_cursor  |
      | {"session_id": "s1", "from_entry_id": "r2", "to_entry_id": "a2"}         | session/invalid_cursor  |
      | {"session_id": "s1", "entry_ids": ["u1", "nope"]}                        | session/entry_not_found |
      | {"session_id": "s1", "entry_ids": ["a3", "nope"]}                        | session/invalid_cursor  |
      | {"session_id": "s1", "entry_ids": ["nope", "a3"]}                        | session/entry_not_found |

  # Prevents: a reversed span being silently swapped or returned empty.
  Scenario: a reversed span is invalid_request
    When I call "session::messages-range" with {"session_id": "s1", "from_entry_id": "a2", "to_entry_id": "a1"}
    Then the call fails with "session/invalid_request"

  # Prevents: range paging skipping entries or issuing a cursor after the last page.
  Scenario: cursor paging over the selection
    When I call "session::messages-range" with {"session_id": "s1", "from_entry_id": "u1", "to_entry_id": "x3", "limit": 2}
    Then the response ids at "messages" are "u1, a1"
    When I call "session::messages-range" with {"session_id": "s1", "from_entry_id": "u1", "to_entry_id": "x3", "limit": 2} and the last next_cursor
    Then the response ids at "messages" are "r1, k1"
    When I call "session::messages-range" with {"session_id": "s1", "from_entry_id": "u1", "to_entry_id": "x3", "limit": 2} and the last next_cursor
    Then the response ids at "messages" are "a2, x2"
    When I call "session::messages-range" with {"session_id": "s1", "from_entry_id": "u1", "to_entry_id": "x3", "limit": 2} and the last next_cursor
    Then the response ids at "messages" are "x3"
    And the response field "next_cursor" does not exist

  # Prevents: a cursor from another selection (or a malformed one) being accepted.
  Scenario: a cursor outside the selection or malformed is invalid_cursor
    When I call "session::messages-range" with {"session_id": "s1", "entry_ids": ["u1", "a1", "x3"], "limit": 1}
    Then the response ids at "messages" are "u1"
    When I call "session::messages-range" with {"session_id": "s1", "entry_ids": ["a1", "x3"]} and the last next_cursor
    Then the call fails with "session/invalid_cursor"
    When I call "session::messages-range" with {"session_id": "s1", "entry_ids": ["u1"], "cursor": "%%%"}
    Then the call fails with "session/invalid_cursor"

  # Prevents: range reading the stale branch instead of the current active path.
  Scenario: the range follows the current active path
    When I call "session::messages-tail" with {"session_id": "s1", "limit": 2}
    Then the response ids at "messages" are "a2, x2, x3"
    When I call "session::messages-range" with {"session_id": "s1", "from_entry_id": "a1", "to_entry_id": "x2"}
    Then the response ids at "messages" are "a1, r1, k1, a2, x2"
    And the elided items at "messages" are ""
    And the response field "messages.1.message.content" is [{"type": "text", "text": "o1"}]

  # Prevents: image elision missing from range items.
  Scenario: include_image_data false blanks linked images
    Given I called "session::append" with {"session_id": "s1", "entry_id": "img", "message": {"role": "user", "timestamp": 1, "content": [{"type": "image", "mime": "image/png", "data": "AAAA", "attachment_id": "a_1"}, {"type": "image", "mime": "image/png", "data": "BBBB"}]}}
    When I call "session::messages-range" with {"session_id": "s1", "entry_ids": ["img"], "include_image_data": false}
    Then the response field "messages.0.message.content" is [{"type": "image", "mime": "image/png", "data": "", "attachment_id": "a_1"}, {"type": "image", "mime": "image/png", "data": "BBBB"}]
    When I call "session::messages-range" with {"session_id": "s1", "entry_ids": ["img"]}
    Then the response field "messages.0.message.content.0.data" is "AAAA"

  # Prevents: range applying the tail's run collapse (placeholders must be swappable for whole entries).
  Scenario: entries the tail elides come back whole from the range
    Given a session "s2"
    And "s2" has entries:
      | id | role            | text | calls | answers |
      | a1 | assistant       |      | c1    |         |
      | r1 | function_result | o1   |       | c1      |
      | a2 | assistant       |      | c2    |         |
      | r2 | function_result | o2   |       | c2      |
    When I call "session::messages-tail" with {"session_id": "s2"}
    Then the elided items at "messages" are "a1, r1"
    When I call "session::messages-range" with {"session_id": "s2", "from_entry_id": "a1", "to_entry_id": "r2"}
    Then the response ids at "messages" are "a1, r1, a2, r2"
    And the elided items at "messages" are ""
    And the response field "messages.0.message.content.0.arguments" is {"q": "c1"}
    And the response field "messages.1.message" is {"role": "function_result", "function_call_id": "c1", "function_id": "tool", "content": [{"type": "text", "text": "o1"}], "details": {"raw": "o1"}, "is_error": false, "timestamp": 3}
