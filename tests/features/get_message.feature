@pure
Feature: session::get-message
  One entry of any branch by id, or null. include_image_data:false blanks the bytes of images
  that have a stored original, at any nesting depth.

  # Prevents: unknown sessions or entries raising errors instead of reading as null.
  Scenario: unknown session or entry reads as null
    Given a session "s1"
    And "s1" has entries:
      | id | role | text |
      | u1 | user | q    |
    When I call "session::get-message" with {"session_id": "ghost", "entry_id": "u1"}
    Then the response is null
    And no events fired
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "ghost"}
    Then the response is null

  # Prevents: get-message being restricted to the active path.
  Scenario: an entry of an abandoned branch is returned whole
    Given a session "s1"
    And "s1" has entries:
      | id | role      | text | origin       |
      | u1 | user      | q    |              |
      | a1 | assistant | old  | {"turn": 1}  |
    And I called "session::set-active-leaf" with {"session_id": "s1", "entry_id": "u1"}
    And "s1" has entries:
      | id | role      | text |
      | a2 | assistant | new  |
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "a1"}
    Then the response is:
      """
      {"entry": {"kind": "message", "id": "a1", "parent_id": "u1", "timestamp": 1000000, "revision": 0,
        "origin": {"turn": 1},
        "message": {"role": "assistant", "content": [{"type": "text", "text": "old"}], "stop_reason": "end",
                    "model": "m", "provider": "p", "timestamp": 2}}}
      """

  # Prevents: a custom entry losing its stored origin or explicit null data in the full entry view.
  Scenario: a custom entry comes back as the full stored entry
    Given a session "s1"
    When I call "session::append" with {"session_id": "s1", "entry_id": "k1", "origin": {"src": "h"}, "custom": {"custom_type": "marker"}}
    And I call "session::get-message" with {"session_id": "s1", "entry_id": "k1"}
    Then the response is {"entry": {"kind": "custom", "id": "k1", "parent_id": null, "timestamp": 1000000, "revision": 0, "origin": {"src": "h"}, "custom_type": "marker", "data": null}}

  # Prevents: image elision blanking unlinked images, missing nested blocks, or mutating storage.
  Scenario: include_image_data false blanks only linked images, recursively, without touching storage
    Given a session "s1"
    And I called "session::append" with:
      """
      {"session_id": "s1", "entry_id": "m1", "message": {"role": "user", "timestamp": 1, "content": [
        {"type": "image", "mime": "image/png", "data": "AAAA", "attachment_id": "a_1"},
        {"type": "image", "mime": "image/png", "data": "BBBB"},
        {"type": "file", "attachment_id": "a_2", "name": "f.pdf", "mime": "application/pdf", "size": 3},
        {"type": "function_result", "function_call_id": "c1", "content": [
          {"type": "image", "mime": "image/jpeg", "data": "CCCC", "attachment_id": "a_3"},
          {"type": "function_result", "function_call_id": "c2", "is_error": true, "content": [
            {"type": "image", "mime": "image/gif", "data": "DDDD", "attachment_id": "a_4"},
            {"type": "image", "mime": "image/gif", "data": "EEEE"}]}]}]}}
      """
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "m1", "include_image_data": false}
    Then the response field "entry.message.content" is:
      """
      [{"type": "image", "mime": "image/png", "data": "", "attachment_id": "a_1"},
       {"type": "image", "mime": "image/png", "data": "BBBB"},
       {"type": "file", "attachment_id": "a_2", "name": "f.pdf", "mime": "application/pdf", "size": 3},
       {"type": "function_result", "function_call_id": "c1", "content": [
         {"type": "image", "mime": "image/jpeg", "data": "", "attachment_id": "a_3"},
         {"type": "function_result", "function_call_id": "c2", "is_error": true, "content": [
           {"type": "image", "mime": "image/gif", "data": "", "attachment_id": "a_4"},
           {"type": "image", "mime": "image/gif", "data": "EEEE"}]}]}]
      """
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "m1", "include_image_data": null}
    Then the response field "entry.message.content.0.data" is "AAAA"
    And the response field "entry.message.content.3.content.1.content.0.data" is "DDDD"
    When I call "session::get-message" with {"session_id": "s1", "entry_id": "m1"}
    Then the response field "entry.message.content.3.content.0.data" is "CCCC"

  # Prevents: a request without entry_id being answered (as null) instead of rejected as malformed.
  Scenario: entry_id is required
    Given a session "s1"
    When I call "session::get-message" with {"session_id": "s1"}
    Then the call fails with "session/invalid_request"
    And the error message contains "invalid request"
